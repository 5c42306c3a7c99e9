from __future__ import annotations

import ast

from rocmlint.fixers.python_gate import GATE, TORCH_GATE_LINE, gated_fix, wrap_statement_edit
from rocmlint.model import Applicability, Edit
from rocmlint.python.flow import call_of_argument, climb, value_of_key, value_sites
from rocmlint.python.flow import containing_list
from rocmlint.python.torch_api import INDUCTOR_CONFIG, is_compile
from rocmlint.rule import Example, Rule

# Option names as written in `config.<name> = ...`, `options={...}` and `config.patch(...)`.
OPTIONS = frozenset({"triton.cudagraphs", "triton.cudagraph_trees", "memory_planning", "max_autotune"})
CUDAGRAPHS = "triton.cudagraphs"


class InductorCudagraphsEnabled(Rule):
    """Inductor options that turn on CUDA graphs (or NVIDIA-tuned planning) set ungated.

    ## What it does
    Finds `torch._inductor.config` options `triton.cudagraphs`, `triton.cudagraph_trees`,
    `memory_planning` and `max_autotune` set to `True` where the ROCm build runs it:
    assignments (`torch._inductor.config.triton.cudagraphs = True`, also through
    `import torch._inductor.config as inductor_config` or `from torch._inductor import config`),
    `config.patch(max_autotune=True)` / `config.patch({"triton.cudagraphs": True})` and
    `torch.compile(..., options={...})` (also a dict passed by name or through a conditional
    expression). `max_autotune` is not reported where the same options dict, or the same
    block of assignments, sets `triton.cudagraphs` to `False`.

    ## Why is this bad?
    These are the switches behind `mode="reduce-overhead"`/`"max-autotune"`: CUDA graph
    trees, graph-level memory planning and exhaustive GEMM autotuning. On ROCm graph
    capture of compiled graphs is far less mature (recompilations, slowdowns, memory
    blow-ups, capture failures) and autotuning spends a long time on templates tuned for
    NVIDIA GPUs. `max_autotune` with CUDA graphs off is exactly PyTorch's
    `"max-autotune-no-cudagraphs"` mode (`torch/_inductor/__init__.py`, `list_mode_options`:
    `max_autotune` and `coordinate_descent_tuning`, where `"max-autotune"` adds
    `triton.cudagraphs`): on-device benchmarking of kernel choices, which ROCm runs, and
    which ROC101 accepts as the ROCm mode.

    ## Example
    ```python
    torch._inductor.config.triton.cudagraphs = True
    ```
    Use instead:
    ```python
    if not IS_ROCM:
        torch._inductor.config.triton.cudagraphs = True
    ```

    ## Fix safety
    Safe: assignments are wrapped in `if not IS_ROCM:`; `True` in `patch(...)`/`options`
    becomes `not IS_ROCM`. NVIDIA keeps exactly what it had.

    ## References
    - https://github.com/pytorch/pytorch/issues/187715
    - https://github.com/pytorch/pytorch/blob/main/torch/_inductor/__init__.py (`list_mode_options`)
    """

    code = "ROC104"
    name = "inductor-cudagraphs-enabled"
    message = "inductor option `{option}` enabled for ROCm too (CUDA graphs / NVIDIA-tuned autotuning); gate it"
    language = "python"
    pattern = r"""(?:cudagraphs|cudagraph_trees|memory_planning|max_autotune)["']?\s*[:=]\s*True\b"""
    fix_applicability = Applicability.SAFE

    valid = (
        "import torch\nif not torch.version.hip:\n    torch._inductor.config.triton.cudagraphs = True\n",
        "import torch\ntorch._inductor.config.triton.cudagraphs = False\n",
        'import torch\nmodel = torch.compile(model, mode="max-autotune-no-cudagraphs")\n',
        "import torch\nIS_ROCM = torch.version.hip is not None\n"
        "with torch._inductor.config.patch(max_autotune=not IS_ROCM):\n    run()\n",
    )
    invalid = (
        Example(
            "import torch\nimport torch._inductor.config as inductor_config\n\n"
            "inductor_config.triton.cudagraphs = True\n",
            expected=(
                'import torch\n'
                'import torch._inductor.config as inductor_config\n'
                '\n'
                + TORCH_GATE_LINE +
                '\n'
                'if not IS_ROCM:\n'
                '    inductor_config.triton.cudagraphs = True\n'
            ),
        ),
        Example(
            "import torch\n\n\ndef bench(fn):\n    with torch._inductor.config.patch(max_autotune=True):\n"
            "        return fn()\n",
            expected=(
                'import torch\n'
                '\n'
                + TORCH_GATE_LINE +
                '\n'
                '\n'
                'def bench(fn):\n'
                '    with torch._inductor.config.patch(max_autotune=not IS_ROCM):\n'
                '        return fn()\n'
            ),
        ),
        Example(
            'import torch\n\nnet = torch.compile(net, options={"triton.cudagraphs": True, "epilogue_fusion": True})\n',
            expected=(
                'import torch\n'
                '\n'
                + TORCH_GATE_LINE +
                '\n'
                'net = torch.compile(net, options={"triton.cudagraphs": not IS_ROCM, "epilogue_fusion": True})\n'
            ),
        ),
    )

    def check(self, ctx) -> None:
        for hit in ctx.hits():
            if ctx.gated(hit.start):
                continue
            path = ctx.node_path(hit.start)
            node = path[-1]
            if isinstance(node, ast.Attribute) and isinstance(path[-2], ast.Assign):
                self._assignment(ctx, path[-2], node)
            elif isinstance(node, ast.keyword) and node.arg in OPTIONS and isinstance(path[-2], ast.Call):
                if ctx.qualname(path[-2].func) == f"{INDUCTOR_CONFIG}.patch":
                    self._enabled_value(ctx, node.value, node.arg, ctx.span_of(node))
            elif isinstance(node, ast.Constant) and node.value in OPTIONS and value_of_key(path) is not None:
                if node.value == "max_autotune" and _graphs_off_in_mapping(path[-2]):
                    continue  # max-autotune-no-cudagraphs: on-device benchmarking, which ROCm runs
                if self._is_options_mapping(ctx, path[:-1]):
                    self._enabled_value(ctx, value_of_key(path), node.value, ctx.span_of(node))

    def _assignment(self, ctx, stmt: ast.Assign, target: ast.Attribute) -> None:
        name = ctx.qualname(target) or ""
        option = name[len(INDUCTOR_CONFIG) + 1:] if name.startswith(INDUCTOR_CONFIG + ".") else None
        if option not in OPTIONS or not _true(stmt.value) or target not in stmt.targets:
            return
        if option == "max_autotune" and _graphs_off_beside(ctx, stmt):
            return  # the same block turns CUDA graphs off: max-autotune-no-cudagraphs
        edit = wrap_statement_edit(ctx, stmt)
        fix = gated_fix(ctx, "Only on NVIDIA", [edit]) if edit else None
        ctx.report(ctx.span_of(target), self.message.format(option=option), fix)

    def _enabled_value(self, ctx, value, option, span) -> None:
        if not _true(value):
            return
        fix = gated_fix(ctx, "Only on NVIDIA", [Edit(ctx.node_span(value), f"not {GATE}")])
        ctx.report(span, self.message.format(option=option), fix)

    @staticmethod
    def _is_options_mapping(ctx, mapping) -> bool:
        """The dict goes to `torch.compile(options=...)` or `config.patch(...)`, maybe by name."""
        for site in value_sites(ctx, mapping):
            argument = call_of_argument(climb(site))  # `options=GRAPHS if graphs else EAGER`
            if argument is None:
                continue
            call, position = argument
            if position == "options" and is_compile(ctx, call):
                return True
            if position == 0 and ctx.qualname(call.func) == f"{INDUCTOR_CONFIG}.patch":
                return True
        return False


def _true(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def _graphs_off_in_mapping(mapping: ast.Dict) -> bool:
    """The options dict also says `"triton.cudagraphs": False`."""
    return any(isinstance(key, ast.Constant) and key.value == CUDAGRAPHS and _false(value)
               for key, value in zip(mapping.keys, mapping.values))


def _graphs_off_beside(ctx, stmt: ast.Assign) -> bool:
    """A statement of the same block sets `<inductor config>.triton.cudagraphs = False`."""
    path = ctx.path_to(stmt)
    block = containing_list(path[-2], stmt) if len(path) > 1 else None
    return any(isinstance(other, ast.Assign) and _false(other.value) and any(
        ctx.qualname(t) == f"{INDUCTOR_CONFIG}.{CUDAGRAPHS}" for t in other.targets) for other in block or ())


def _false(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is False
