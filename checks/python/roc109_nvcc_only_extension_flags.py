from __future__ import annotations

import ast
import re

from rocmlint.fixers.python_gate import gated_fix, gated_value_edit
from rocmlint.model import Applicability
from rocmlint.python.flow import climb, dict_key, value_sites
from rocmlint.rule import Example, Rule

_NVCC_ONLY = re.compile(r"^(?:-Xptxas|--ptxas-options|--use_fast_math|-use_fast_math|-gencode)\b")
# Flags whose value is the next list element.
_TAKES_NEXT = frozenset({"-Xptxas", "-gencode", "--ptxas-options"})
_DESTINATIONS = frozenset({"extra_cuda_cflags", "extra_compile_args"})


class NvccOnlyExtensionFlags(Rule):
    """nvcc-only flags in a torch C++/CUDA extension build that ROCm also runs.

    ## What it does
    Finds `-Xptxas`, `--ptxas-options`, `--use_fast_math` and `-gencode` in the nvcc
    flags of `CUDAExtension(..., extra_compile_args={"nvcc": [...]})` or
    `torch.utils.cpp_extension.load(..., extra_cuda_cflags=[...])`, also through a flag
    list assigned to a variable first, unless gated: the one gate model of every Python rule
    (`if IS_HIP_EXTENSION:` ... `else:`, `torch.version.hip`, the project's own helpers and
    platform variables, and, when no definition is visible, a name that states ROCm:
    `if rocm_build():`, `if USE_ROCM:`, `ROCM_HOME is not None`).

    ## Why is this bad?
    On ROCm, PyTorch hands the "nvcc" flags to hipcc/clang, which does not know
    `-Xptxas`, `-gencode` or `--use_fast_math`: the build stops with "unknown argument"
    (or the flags are silently meaningless), so the extension never builds on AMD GPUs.

    ## Example
    ```python
    extra_compile_args={"nvcc": ["-O3", "--use_fast_math"]}
    ```
    Use instead:
    ```python
    extra_compile_args={"nvcc": ["-O3"] if IS_HIP_EXTENSION else ["-O3", "--use_fast_math"]}
    ```

    ## Fix safety
    Unsafe: the flag list becomes `<list without the nvcc-only flags> if IS_HIP_EXTENSION
    else <list as written>`; the ROCm build then lacks whatever those flags achieved (fast
    math, register limits: `-ffast-math`/`-munsafe-fp-atomics` may be wanted instead).
    NVIDIA keeps its flags.

    ## References
    - https://github.com/facebookresearch/xformers/issues/1162
    """

    code = "ROC109"
    name = "nvcc-only-extension-flags"
    message = "nvcc-only flag `{flag}` in an extension build: hipcc rejects it on ROCm; gate the flag list"
    language = "python"
    pattern = r"(?:-Xptxas|--ptxas-options|-use_fast_math|-gencode)\b"
    fix_applicability = Applicability.UNSAFE

    valid = (
        "from torch.utils.cpp_extension import IS_HIP_EXTENSION, CUDAExtension\n"
        "nvcc = ['-O3'] if IS_HIP_EXTENSION else ['-O3', '--use_fast_math']\n"
        "ext = CUDAExtension('k', ['k.cu'], extra_compile_args={'nvcc': nvcc})\n",
        "print('build with -Xptxas=-v to see register use')\n",
        "from torch.utils.cpp_extension import CUDAExtension\nfrom build_tools.utils import rocm_build\n"
        "if rocm_build():\n    nvcc = ['-O3']\nelse:\n    nvcc = ['-O3', '--use_fast_math']\n"
        "ext = CUDAExtension('k', ['k.cu'], extra_compile_args={'nvcc': nvcc})\n",
    )
    invalid = (
        Example(
            "from setuptools import setup\nfrom torch.utils.cpp_extension import BuildExtension, CUDAExtension\n\n"
            "ext = CUDAExtension(\n    'fused', ['fused.cu'],\n"
            "    extra_compile_args={'cxx': ['-O3'], 'nvcc': ['-O3', '--use_fast_math', '-Xptxas', '-v']},\n)\n",
            expected=(
                'from setuptools import setup\n'
                'from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n'
                'from torch.utils.cpp_extension import IS_HIP_EXTENSION\n'
                '\n'
                'ext = CUDAExtension(\n'
                "    'fused', ['fused.cu'],\n"
                '    extra_compile_args={\n'
                "        'cxx': ['-O3'],\n"
                "        'nvcc': ['-O3'] if IS_HIP_EXTENSION else ['-O3', '--use_fast_math', '-Xptxas', '-v'],\n"
                '    },\n'
                ')\n'
            ),
            unsafe=True,
        ),
        "import torch.utils.cpp_extension as ext\n"
        "mod = ext.load('k', ['k.cu'], extra_cuda_cflags=['-gencode=arch=compute_80,code=sm_80'])\n",
    )

    def check(self, ctx) -> None:
        for hit in ctx.hits():
            literal = ctx.string_at(hit)
            if literal is None or not _NVCC_ONLY.match(literal.value):
                continue
            path = ctx.path_to(literal)
            flags = path[:-1]
            if not isinstance(flags[-1], (ast.List, ast.Tuple)) or ctx.gated(ctx.span_of(literal).start) \
                    or not self._goes_to_nvcc(ctx, flags):
                continue
            fix = gated_fix(ctx, "Drop nvcc-only flags on ROCm",
                            [gated_value_edit(ctx, flags[-1], flags[-2], _without_nvcc_flags(ctx, flags[-1]))],
                            Applicability.UNSAFE)
            ctx.report(ctx.span_of(literal), self.message.format(flag=literal.value.split("=")[0]), fix)

    @staticmethod
    def _goes_to_nvcc(ctx, flags) -> bool:
        for site in value_sites(ctx, flags, (ast.BinOp,)):
            site = climb(site, (ast.BinOp,))
            if ctx.gated(ctx.span_of(site[-1]).start):
                continue
            if dict_key(site) == "nvcc" or dict_key(site) in _DESTINATIONS:
                return True
        return False


def _without_nvcc_flags(ctx, flags: ast.List | ast.Tuple) -> str:
    kept, skip_next = [], False
    for element in flags.elts:
        value = element.value if isinstance(element, ast.Constant) and isinstance(element.value, str) else None
        if skip_next:
            skip_next = False
            continue
        if value is not None and _NVCC_ONLY.match(value):
            skip_next = value in _TAKES_NEXT
            continue
        kept.append(ctx.source_of(element))
    if isinstance(flags, ast.Tuple):
        return "(" + ", ".join(kept) + ("," if len(kept) == 1 else "") + ")"
    return "[" + ", ".join(kept) + "]"
