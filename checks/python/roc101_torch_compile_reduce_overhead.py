from __future__ import annotations

import ast

from rocmlint.fixers.python_gate import TORCH_GATE_LINE, gated_fix, gated_value_edit
from rocmlint.model import Applicability
from rocmlint.python.flow import call_of_argument, dict_key, mapping_path, value_sites
from rocmlint.python.torch_api import is_compile
from rocmlint.rule import Example, Rule

# mode -> what ROCm gets instead (same compiler work, no CUDA graphs)
ROCM_MODE = {"reduce-overhead": "default", "max-autotune": "max-autotune-no-cudagraphs"}


class TorchCompileReduceOverhead(Rule):
    """`torch.compile` asked for CUDA graphs (`mode="reduce-overhead"` or `"max-autotune"`).

    ## What it does
    Finds `mode="reduce-overhead"` and `mode="max-autotune"` reaching `torch.compile`
    where the ROCm build runs it: direct calls, `@torch.compile(mode=...)` decorators,
    `functools.partial(torch.compile, mode=...)`, keyword dicts (`**{"mode": ...}`),
    module-level constants (`mode=MODE`, `**COMPILE_OPTS`) and aliases
    (`from torch import compile as tc`, `import torch as T`). Branches already gated on
    ROCm (`if not IS_ROCM:`, `... if torch.version.hip else ...`) are not reported;
    `"max-autotune-no-cudagraphs"` never is.

    ## Why is this bad?
    Both modes turn on CUDA graph trees. On ROCm, HIP graph capture of compiled
    graphs is far less mature: models recompile and re-record graphs, run slower than
    eager, use much more memory, or fail to capture. `"default"` and
    `"max-autotune-no-cudagraphs"` keep the compiler's work without the graphs.

    ## Example
    ```python
    model = torch.compile(model, mode="reduce-overhead")
    ```
    Use instead:
    ```python
    IS_ROCM = hasattr(torch.version, "hip") and torch.version.hip is not None
    model = torch.compile(model, mode="default" if IS_ROCM else "reduce-overhead")
    ```

    ## Fix safety
    Safe: the mode string becomes `"default" if IS_ROCM else "reduce-overhead"`
    (`"max-autotune-no-cudagraphs"` for max-autotune), so the NVIDIA build compiles
    exactly as before. The gate is an existing one of the module (`IS_ROCM`, `is_rocm`,
    ...) or is defined once after the imports.

    ## References
    - https://github.com/pytorch/pytorch/issues/187715
    """

    code = "ROC101"
    name = "torch-compile-reduce-overhead"
    message = "`torch.compile` mode {mode!r} turns on CUDA graphs: slow or broken on ROCm; gate it"
    language = "python"
    # One literal first character keeps the prefilter fast (regex alternations are slow).
    pattern = r"""-(?:overhead|autotune)["']"""
    fix_applicability = Applicability.SAFE

    valid = (
        'import torch\nmodel = torch.compile(model, mode="max-autotune-no-cudagraphs")\n',
        'import torch\nIS_ROCM = torch.version.hip is not None\n'
        'model = torch.compile(model, mode="default" if IS_ROCM else "reduce-overhead")\n',
        'import torch\nif not torch.version.hip:\n    model = torch.compile(model, mode="reduce-overhead")\n',
        'import torch\nparser.add_argument("--mode", default="reduce-overhead")  # not torch.compile\n',
        'import torch\n# torch.compile(model, mode="reduce-overhead") is slow on ROCm\n',
    )
    invalid = (
        Example(
            'import torch\n\nmodel = torch.compile(model, mode="reduce-overhead")\n',
            expected=(
                'import torch\n'
                '\n'
                + TORCH_GATE_LINE +
                '\n'
                'model = torch.compile(model, mode="default" if IS_ROCM else "reduce-overhead")\n'
            ),
        ),
        Example(
            'import torch\n\n\n@torch.compile(mode="max-autotune")\ndef step(x):\n    return x * 2\n',
            expected=(
                'import torch\n'
                '\n'
                + TORCH_GATE_LINE +
                '\n'
                '\n'
                '@torch.compile(mode="max-autotune-no-cudagraphs" if IS_ROCM else "max-autotune")\n'
                'def step(x):\n'
                '    return x * 2\n'
            ),
        ),
        Example(
            'import functools\n\nimport torch\nfrom utils import IS_ROCM\n\n'
            'COMPILE_OPTS = {"mode": "reduce-overhead", "fullgraph": True}\n'
            'compile_fn = functools.partial(torch.compile, **COMPILE_OPTS)\n',
            expected='import functools\n\nimport torch\nfrom utils import IS_ROCM\n\n'
                     'COMPILE_OPTS = {"mode": "default" if IS_ROCM else "reduce-overhead", "fullgraph": True}\n'
                     'compile_fn = functools.partial(torch.compile, **COMPILE_OPTS)\n',
        ),
        Example(
            "from torch import compile as tc\nimport torch\n\nfast = tc(net, mode='reduce-overhead')\n",
            expected=(
                'from torch import compile as tc\n'
                'import torch\n'
                '\n'
                + TORCH_GATE_LINE +
                '\n'
                "fast = tc(net, mode='default' if IS_ROCM else 'reduce-overhead')\n"
            ),
        ),
    )

    def check(self, ctx) -> None:
        for hit in ctx.hits():
            literal = ctx.string_at(hit)
            mode = literal.value if literal is not None else None
            if not isinstance(mode, str) or mode not in ROCM_MODE:
                continue
            path = ctx.path_to(literal)
            if isinstance(path[-2], ast.JoinedStr):  # f"reduce-overhead": the f-string is the value
                if len(path[-2].values) != 1:
                    continue
                path = path[:-1]
                literal = path[-1]
            if ctx.gated(ctx.span_of(literal).start):
                continue
            if not any(not ctx.gated(ctx.span_of(site[-1]).start) for site in self._compile_sites(ctx, path)):
                continue
            quote = ctx.source_of(literal)[-1]
            fix = None
            if quote in "'\"":
                edit = gated_value_edit(ctx, literal, path[-2], f"{quote}{ROCM_MODE[mode]}{quote}")
                fix = gated_fix(ctx, f"Use mode={ROCM_MODE[mode]!r} on ROCm", [edit])
            ctx.report(ctx.span_of(literal), self.message.format(mode=mode), fix)

    def _compile_sites(self, ctx, path) -> list[list]:
        """Paths of the `torch.compile` mode arguments the literal at ``path`` flows into."""
        found = []
        for site in value_sites(ctx, path):
            argument = call_of_argument(site)
            if argument and argument[1] == "mode" and is_compile(ctx, argument[0]):
                found.append(site)
                continue
            # {"mode": ...} / dict(mode=...) handed over as **kwargs, directly or by name.
            mapping = mapping_path(site) if dict_key(site) == "mode" else None
            if mapping is None:
                continue
            for use in value_sites(ctx, mapping):
                argument = call_of_argument(use)
                if argument and argument[1] is None and is_compile(ctx, argument[0]):
                    found.append(use)
        return found

