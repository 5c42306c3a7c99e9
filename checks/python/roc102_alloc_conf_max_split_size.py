from __future__ import annotations

import ast
import re

from rocmlint.fixers.python_gate import TORCH_GATE_LINE, gated_fix, gated_value_edit
from rocmlint.lazy_re import lazy_compile
from rocmlint.model import Applicability
from rocmlint.python.flow import call_of_argument, called_name, climb, dict_key, value_sites
from rocmlint.rule import Example, Rule

ALLOC_KEYS = frozenset({"PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF", "PYTORCH_ALLOC_CONF"})
SETTERS = ("setdefault", "putenv")
# A value expression may be built from pieces: conditionals, f-strings, concatenations.
CARRIERS = (ast.IfExp, ast.JoinedStr, ast.BinOp)
# `KEY=...max_split_size_mb...` inside a shell command string.
_SHELL_ASSIGNMENT = lazy_compile(r"PYTORCH_(?:CUDA_|HIP_)?ALLOC_CONF=\S*max_split_size_mb")
_OPTION = r"max_split_size_mb\s*:\s*(?:{value})"
_LITERAL_VALUE = r"[\w.]+"
_FSTRING_VALUE = r"[\w.]+|\{[^{}]*\}"


class AllocConfMaxSplitSize(Rule):
    """`max_split_size_mb` in the caching-allocator configuration set from Python.

    ## What it does
    Finds `max_split_size_mb` in a value of `PYTORCH_CUDA_ALLOC_CONF`,
    `PYTORCH_HIP_ALLOC_CONF` (or `PYTORCH_ALLOC_CONF`) set from Python:
    `os.environ[...] = ...`, `os.environ.setdefault(...)`, `os.environ.update({...})`
    or keywords, `os.putenv(...)`, environment dicts handed to `subprocess.run`/`Popen`
    (dict displays, `{**os.environ, ...}`, a local `env` dict or copy),
    `torch.cuda.memory._set_allocator_settings(...)`, also when the value is an f-string,
    a concatenation or a variable assigned first.

    ## Why is this bad?
    The option is a CUDA-allocator tuning knob that ROCm builds handle differently: some
    ROCm allocator versions reject the configuration string, and combined with
    `expandable_segments:True` it defeats the expandable-segments allocator and brings the
    fragmentation back. Launch scripts copied from NVIDIA setups carry it everywhere.

    ## Example
    ```python
    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "max_split_size_mb:512,expandable_segments:True"
    ```
    Use instead:
    ```python
    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = (
        "expandable_segments:True" if IS_ROCM else "max_split_size_mb:512,expandable_segments:True")
    ```

    ## Fix safety
    Safe where the module imports `torch`: the value becomes
    `<value without the option> if IS_ROCM else <value as written>` with the torch gate
    (`torch.version.hip`), so NVIDIA gets exactly the old value. f-strings are gated whole
    (the ROCm side is the f-string without the option and its field). Launch scripts that
    never import torch get the gate `IS_ROCM = os.path.exists("/dev/kfd")` instead of a
    heavy `import torch`: `/dev/kfd` is the AMD GPU driver node every ROCm process needs
    (containers get it with `--device=/dev/kfd`) and NVIDIA-only hosts lack it. A host with
    both vendors' GPUs (or an AMD APU) would take the ROCm value under an NVIDIA torch too,
    so that fix is offered as unsafe. Concatenations, `%`/`.format` values and shell
    command strings are reported without a fix.

    ## References
    - https://github.com/pytorch/pytorch/issues/123548
    """

    code = "ROC102"
    name = "alloc-conf-max-split-size"
    message = "`max_split_size_mb` in the allocator config: rejected or harmful on ROCm; leave it out there"
    language = "python"
    pattern = r"max_split_size_mb"
    fix_applicability = Applicability.SAFE

    valid = (
        'import os\nimport torch\nos.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"\n',
        'import os\nimport torch\nif not torch.version.hip:\n'
        '    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "max_split_size_mb:256"\n',
        'import os\nimport torch\nIS_ROCM = torch.version.hip is not None\n'
        'os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "" if IS_ROCM else "max_split_size_mb:256"\n',
        '"""Tip: PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128 helps fragmentation."""\n'
        'import os\n# os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "max_split_size_mb:128"\n',
    )
    invalid = (
        Example(
            'import os\n\nimport torch\n\n'
            'os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "max_split_size_mb:512,expandable_segments:True"\n',
            expected=(
                'import os\n'
                '\n'
                'import torch\n'
                '\n'
                + TORCH_GATE_LINE +
                '\n'
                'os.environ["PYTORCH_CUDA_ALLOC_CONF"] = (\n'
                '    "expandable_segments:True"\n'
                '    if IS_ROCM\n'
                '    else "max_split_size_mb:512,expandable_segments:True"\n'
                ')\n'
            ),
        ),
        Example(
            'import os\nimport subprocess\nimport torch\n\n\ndef launch(cmd, split_mb):\n'
            '    env = {**os.environ, "PYTORCH_CUDA_ALLOC_CONF": f"max_split_size_mb:{split_mb}"}\n'
            '    return subprocess.run(cmd, env=env, check=True)\n',
            expected=(
                'import os\n'
                'import subprocess\n'
                'import torch\n'
                '\n'
                + TORCH_GATE_LINE +
                '\n'
                '\n'
                'def launch(cmd, split_mb):\n'
                '    env = {\n'
                '        **os.environ,\n'
                '        "PYTORCH_CUDA_ALLOC_CONF": "" if IS_ROCM else f"max_split_size_mb:{split_mb}",\n'
                '    }\n'
                '    return subprocess.run(cmd, env=env, check=True)\n'
            ),
        ),
        Example(
            'import os\n\nos.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:128")\n',
            expected=(
                'import os\n'
                '\n'
                'IS_ROCM = os.path.exists("/dev/kfd")\n'
                '\n'
                'os.environ.setdefault(\n'
                '    "PYTORCH_CUDA_ALLOC_CONF", "" if IS_ROCM else "max_split_size_mb:128"\n'
                ')\n'
            ),
            unsafe=True,
        ),
        'import torch\ntorch.cuda.memory._set_allocator_settings("max_split_size_mb:" + str(mb))\n',
    )

    def check(self, ctx) -> None:
        for hit in ctx.hits():
            path = ctx.node_path(hit.start)
            literal = path[-1]
            if not (isinstance(literal, ast.Constant) and isinstance(literal.value, str)):
                continue
            root = climb(path, CARRIERS)
            if ctx.gated(ctx.span_of(root[-1]).start):
                continue
            shell = self._in_shell_command(ctx, literal, value_sites(ctx, root, CARRIERS))
            sites = [] if shell else [s for s in value_sites(ctx, root, CARRIERS) if self._is_sink(ctx, s)]
            if not shell and not any(not ctx.gated(ctx.span_of(s[-1]).start) for s in sites):
                continue
            fix = None if shell else self._fix(ctx, root)
            ctx.report(ctx.span_of(root[-1]), None, fix)

    @staticmethod
    def _is_sink(ctx, site) -> bool:
        """The value at ``site`` ends up as an allocator configuration."""
        node, parent = site[-1], site[-2] if len(site) > 1 else None
        if dict_key(site) in ALLOC_KEYS:  # {"PYTORCH_CUDA_ALLOC_CONF": v}, update(PYTORCH_...=v)
            return True
        if isinstance(parent, ast.Assign) and parent.value is node:
            return any(isinstance(t, ast.Subscript) and _constant(t.slice) in ALLOC_KEYS for t in parent.targets)
        argument = call_of_argument(site)
        if argument is None:
            return False
        call, position = argument
        name = called_name(call)
        if name == "_set_allocator_settings":
            return position == 0
        return name in SETTERS and position == 1 and bool(call.args) and _constant(call.args[0]) in ALLOC_KEYS

    @staticmethod
    def _in_shell_command(ctx, literal, sites) -> bool:
        """`KEY=max_split_size_mb:... cmd` handed to a call (subprocess, os.system)."""
        return bool(_SHELL_ASSIGNMENT.search(literal.value)) and any(
            call_of_argument(site) is not None for site in sites)

    @staticmethod
    def _fix(ctx, root):
        node = root[-1]
        if isinstance(node, ast.Constant):
            value = _LITERAL_VALUE
        elif isinstance(node, ast.JoinedStr):
            value = _FSTRING_VALUE
        else:
            return None  # concatenations, %-formatting: no sound text edit
        text = ctx.source_of(node)
        rocm = re.sub(r"(,\s*)?" + _OPTION.format(value=value) + r"(\s*,)?",
                      lambda m: "," if m.group(1) and m.group(2) else "", text)
        if "max_split_size_mb" in rocm:
            return None
        if rocm[:1] in "fF" and "{" not in rocm:
            rocm = rocm[1:]  # no field left: a plain string
        try:
            ast.parse(rocm, mode="eval")
        except SyntaxError:
            return None
        edit = gated_value_edit(ctx, node, root[-2], rocm)
        return gated_fix(ctx, "Leave max_split_size_mb out on ROCm", [edit])


def _constant(node) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None
