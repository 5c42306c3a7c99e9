from __future__ import annotations

import ast

from rocmlint.fixers.python_gate import TORCH_GATE_LINE, gated_fix, wrap_statement_edit
from rocmlint.model import Applicability
from rocmlint.rule import Example, Rule

TF32_FLAGS = frozenset({"torch.backends.cuda.matmul.allow_tf32", "torch.backends.cudnn.allow_tf32"})


class Tf32FlagUngated(Rule):
    """TF32 switches set for every GPU, ROCm included.

    ## What it does
    Finds assignments to `torch.backends.cuda.matmul.allow_tf32` and
    `torch.backends.cudnn.allow_tf32` to `True` that the ROCm build runs.

    ## Why is this bad?
    TF32 is an NVIDIA Ampere+ tensor-core mode. On ROCm the flags either do nothing
    (most architectures, MIOpen ignores the cuDNN one) or switch MI300 GEMMs to XF32
    through hipBLASLt, with numerics that differ from both FP32 and NVIDIA's TF32: the
    same script gives different results per platform, and accuracy comparisons against
    NVIDIA runs are off.

    ## Example
    ```python
    torch.backends.cuda.matmul.allow_tf32 = True
    ```
    Use instead:
    ```python
    if not IS_ROCM:
        torch.backends.cuda.matmul.allow_tf32 = True
    ```

    ## Fix safety
    Safe: the statement is wrapped in `if not IS_ROCM:`; NVIDIA runs it unchanged and
    ROCm keeps PyTorch's default.

    ## References
    - https://pytorch.org/docs/stable/notes/hip.html
    - https://pytorch.org/docs/stable/notes/cuda.html#tensorfloat-32-tf32-on-ampere-and-later-devices
    """

    code = "ROC108"
    name = "tf32-flag-ungated"
    message = "TF32 flag set on ROCm too (ignored or XF32 with different numerics); set it for NVIDIA only"
    language = "python"
    pattern = r"(?<=\.)allow_tf32\b"  # only attribute assignments are checked: not the name in a string
    anchors = (r"allow_tf32",)  # literal first: fast
    fix_applicability = Applicability.SAFE

    valid = (
        "import torch\ntorch.backends.cuda.matmul.allow_tf32 = False\n",
        "import torch\nif not torch.version.hip:\n    torch.backends.cudnn.allow_tf32 = True\n",
        "import torch\nprint(torch.backends.cuda.matmul.allow_tf32)\n",
        "import torch\nold = torch.backends.cudnn.allow_tf32\ntorch.backends.cudnn.allow_tf32 = old\n",
    )
    invalid = (
        Example(
            "import torch\n\n\ndef setup():\n    torch.backends.cuda.matmul.allow_tf32 = True\n"
            "    torch.backends.cudnn.allow_tf32 = True  # faster convs\n",
            expected=(
                'import torch\n'
                '\n'
                + TORCH_GATE_LINE +
                '\n'
                '\n'
                'def setup():\n'
                '    if not IS_ROCM:\n'
                '        torch.backends.cuda.matmul.allow_tf32 = True\n'
                '        torch.backends.cudnn.allow_tf32 = True  # faster convs\n'
            ),
        ),
    )

    def check(self, ctx) -> None:
        for hit in ctx.hits():
            path = ctx.node_path(hit.start)
            node = path[-1]
            stmt = path[-2] if len(path) > 1 else None
            if not isinstance(node, ast.Attribute) or not isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                continue
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if not any(t is node for t in targets) or ctx.qualname(node) not in TF32_FLAGS:
                continue
            if not (isinstance(stmt.value, ast.Constant) and stmt.value.value is True):
                continue  # False, or a saved value being restored
            if ctx.gated(ctx.span_of(stmt).start):
                continue
            edit = wrap_statement_edit(ctx, stmt)
            fix = gated_fix(ctx, "Set TF32 on NVIDIA only", [edit]) if edit else None
            ctx.report(ctx.span_of(node), None, fix)
