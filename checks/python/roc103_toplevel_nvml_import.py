from __future__ import annotations

import ast

from rocmlint.fixers.python_gate import import_guard_edit
from rocmlint.model import Applicability, Fix
from rocmlint.python.imports import imported_modules, runs_at_import
from rocmlint.rule import Example, Rule

NVML_MODULES = frozenset({"pynvml", "py3nvml", "nvidia_smi"})


class TopLevelNvmlImport(Rule):
    """NVIDIA Management Library bindings imported unconditionally at module level.

    ## What it does
    Finds module-level `import pynvml`, `from pynvml import ...` (also `py3nvml` and
    `nvidia_smi`) that are not inside a `try`/`except ImportError` (or `except Exception`)
    and not under a ROCm gate. Imports inside functions, under `if TYPE_CHECKING:`, in a
    script's `if __name__ == "__main__":` block (importing the module never runs it) and
    already guarded imports are fine.

    ## Why is this bad?
    ROCm machines have no NVML: the package is missing (`ModuleNotFoundError` at import
    time takes the whole module, often a library's `__init__`, down with it) or installed
    but failing at `nvmlInit()`. A module that only uses NVML for optional telemetry
    should not stop working on AMD GPUs.

    ## Example
    ```python
    import pynvml
    ```
    Use instead:
    ```python
    try:
        import pynvml
    except ImportError:
        pynvml = None
    ```

    ## Fix safety
    Safe: on NVIDIA machines with NVML installed the import succeeds exactly as before;
    where it is missing the module now loads and binds the name to `None` (code using it
    should check). Every name a `from` import binds is set to `None`. Star imports and
    lines shared with other statements are reported without a fix.

    ## References
    - https://github.com/pytorch/pytorch/issues/133259
    """

    code = "ROC103"
    name = "toplevel-nvml-import"
    message = "module-level `{module}` import breaks importing this module on ROCm; guard it"
    language = "python"
    pattern = r"nv(?:ml|idia_smi)"  # anchors inside the module name; the rule finds the import
    fix_applicability = Applicability.SAFE

    valid = (
        "try:\n    import pynvml\nexcept ImportError:\n    pynvml = None\n",
        "import contextlib\nwith contextlib.suppress(ImportError):\n    import pynvml\n",
        "def gpu_memory():\n    import pynvml\n    pynvml.nvmlInit()\n",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pynvml\n",
        "import torch\nif not torch.version.hip:\n    import pynvml\n",
        "import pynvml_utils_doc  # a different module\n",
        "def used_memory():\n    return 0\n\n\nif __name__ == '__main__':\n    import pynvml\n    pynvml.nvmlInit()\n",
    )
    invalid = (
        Example(
            "import os\nimport pynvml\n\nHANDLE = None\n",
            expected="import os\ntry:\n    import pynvml\nexcept ImportError:\n    pynvml = None\n\nHANDLE = None\n",
        ),
        Example(
            "from pynvml import nvmlInit, nvmlDeviceGetCount as device_count\n",
            expected="try:\n    from pynvml import nvmlInit, nvmlDeviceGetCount as device_count\n"
                     "except ImportError:\n    nvmlInit = None\n    device_count = None\n",
        ),
        Example(
            "import sys\nif sys.platform == 'linux':\n    import py3nvml.py3nvml as nvml\n",
            expected="import sys\nif sys.platform == 'linux':\n    try:\n        import py3nvml.py3nvml as nvml\n"
                     "    except ImportError:\n        nvml = None\n",
        ),
    )

    def check(self, ctx) -> None:
        for hit in ctx.hits():
            path = ctx.node_path(hit.end - 1)
            stmt = ctx.statement_of(path)
            if not isinstance(stmt, (ast.Import, ast.ImportFrom)):
                continue
            module = self._nvml_module(stmt)
            if module is None:
                continue
            stmt_path = path[: path.index(stmt) + 1]
            if not runs_at_import(stmt_path) or ctx.gated(ctx.span_of(stmt).start):
                continue
            # `import os, pynvml`: guarding it would hide a missing `os` too; no fix.
            mixed = isinstance(stmt, ast.Import) and any(
                a.name.split(".")[0] not in NVML_MODULES for a in stmt.names)
            edit = None if mixed else import_guard_edit(ctx, stmt)
            fix = Fix((edit,), f"Guard the `{module}` import") if edit else None
            ctx.report(ctx.node_span(stmt), self.message.format(module=module), fix)

    @staticmethod
    def _nvml_module(stmt) -> str | None:
        for name in imported_modules(stmt):
            if name.split(".")[0] in NVML_MODULES:
                return name.split(".")[0]
        return None
