from __future__ import annotations

import ast

from rocmlint.fixers.python_gate import gated_fix, gated_value_edit
from rocmlint.model import Applicability
from rocmlint.rule import Example, Rule

OCP_E4M3 = "torch.float8_e4m3fn"
FNUZ = "e4m3fnuz"


class Fp8E4m3fnHardcoded(Rule):
    """`torch.float8_e4m3fn` hard-coded with no choice for AMD's FNUZ format.

    ## What it does
    Finds `torch.float8_e4m3fn` (also `torch.finfo(torch.float8_e4m3fn)`) chosen as the
    dtype where the ROCm build runs it and nothing around it picks
    `torch.float8_e4m3fnuz` (a conditional expression or an `if` that mentions the FNUZ
    variant). Comparisons (`x.dtype == torch.float8_e4m3fn`), dtype tables and lists of
    dtypes only inspect the dtype and are not reported.

    ## Why is this bad?
    MI300 (gfx942) implements the FNUZ FP8 formats: `float8_e4m3fnuz` with a maximum of
    240 instead of 448 and a different NaN/zero encoding. Scales computed with
    `finfo(float8_e4m3fn).max` overflow there, and FP8 GEMMs reject or silently
    mis-handle the OCP dtype. (gfx950/MI350 uses the OCP format again, hence the choice
    must be per architecture.)

    ## Example
    ```python
    FP8_DTYPE = torch.float8_e4m3fn
    ```
    Use instead:
    ```python
    FP8_DTYPE = torch.float8_e4m3fnuz if IS_ROCM else torch.float8_e4m3fn
    ```

    ## Fix safety
    Unsafe: the fix picks `float8_e4m3fnuz` on every ROCm GPU, which is right for
    gfx942 (MI300) but not for gfx950 (MI350, OCP FP8); checkpoints and scales stored
    in one format need conversion. NVIDIA keeps `float8_e4m3fn`.

    ## References
    - https://github.com/uccl-project/uccl/pull/804
    """

    code = "ROC107"
    name = "fp8-e4m3fn-hardcoded"
    message = "`float8_e4m3fn` hard-coded: MI300 (gfx942) uses `float8_e4m3fnuz` (max 240); choose per arch"
    language = "python"
    pattern = r"float8_e4m3fn\b"
    fix_applicability = Applicability.UNSAFE

    valid = (
        "import torch\nFP8 = torch.float8_e4m3fnuz if torch.version.hip else torch.float8_e4m3fn\n",
        "import torch\nSUPPORTED = (torch.float8_e4m3fn, torch.float8_e4m3fnuz)\n",
        "import torch\nDTYPE_NAME = 'float8_e4m3fn'\n",
        "import torch\nis_fp8 = x.dtype == torch.float8_e4m3fn\nFP8_TYPES = [torch.float8_e4m3fn, torch.float8_e5m2]\n",
        "import torch\nif use_fnuz:\n    dt = torch.float8_e4m3fnuz\nelse:\n    dt = torch.float8_e4m3fn\n",
    )
    invalid = (
        Example(
            "import torch\n\nFP8_MAX = torch.finfo(torch.float8_e4m3fn).max\n",
            expected=(
                'import torch\n'
                '\n'
                'IS_ROCM = hasattr(torch.version, "hip") and torch.version.hip is not None\n'
                '\n'
                'FP8_MAX = torch.finfo(torch.float8_e4m3fnuz if IS_ROCM else torch.float8_e4m3fn).max\n'
            ),
            unsafe=True,
        ),
        "import torch\n\n\ndef quantize(x, scale):\n    return (x / scale).to(torch.float8_e4m3fn)\n",
    )

    def check(self, ctx) -> None:
        for hit in ctx.hits():
            path = ctx.node_path(hit.start)
            node = path[-1]
            if not isinstance(node, (ast.Attribute, ast.Name)) or ctx.qualname(node) != OCP_E4M3:
                continue
            if not isinstance(node.ctx, ast.Load) or ctx.gated(hit.start) or self._arch_choice_nearby(ctx, path):
                continue
            if self._only_inspected(path):
                continue
            fix = None
            if isinstance(node, ast.Attribute):
                edit = gated_value_edit(ctx, node, path[-2], ctx.source_of(node) + "uz")
                fix = gated_fix(ctx, "Use float8_e4m3fnuz on ROCm", [edit], Applicability.UNSAFE)
            ctx.report(ctx.span_of(node), None, fix)

    @staticmethod
    def _only_inspected(path) -> bool:
        """Compared against (`x.dtype == ...`), a key of a dtype table, or one of a list of
        dtypes: the code checks for the dtype rather than choosing it."""
        node, parent = path[-1], path[-2]
        if isinstance(parent, ast.Compare):
            return True
        if isinstance(parent, ast.Dict):
            return any(key is node for key in parent.keys)
        return isinstance(parent, (ast.List, ast.Tuple, ast.Set)) and len(parent.elts) > 1

    @staticmethod
    def _arch_choice_nearby(ctx, path) -> bool:
        """The expression, or the nearest `if` around it, already mentions the FNUZ dtype."""
        for ancestor in reversed(path[:-1]):
            if isinstance(ancestor, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)):
                return False
            if isinstance(ancestor, ast.stmt) and not isinstance(ancestor, ast.If):
                if FNUZ in ctx.source_of(ancestor):
                    return True
                continue
            if FNUZ in ctx.source_of(ancestor):
                return True
            if isinstance(ancestor, ast.If):
                return False
        return False
