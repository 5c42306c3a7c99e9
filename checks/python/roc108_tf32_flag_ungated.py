from __future__ import annotations

import ast

from rocmlint.fixers.python_gate import TORCH_GATE_LINE, gated_fix, wrap_statement_edit
from rocmlint.model import Applicability
from rocmlint.rule import Example, Rule

TF32_FLAGS = frozenset({"torch.backends.cuda.matmul.allow_tf32", "torch.backends.cudnn.allow_tf32"})


class Tf32FlagUngated(Rule):
    """TF32 switches set for every GPU, ROCm included (opt-in rule).

    ## What it does
    Finds assignments to `torch.backends.cuda.matmul.allow_tf32` and
    `torch.backends.cudnn.allow_tf32` to `True` that the ROCm build runs. Not in the default
    selection: enable it with `--extend-select ROC108` (or `extend-select = ["ROC108"]`) in
    projects that compare numerics across platforms.

    ## Why is this bad?
    Setting the flag asks for reduced fp32 precision, and what ROCm does with the request
    depends on the PyTorch version and the GPU, checked against PyTorch's source:
    - PyTorch 2.6 up to the versions whose `aten/src/ATen/Context.cpp` still gates it
      (`Context::setAllowTF32CuBLAS` under `USE_ROCM`, added by pytorch/pytorch#143549): the
      matmul flag does nothing unless `HIPBLASLT_ALLOW_TF32=1` is set; earlier versions
      ignore it entirely.
    - Current main (`docs/source/notes/hip.rst`, "TensorFloat-32 (TF32) on ROCm"): MI300
      (gfx942) and newer Instinct GPUs honour it through hipBLASLt (XF32), with numerics that
      differ from NVIDIA's TF32; GPUs without the mode are being guarded
      (pytorch/pytorch#193345).
    - `cudnn.allow_tf32` reaches no ROCm convolution: MIOpen's math type is not wired to it
      (pytorch/pytorch#190711 proposes it).
    So on most ROCm installs the line changes nothing, and where it does, it does what it
    asks for with slightly different rounding: a hazard only for code that compares results
    with NVIDIA runs, hence opt-in.

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
    - https://github.com/pytorch/pytorch/blob/main/docs/source/notes/hip.rst (TF32 on ROCm)
    - https://github.com/pytorch/pytorch/pull/143549 (`HIPBLASLT_ALLOW_TF32` gate in Context.cpp)
    - https://github.com/pytorch/pytorch/pull/190711 (MIOpen ignores `cudnn.allow_tf32`)
    - https://github.com/pytorch/pytorch/pull/193345 (TF32 on GPUs without the mode)
    - https://pytorch.org/docs/stable/notes/cuda.html#tensorfloat-32-tf32-on-ampere-and-later-devices
    """

    code = "ROC108"
    name = "tf32-flag-ungated"
    default_enabled = False
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
