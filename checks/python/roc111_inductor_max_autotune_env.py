from __future__ import annotations

import ast
import re

from rocmlint.fixers.python_gate import TORCH_GATE_LINE, gated_fix, gated_value_edit, wrap_statement_edit
from rocmlint.lazy_re import lazy_compile

from rocmlint.model import Applicability, Edit, Fix, Span
from rocmlint.python.flow import call_of_argument, value_of_key
from rocmlint.rule import Example, Rule

VARIABLES = frozenset({"TORCHINDUCTOR_MAX_AUTOTUNE", "TORCHINDUCTOR_MAX_AUTOTUNE_GEMM"})
_ON = frozenset({"1", "true", "True", "TRUE"})
# Shell and Dockerfile lines: `export V=1`, `V=1 python ...`, `ENV V=1`, `ENV V 1`.
_SHELL_SET = lazy_compile(
    r"""^(?P<indent>[ \t]*)(?P<lead>(?:export[ \t]+|ENV[ \t]+|env[ \t]+)?)"""
    r"""(?P<name>TORCHINDUCTOR_MAX_AUTOTUNE(?:_GEMM)?)(?:=|[ \t]+(?=["']?1))["']?(?:1|true|True)\b["']?""",
    re.MULTILINE)
_SHELL_IF = lazy_compile(r"^\s*(?:if|elif)\b(?P<condition>.*)$")
_ONE_LINE_IF = lazy_compile(r";\s*fi\s*(?:#.*)?$")
_VENDOR_WORD = lazy_compile(r"(?i)rocm|(?<![a-z])hip(?![a-z])|amd|nvidia|cuda|/dev/kfd")


