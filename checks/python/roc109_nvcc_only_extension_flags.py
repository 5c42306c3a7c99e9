from __future__ import annotations

import ast
import re

from rocmlint import nvcc_flags
from rocmlint.fixers.python_gate import gated_fix, gated_value_edit
from rocmlint.model import Applicability, Span
from rocmlint.python.flow import assigned_name, called_name, climb, dict_key, value_sites
from rocmlint.rule import Example, Rule

_DESTINATIONS = frozenset({"extra_cuda_cflags", "extra_compile_args"})
# The prefilter: a word some reported form of the table starts with.
_PATTERN = r"(?<![\w-])(?:%s)(?![\w-])" % "|".join(
    re.escape(word) for word in sorted(nvcc_flags.LEADING_WORDS, key=len, reverse=True))


class NvccOnlyExtensionFlags(Rule):
    """nvcc-only flags in an extension or CMake build that ROCm also runs.

    ## What it does
    Finds nvcc's own flags that hipcc or clang reject, from one table checked against both
    compilers (`rocmlint/nvcc_flags.py`: HIP 5.2's hipcc and clang 19): `-diag-suppress`,
    `--forward-unknown-opts`, `-Xptxas`/`--ptxas-options`, `-gencode`/`--generate-code`,
    `--use_fast_math`, `--expt-relaxed-constexpr`, `--expt-extended-lambda`/`--extended-lambda`,
    `-Xcudafe`, `--threads`/`-t`, `--generate-line-info`, `--keep`, `-maxrregcount`,
    `-arch=sm_XX`/`--gpu-architecture`, `-code=`, `-rdc`/`--relocatable-device-code`,
    `-Xcompiler=`/`--compiler-options`, `--default-stream`, `-res-usage`. Forms that both
    compilers build with (`-Xcompiler -fPIC`, `-lineinfo`, `-use_fast_math`,
    `-diag-suppress=177`, `-default-stream=per-thread`) are not reported.

    In Python, the nvcc flags of `CUDAExtension(..., extra_compile_args={"nvcc": [...]})` and
    `torch.utils.cpp_extension.load(..., extra_cuda_cflags=[...])` (setup.py, build.py, any
    module), also through flag lists assigned to variables first, concatenated, extended
    with `+=` or written as f-strings, unless gated: the one gate model of every Python rule
    (`if IS_HIP_EXTENSION:` ... `else:`, `torch.version.hip`, the project's own helpers and
    platform variables, and, when no definition is visible, a name that states ROCm:
    `if rocm_build():`, `if USE_ROCM:`, `ROCM_HOME is not None`).

    In CMake files (`CMakeLists.txt`, `*.cmake`), flags that reach the HIP compile:
    `CMAKE_HIP_FLAGS` and FindHIP's `HIP_HIPCC_FLAGS`, `$<$<COMPILE_LANGUAGE:HIP>:...>` in
    `target_compile_options`/`add_compile_options`, and flags set in `CMAKE_CUDA_FLAGS`,
    `CUDA_NVCC_FLAGS` or any variable (`set`, `string(APPEND)`, `list(APPEND)`) that the file
    later copies into one of those (`set(CMAKE_HIP_FLAGS "${CMAKE_CUDA_FLAGS}")`); CUDA's
    flags and `$<$<COMPILE_LANGUAGE:CUDA>:...>` count too where the file makes hipcc the CUDA
    compiler. Silent inside branches a ROCm build does not take (`if(NOT USE_ROCM)`, the
    `else()` of `if(USE_ROCM)`, `if(WITH_CUDA)`, `if(CMAKE_CUDA_COMPILER)`), and for CUDA
    flags that never reach HIP (kept apart from the HIP branch).

    ## Why is this bad?
    On ROCm, PyTorch hands the "nvcc" flags to hipcc, and hipify-style CMake builds hand the
    CUDA flags to the HIP compile: clang stops with "unknown argument" or "unsupported
    option" (a flag's value word, as in `-diag-suppress 177`, becomes a missing input file),
    so the extension never builds on AMD GPUs.

    ## Example
    ```python
    extra_compile_args={"nvcc": ["-O3", "--use_fast_math"]}
    ```
    Use instead:
    ```python
    extra_compile_args={"nvcc": ["-O3"] if IS_HIP_EXTENSION else ["-O3", "--use_fast_math"]}
    ```

    ## Fix safety
    Unsafe, Python only: the flag list becomes `<list without the nvcc-only flags> if
    IS_HIP_EXTENSION else <list as written>`; the ROCm build then lacks whatever those flags
    achieved (fast math, register limits: `-ffast-math`/`-munsafe-fp-atomics` may be wanted
    instead). NVIDIA keeps its flags. A list element that holds other words besides the flag
    (`"-O3 --use_fast_math"`) and CMake findings get no fix.

    ## References
    - https://github.com/facebookresearch/xformers/issues/1162
    """

    code = "ROC109"
    name = "nvcc-only-extension-flags"
    message = "nvcc-only flag `{flag}` {where}: rejected on ROCm by {compiler}; {remedy}"
    language = "python"
    also_languages = ("manifest",)
    pattern = _PATTERN
    requires_any = (b"nvcc", b"NVCC", b"cuda_cflags", b"extra_compile_args", b"CUDA_FLAGS", b"HIP_FLAGS",
                    b"HIPCC_FLAGS", b"COMPILE_LANGUAGE")
    fix_applicability = Applicability.UNSAFE

    valid = (
        "from torch.utils.cpp_extension import IS_HIP_EXTENSION, CUDAExtension\n"
        "nvcc = ['-O3'] if IS_HIP_EXTENSION else ['-O3', '--use_fast_math']\n"
        "ext = CUDAExtension('k', ['k.cu'], extra_compile_args={'nvcc': nvcc})\n",
        "print('build with -Xptxas=-v to see register use')\n",
        "from torch.utils.cpp_extension import CUDAExtension\nfrom build_tools.utils import rocm_build\n"
        "if rocm_build():\n    nvcc = ['-O3']\nelse:\n    nvcc = ['-O3', '--use_fast_math']\n"
        "ext = CUDAExtension('k', ['k.cu'], extra_compile_args={'nvcc': nvcc})\n",
        "from torch.utils.cpp_extension import CUDAExtension\n"
        "ext = CUDAExtension('k', ['k.cu'], extra_compile_args={'nvcc': ['-O3', '-Xcompiler', '-fPIC', '-lineinfo']})\n",
        Example("project(kern LANGUAGES CXX HIP)\nif(USE_ROCM)\n  set(CMAKE_HIP_FLAGS \"${CMAKE_HIP_FLAGS} -O3\")\n"
                "else()\n  string(APPEND CMAKE_CUDA_FLAGS \" --expt-relaxed-constexpr\")\nendif()\n",
                filename="CMakeLists.txt"),
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
        "from torch.utils.cpp_extension import CUDAExtension\n"
        "flags = ['-O3', '-diag-suppress', '177', '--forward-unknown-opts']\n"
        "ext = CUDAExtension('k', ['k.cu'], extra_compile_args={'nvcc': flags + ['-std=c++17']})\n",
        Example("project(kern LANGUAGES CXX HIP)\nstring(APPEND CMAKE_CUDA_FLAGS \" --expt-relaxed-constexpr\")\n"
                "if(USE_ROCM)\n  set(CMAKE_HIP_FLAGS \"${CMAKE_HIP_FLAGS} ${CMAKE_CUDA_FLAGS}\")\nendif()\n",
                filename="CMakeLists.txt"),
    )

    def check(self, ctx) -> None:
        if ctx.language == "manifest":
            if ctx.kind == "cmake":
                self._cmake(ctx)
            return
        done: set[int] = set()
        for hit in ctx.hits():
            located = _element_at(ctx, hit.start)
            if located is None or id(located[0][-1]) in done:
                continue
            path, container, element = located
            done.add(id(container))
            if ctx.gated(ctx.span_of(container).start) or not self._goes_to_nvcc(ctx, path):
                continue
            if _nvidia_architecture_build(ctx, path) is not None:
                continue  # a CUTLASS or sm_90a/sm_100a extension: no ROCm build of it can exist
            words, owners = _list_words(container)
            found = [f for f in nvcc_flags.find(words) if not ctx.gated(ctx.span_of(container.elts[owners[f.index]]).start)]
            if not found:
                continue
            kept = _without_nvcc_flags(ctx, container, words, owners, found)
            for f in found:
                node = container.elts[owners[f.index]]
                fix = None
                if kept is not None:
                    fix = gated_fix(ctx, "Drop nvcc-only flags on ROCm",
                                    [gated_value_edit(ctx, container, path[-2], kept)], Applicability.UNSAFE)
                ctx.report(ctx.span_of(node), self.message.format(
                    flag=f.form.name, where="in an extension build", compiler=f.form.rejected_by(),
                    remedy="gate the flag list"), fix)

    @staticmethod
    def _goes_to_nvcc(ctx, flags, depth: int = 0) -> bool:
        for site in value_sites(ctx, flags, (ast.BinOp,)):
            site = climb(site, (ast.BinOp,))
            if ctx.gated(ctx.span_of(site[-1]).start):
                continue
            if dict_key(site) == "nvcc" or dict_key(site) in _DESTINATIONS:
                return True
            # `nvcc = base + [...]`: the list reaches nvcc through another name.
            if depth < 3 and site is not flags and assigned_name(site) is not None \
                    and NvccOnlyExtensionFlags._goes_to_nvcc(ctx, site, depth + 1):
                return True
        return False

    def _cmake(self, ctx) -> None:
        from rocmlint.manifest import cmake_flags
        from rocmlint.manifest.kinds import named_for_another_platform

        if named_for_another_platform(ctx.path):
            return
        text = ctx.source.decode("utf-8", errors="surrogateescape")
        if len(text) != len(ctx.source):
            return  # non-ASCII: offsets differ; rare enough to skip
        commands = cmake_flags.commands(text)
        uses = cmake_flags.flag_uses(commands)
        cuda_is_hip = cmake_flags.cuda_compiler_is_hip(commands)
        for use in uses:
            if use.command.taken is False:
                continue
            for language in {w.language for w in use.words}:
                words = [w for w in use.words if w.language == language]
                found = list(nvcc_flags.find([w.text for w in words]))
                if not found:
                    continue
                how = cmake_flags.reaches_hip(use.variable, language, use.command.start, uses, cuda_is_hip)
                if how is None:
                    continue
                for f in found:
                    word = words[f.index]
                    ctx.report(Span(word.start, word.start + len(word.text)), self.message.format(
                        flag=f.form.name, where=f"reaches the HIP compile ({how})", compiler=f.form.rejected_by(),
                        remedy="keep it in the CUDA branch"))


