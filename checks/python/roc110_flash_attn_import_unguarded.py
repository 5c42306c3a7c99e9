from __future__ import annotations

import ast
import os

from rocmlint.fixers.python_gate import bound_names, import_guard_edit, statement_lines
from rocmlint.lazy_re import lazy_compile
from rocmlint.manifest.kinds import TEST_PATH

from rocmlint.model import Applicability, Edit, Fix
from rocmlint.python.imports import imported_modules, runs_at_import
from rocmlint.rule import Example, Rule

# What the SDPA fallback accepts of `flash_attn_func(q, k, v, dropout_p, softmax_scale, causal)`.
_FALLBACK_PARAMETERS = ("q", "k", "v", "dropout_p", "softmax_scale", "causal")
# Tests, benchmarks and examples (`tests/`, `bench/`, `examples/`, `test_*.py`, `benchmark_*.py`):
# programs that check, measure or show flash-attn itself, so it is their dependency on every platform.
_TEST_OR_BENCHMARK = lazy_compile(TEST_PATH + r"|(?:^|/)(?:bench|benchmarks?|benchmarking|examples?)/"
                                                r"|(?:^|/)(?:bench_[^/]*|benchmark_[^/]*)\.py$")
_FALLBACK = '''{indent}except ImportError:  # no flash-attn build (common on ROCm): PyTorch SDPA, same (batch, seq, heads, dim) layout
{indent}{unit}def {name}(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False):
{indent}{unit}{unit}import torch.nn.functional as F

{indent}{unit}{unit}gqa = {{"enable_gqa": True}} if k.shape[2] != q.shape[2] else {{}}
{indent}{unit}{unit}out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
{indent}{unit}{unit}                                     dropout_p=dropout_p, scale=softmax_scale, is_causal=causal, **gqa)
{indent}{unit}{unit}return out.transpose(1, 2)'''