class InductorMaxAutotuneEnv(Rule):
    """`TORCHINDUCTOR_MAX_AUTOTUNE=1` set for every GPU.

    ## What it does
    Finds the environment variable `TORCHINDUCTOR_MAX_AUTOTUNE` (or `..._GEMM`) set to `1`
    from Python (`os.environ[...] = "1"`, `setdefault`, `putenv`, environment dicts) and in
    shell launchers and Dockerfiles (`export V=1`, `V=1 python train.py`, `ENV V=1`), unless
    a ROCm gate decides (Python: `if not IS_ROCM:`; shell: inside an `if` that tests the GPU
    vendor). Dockerfiles count when they build a ROCm image; files named for another
    platform are skipped.

    ## Why is this bad?
    Max-autotune benchmarks every GEMM template for every shape. On ROCm it makes even
    `mode="default"` compiles take many minutes or appear to hang, for templates tuned on
    NVIDIA GPUs.

    ## Example
    ```python
    os.environ["TORCHINDUCTOR_MAX_AUTOTUNE"] = "1"
    ```
    Use instead:
    ```python
    if not IS_ROCM:
        os.environ["TORCHINDUCTOR_MAX_AUTOTUNE"] = "1"
    ```

    ## Fix safety
    Safe in Python: the assignment is wrapped in `if not IS_ROCM:` (values in dicts become
    `"0" if IS_ROCM else "1"`), NVIDIA keeps what it had. Shell lines get a suggested
    `[ -e /dev/kfd ] || export ...` (the AMD driver node), shown but not applied; Dockerfile
    `ENV` lines are reported without a fix.

    ## References
    - https://github.com/pytorch/pytorch/issues/187715
    - https://rocm.docs.amd.com/en/latest/how-to/rocm-for-ai/inference-optimization/optimizing-with-composable-kernel.html
    """

    code = "ROC111"
    name = "inductor-max-autotune-env"
    message = "`{name}=1` turns on max-autotune for every GPU (minutes-long or hanging compiles on ROCm); gate it"
    language = "python"
    also_languages = ("manifest",)
    pattern = r"TORCHINDUCTOR_MAX_AUTOTUNE"
    fix_applicability = Applicability.SAFE

    valid = (
        'import os\nimport torch\nif not torch.version.hip:\n    os.environ["TORCHINDUCTOR_MAX_AUTOTUNE"] = "1"\n',
        'import os\nos.environ["TORCHINDUCTOR_MAX_AUTOTUNE"] = "0"\n',
        Example('if [ ! -e /dev/kfd ]; then\n  export TORCHINDUCTOR_MAX_AUTOTUNE=1\nfi\n', filename="train.sh"),
        Example("# export TORCHINDUCTOR_MAX_AUTOTUNE=1\npython train.py\n", filename="train.sh"),
        Example("FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\nENV TORCHINDUCTOR_MAX_AUTOTUNE=1\n",
                filename="Dockerfile"),
    )
    invalid = (
        Example(
            'import os\n\nimport torch\n\nos.environ["TORCHINDUCTOR_MAX_AUTOTUNE"] = "1"\n',
            expected='import os\n\nimport torch\n\n'
                     + TORCH_GATE_LINE + '\n'
                     'if not IS_ROCM:\n    os.environ["TORCHINDUCTOR_MAX_AUTOTUNE"] = "1"\n',
        ),
        Example(
            'import os\nimport subprocess\nimport torch\n\n'
            'subprocess.run(cmd, env={**os.environ, "TORCHINDUCTOR_MAX_AUTOTUNE": "1"})\n',
            expected='import os\nimport subprocess\nimport torch\n\n'
                     + TORCH_GATE_LINE + '\n'
                     'subprocess.run(\n    cmd, env={**os.environ, "TORCHINDUCTOR_MAX_AUTOTUNE": "0" if IS_ROCM else "1"}\n)\n',
        ),
        Example("#!/bin/bash\nexport TORCHINDUCTOR_MAX_AUTOTUNE=1\ntorchrun train.py\n", filename="launch.sh"),
        Example("FROM rocm/pytorch:latest\nENV TORCHINDUCTOR_MAX_AUTOTUNE=1\n", filename="Dockerfile"),
    )

    def check(self, ctx) -> None:
        if ctx.language == "manifest":
            self._check_lines(ctx)
            return
        for hit in ctx.hits():
            path = ctx.node_path(hit.start)
            literal = path[-1]
            if not (isinstance(literal, ast.Constant) and literal.value in VARIABLES) or ctx.gated(hit.start):
                continue
            self._python(ctx, path, literal.value)

    def _python(self, ctx, path, variable: str) -> None:
        parent = path[-2] if len(path) > 1 else None
        message = self.message.format(name=variable)
        # os.environ["V"] = "1"
        if isinstance(parent, ast.Subscript) and len(path) > 2 and isinstance(path[-3], ast.Assign):
            stmt = path[-3]
            if parent in stmt.targets and _on(stmt.value):
                edit = wrap_statement_edit(ctx, stmt)
                ctx.report(ctx.span_of(parent), message, gated_fix(ctx, "Only on NVIDIA", [edit]) if edit else None)
            return
        # {"V": "1"} / setdefault("V", "1") / putenv("V", "1")
        value = None
        if isinstance(parent, ast.Dict):
            value = value_of_key(path)  # None when the name is a value, not a key
        else:
            argument = call_of_argument(path)
            if argument is not None and argument[1] == 0 and len(argument[0].args) > 1:
                func = argument[0].func
                if isinstance(func, ast.Attribute) and func.attr in ("setdefault", "putenv"):
                    value = argument[0].args[1]
        if value is None or not _on(value):
            return
        container = path[:-1] + [value]
        edit = gated_value_edit(ctx, value, container[-2], '"0"')
        ctx.report(ctx.span_of(path[-1]), message, gated_fix(ctx, "Only on NVIDIA", [edit]))

    def _check_lines(self, ctx) -> None:
        if ctx.for_nvidia_only or ctx.kind == "cmake":
            return
        text = ctx.source.decode("utf-8", errors="surrogateescape")
        if len(text) != len(ctx.source):
            return  # non-ASCII launcher: offsets differ; rare enough to skip
        for m in _SHELL_SET.finditer(text):
            if _vendor_decided(text, m.start()):
                continue
            start = m.start("lead") if m.group("lead") else m.start("name")
            span = Span(start, m.end())
            fix = None
            if m.group("lead").startswith("export"):
                fix = Fix((Edit(Span(start, start), "[ -e /dev/kfd ] || "),),
                          "Skip it on AMD GPUs (/dev/kfd is the ROCm driver node)", Applicability.DISPLAY_ONLY)
            ctx.report(span, self.message.format(name=m.group("name")), fix)


def _on(node) -> bool:
    return isinstance(node, ast.Constant) and str(node.value) in _ON


def _vendor_decided(text: str, offset: int) -> bool:
    """Inside a shell `if` whose condition names a GPU vendor (`if [ -e /dev/kfd ]`, `if rocm-smi`)."""
    conditions: list[str] = []
    for line in text[:offset].splitlines():
        m = _SHELL_IF.match(line)
        if m and _ONE_LINE_IF.search(line):
            continue  # `if ...; then ...; fi`: closed on its own line
        if m and not line.lstrip().startswith("elif"):
            conditions.append(m.group("condition"))
        elif m:
            if conditions:
                conditions[-1] += m.group("condition")
        elif re.match(r"^\s*fi\b", line) and conditions:
            conditions.pop()
    return any(_VENDOR_WORD.search(c) for c in conditions)