# What makes an extension one that only NVIDIA can build, whatever its flags: CUTLASS/CuTe
# (headers, defines) or an architecture-specific target (`sm_90a`, `compute_100a`), whose
# instructions (wgmma, tcgen05, TMA) no AMD GPU has. Compiled on first use (re's cache).
_NVIDIA_ARCHITECTURE_BUILD = (r"(?i:cutlass)|\bCUTE_|\bcute/|(?:sm|compute)_?(?:9|10|11|12)\d[af]\b"
                              r"|\b(?:tcgen05|wgmma)\b")
_EXTENSION_CALLS = ("CUDAExtension", "CppExtension", "Extension", "load", "load_inline")


def _nvidia_architecture_build(ctx, path: list) -> str | None:
    """The extension call holding the flags (or, when they are set apart from any call, a file
    that never names ROCm) builds CUTLASS or an sm_90a-style target: its words say which."""
    call = next((node for node in reversed(path) if isinstance(node, ast.Call) and (
        called_name(node) in _EXTENSION_CALLS)),
        None)
    if call is not None:
        text = ctx.text(ctx.span_of(call))
    else:
        text = ctx.source.decode("utf-8", "replace")
        if re.search(r"(?i:rocm)|\bhip", text):
            return None
    found = re.search(_NVIDIA_ARCHITECTURE_BUILD, text)
    return found.group(0) if found else None