class FlashAttnImportUnguarded(Rule):
    """`flash_attn` imported at module level with no fallback.

    ## What it does
    Finds module-level `import flash_attn` / `from flash_attn... import ...` that are not
    inside a `try`/`except ImportError` and not under a ROCm gate (`if not IS_ROCM:`).
    Imports inside functions and under `if TYPE_CHECKING:` are fine, and so is the
    flash-attention project importing itself, a module named for AMD (`layers/amd/`,
    `rocm_attention.py`), which means the ROCm build, and tests, benchmarks and examples
    (`tests/`, `bench/`, `examples/`, `test_*.py`) and scripts nothing in the project imports,
    which check, measure, show or run with flash-attn itself. A project whose own packaging
    requires flash-attn (a required dependency of its top-level pyproject.toml, setup.py,
    setup.cfg or requirements.txt, and of its ROCm requirement file if it has one) needs it
    everywhere: its imports are quiet.

    ## Why is this bad?
    On ROCm flash-attn is a separate build (ROCm/flash-attention, or the upstream CK
    backend built from source), often absent and with fewer features. A hard import makes
    the whole module, often a model file or a package `__init__`, fail to import on AMD
    machines. AMD's porting guides wrap it in a fallback chain: AMD's aiter kernels, then
    flash-attn, then PyTorch's `scaled_dot_product_attention`.

    ## Example
    ```python
    from flash_attn import flash_attn_func
    ```
    Use instead:
    ```python
    try:
        from flash_attn import flash_attn_func
    except ImportError:
        def flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False):
            ...  # torch.nn.functional.scaled_dot_product_attention on (B, H, S, D) views
    ```

    ## Fix safety
    Unsafe. Where the module imports only `flash_attn_func` and calls it only with
    `q, k, v, dropout_p, softmax_scale, causal`, the import is guarded and falls back to
    `torch.nn.functional.scaled_dot_product_attention` (transposing flash-attn's
    `(batch, seq, heads, dim)` layout; GQA through `enable_gqa`, PyTorch 2.5+). Where
    flash-attn is installed nothing changes; where it is not, numerics differ slightly
    from flash-attn's kernels. Other imports get a suggested guard (`name = None`), shown
    but not applied: code calling the names must then choose another path.

    ## References
    - https://rocm.docs.amd.com/en/latest/how-to/llm-fine-tuning-optimization/model-acceleration-libraries.html
    - https://github.com/Dao-AILab/flash-attention#amd-rocm-support
    """

    code = "ROC110"
    name = "flash-attn-import-unguarded"
    message = "module-level `{module}` import fails where flash-attn is not built (often on ROCm); add a fallback"
    language = "python"
    pattern = r"flash_attn"
    fix_applicability = Applicability.UNSAFE

    valid = (
        "try:\n    from flash_attn import flash_attn_func\nexcept ImportError:\n    flash_attn_func = None\n",
        "import torch\nIS_ROCM = torch.version.hip is not None\nif not IS_ROCM:\n    import flash_attn\n",
        "def attention(q, k, v):\n    from flash_attn import flash_attn_func\n    return flash_attn_func(q, k, v)\n",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import flash_attn\n",
        "from transformers.utils import is_flash_attn_2_available\n"
        "if is_flash_attn_2_available():\n    from flash_attn import flash_attn_varlen_func\n",
        "from importlib.metadata import PackageNotFoundError, version\n"
        "try:\n    version('flash-attn')\nexcept PackageNotFoundError:\n    flash_attn_func = None\n"
        "else:\n    from flash_attn import flash_attn_func\n",
    )
    invalid = (
        Example(
            "import torch\nfrom flash_attn import flash_attn_func\n\n\n"
            "def attend(q, k, v):\n    return flash_attn_func(q, k, v, causal=True)\n",
            expected="import torch\ntry:\n    from flash_attn import flash_attn_func\n"
                     + _FALLBACK.format(indent="", unit="    ", name="flash_attn_func")
                     + "\n\n\ndef attend(q, k, v):\n    return flash_attn_func(q, k, v, causal=True)\n",
            unsafe=True,
        ),
        Example("from flash_attn.flash_attn_interface import flash_attn_varlen_func\n"),
        Example("import flash_attn\n\nprint(flash_attn.__version__)\n"),
    )

    def check(self, ctx) -> None:
        from rocmlint.manifest.kinds import named_for_rocm

        if self._project_provides_flash_attn(ctx) or named_for_rocm(ctx.path):
            return  # an AMD module (`layers/amd/attn.py`) imports the ROCm flash-attn build on purpose
        model = ctx.python_model
        if model is not None and model.covers(ctx.path) and model.required_everywhere("flash-attn"):
            return  # the project requires flash-attn on every platform: on ROCm, its ROCm build
        rel = model.relative(ctx.path) if model is not None else None
        if _TEST_OR_BENCHMARK.search((rel or ctx.path).replace(os.sep, "/")):
            return
        if model is not None and self._program(ctx) and not model.imported_anywhere(ctx.path):
            return  # a script nothing imports: flash-attn is what it runs, not a module others load
        seen = set()
        for hit in ctx.hits():
            path = ctx.node_path(hit.end - 1)
            stmt = ctx.statement_of(path)
            if not isinstance(stmt, (ast.Import, ast.ImportFrom)) or id(stmt) in seen:
                continue
            seen.add(id(stmt))
            module = _flash_attn_module(stmt)
            if module is None:
                continue
            stmt_path = path[: path.index(stmt) + 1]
            if not runs_at_import(stmt_path, decided_if_conditional=True) or ctx.gated(ctx.span_of(stmt).start):
                continue
            ctx.report(ctx.node_span(stmt), self.message.format(module=module), self._fix(ctx, stmt))

    @staticmethod
    def _program(ctx) -> bool:
        """The module runs as a program: `if __name__ == "__main__":` or statements that do
        work at module level (calls, loops), not only definitions."""
        for stmt in ctx.tree.body:
            if isinstance(stmt, ast.If) and "__main__" in ctx.source_of(stmt.test):
                return True
            if isinstance(stmt, (ast.For, ast.While, ast.With)) or (
                    isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
                return True
        return False

    @staticmethod
    def _project_provides_flash_attn(ctx) -> bool:
        """flash-attention's own sources, tests and benchmarks import the package they build
        (a `flash_attn/` package or `flash_attn_interface.py` beside a folder on the way up);
        a module named after it (`flash_attention.py`, `attn_hijack_flash.py`) is a wrapper
        whose importers decide whether to load it."""
        path = ctx.path.replace(os.sep, "/")
        if "flash" in path.rsplit("/", 1)[-1].lower() or "/flash_attn/" in f"/{path}":
            return True
        folder = os.path.dirname(os.path.abspath(ctx.path))
        stop = ctx.project.root if ctx.project is not None else None
        for _ in range(8):
            if (os.path.isfile(os.path.join(folder, "flash_attn", "__init__.py"))
                    or os.path.isfile(os.path.join(folder, "hopper", "flash_attn_interface.py"))):
                return True
            parent = os.path.dirname(folder)
            if parent == folder or (stop is not None and os.path.samefile(folder, stop)):
                break
            folder = parent
        return False

    def _fix(self, ctx, stmt) -> Fix | None:
        names = bound_names(stmt)
        if (isinstance(stmt, ast.ImportFrom) and stmt.module == "flash_attn" and names and len(names) == 1
                and stmt.names[0].name == "flash_attn_func" and self._calls_fit(ctx, names[0])):
            lines = statement_lines(ctx, stmt)
            if lines is not None:
                text = ctx.text(lines)
                indent = text[: len(text) - len(text.lstrip(" \t"))]
                unit = "\t" if "\t" in indent else "    "
                fallback = _FALLBACK.format(indent=indent, unit=unit, name=names[0])
                edit = Edit(lines, f"{indent}try:\n{indent}{unit}{text[len(indent):]}\n{fallback}")
                return Fix((edit,), "Fall back to PyTorch SDPA when flash-attn is missing", Applicability.UNSAFE)
        guard = import_guard_edit(ctx, stmt)
        return Fix((guard,), "Guard the import (callers must handle None)", Applicability.DISPLAY_ONLY) if guard else None

    @staticmethod
    def _calls_fit(ctx, name: str) -> bool:
        """Every use of ``name`` is a call the SDPA fallback can serve."""
        for load in ctx.loads_of(name, ctx.tree):
            path = ctx.path_to(load)
            call = path[-2] if len(path) > 1 else None
            if not (isinstance(call, ast.Call) and call.func is load):
                return False
            if len(call.args) > len(_FALLBACK_PARAMETERS) or any(isinstance(a, ast.Starred) for a in call.args):
                return False
            if any(k.arg not in _FALLBACK_PARAMETERS for k in call.keywords):
                return False
        return True


def _flash_attn_module(stmt) -> str | None:
    for name in imported_modules(stmt):
        top = name.split(".")[0]
        if top == "flash_attn" or top.startswith("flash_attn_"):
            return name
    return None