def _element_at(ctx, offset: int):
    """(path to the flag list, the list, the element) for a hit inside a string element of a
    list or tuple (a plain string or an f-string)."""
    path = ctx.node_path(offset)
    for k in range(len(path) - 2, -1, -1):
        container, element = path[k], path[k + 1]
        if isinstance(container, (ast.List, ast.Tuple)) and element in container.elts:
            if _text(element) is None:
                return None
            return path[: k + 1], container, element
    return None


def _text(node) -> str | None:
    """A list element's words as written (an f-string's fields stand as `{}`)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "{}"
                       for v in node.values)
    return None


def _list_words(container) -> tuple[list[str], list[int]]:
    """The command-line words of a flag list and, per word, the index of its element."""
    words: list[str] = []
    owners: list[int] = []
    for index, element in enumerate(container.elts):
        text = _text(element)
        for word in (text.split() if text is not None else ["{}"]):
            words.append(word)
            owners.append(index)
    return words, owners


def _without_nvcc_flags(ctx, container, words: list[str], owners: list[int], found) -> str | None:
    """The list without the elements the reported flags (and their values) take up; None when
    an element also holds other words."""
    dropped_words = {i for f in found for i in range(f.index, f.index + f.count)}
    elements = {owners[i] for i in dropped_words}
    for index in elements:
        if any(owners[i] == index and i not in dropped_words for i in range(len(words))):
            return None
    kept = [ctx.source_of(e) for i, e in enumerate(container.elts) if i not in elements]
    if isinstance(container, ast.Tuple):
        return "(" + ", ".join(kept) + ("," if len(kept) == 1 else "") + ")"
    return "[" + ", ".join(kept) + "]"
