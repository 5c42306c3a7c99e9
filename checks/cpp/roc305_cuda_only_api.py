from __future__ import annotations

import os
import re
from typing import NamedTuple

from rocmlint.cpp import cuda_only_apis as table
from rocmlint.cpp.lexical import WORD_BYTES, starts_word
from rocmlint.lazy_re import lazy_compile
from rocmlint.model import Applicability, Edit, Fix, Span
from rocmlint.rule import Example, Rule

_INCLUDE_LINE = lazy_compile(rb"[ \t]*#[ \t]*include\b")
# a variable a `this_cluster()` call initialises, or one declared a cluster_group
_CLUSTER_VARIABLE = lazy_compile(
    rb"\bcluster_group\s*&?\s*(\w+)\s*[=;({),]"
    rb"|\bauto\s*&?\s*(\w+)\s*=\s*(?:[\w:]*::)?this_cluster\s*\(")
# `device.device_type == kDLCUDA`, `case kDLCUDA:`: what the unsafe fix rewrites
_DLPACK_COMPARISON = lazy_compile(
    rb"(?<![\w.>)\]])(\w+(?:\(\))?(?:\s*(?:\.|->)\s*\w+(?:\(\))?)*)\s*(==|!=)\s*kDLCUDA\b(?!\s*[.(\[])")
# what precedes or follows a name the file defines: `#define NAME`, `NAME = 2,`, `static __device__ T NAME(`
_MACRO_HEAD = lazy_compile(rb"[ \t]*#[ \t]*define[ \t]+")
_ENUMERATOR_TAIL = lazy_compile(rb"[ \t]*(?:=(?!=)|,)")
_FUNCTION_HEAD = lazy_compile(rb"\b(?:__device__|__host__|__forceinline__|inline|static)\b[^;{}()=]*$")
_ONE_LINE_STATEMENTS = frozenset({"return_statement", "expression_statement", "declaration"})


class _Use(NamedTuple):
    start: int
    end: int
    entry: table.CudaOnlyApi
    name: str


class CudaOnlyApiUse(Rule):
    """A CUDA API that HIP lacks is used in code the AMD build compiles.

    ## What it does
    Reports uses of CUDA names that have no HIP definition, from one table
    (`rocmlint/cpp/cuda_only_apis.py`) that gives each one's ROCm counterpart, or none:
    the NVSHMEM API (`nvshmem_*`, `nvshmemx_*`, `NVSHMEM_*`: rocSHMEM's `rocshmem_*`),
    Hopper's Tensor Memory Accelerator (`CUtensorMap`, `cuTensorMapEncode*`, the bulk tensor
    copies `cuda::device::experimental::cp_async_bulk_tensor_*`, `cuda::ptx::*`),
    `__grid_constant__`, thread-block clusters (`__cluster_dims__`, the cluster launch
    attributes of `cudaLaunchKernelEx`, `cooperative_groups::this_cluster`, `cluster_group`,
    `cluster.sync()` and the other members of a cluster variable, `map_shared_rank`),
    `cooperative_groups::labeled_partition`, intrinsics HIP does not define (`__h*2_mask`,
    `__stcs`, `__stcg`, `__stwb`, `__stwt`, `__ldlu`, `__ldcv`, `__nanosleep`), libcu++ names
    (`cuda::std::*`, `cuda::atomic_ref`, `cuda::barrier`, `cuda::pipeline`, `::cuda::ceil_div`,
    `cuda::annotated_ptr` ...) with or without their `<cuda/...>` include, and DLPack device
    checks against `kDLCUDA` that a ROCm tensor (`kDLROCM`) fails. `#include` lines are left
    to ROC303; a name the file defines itself for the AMD build (`#define __grid_constant__`,
    a `__hgt2_mask` shim, an enumerator) is not reported; a line is reported once, naming its
    other uses.

    ## Why is this bad?
    HIP has no declaration of these names: the AMD build stops compiling, and hipify leaves
    them alone. Where ROCm has a counterpart (rocSHMEM, libhipcxx, `hipLaunchKernelEx`,
    `__builtin_nontemporal_store`) the port is a rename with a check of the semantics; where it
    has none (TMA, clusters, distributed shared memory) the algorithm needs an AMD path. A
    DLPack check for `kDLCUDA` compiles, but rejects every ROCm tensor at run time.

    ## Example
    ```cpp
    __global__ void ring_put(float* buf, const float* src, size_t n) {
      nvshmem_putmem(buf, src, n * sizeof(float), (nvshmem_my_pe() + 1) % nvshmem_n_pes());
    }
    ```
    Use instead:
    ```cpp
    __global__ void ring_put(float* buf, const float* src, size_t n) {
    #if defined(__HIP_PLATFORM_AMD__)
      rocshmem_putmem(buf, src, n * sizeof(float), (rocshmem_my_pe() + 1) % rocshmem_n_pes());
    #else
      nvshmem_putmem(buf, src, n * sizeof(float), (nvshmem_my_pe() + 1) % nvshmem_n_pes());
    #endif
    }
    ```

    ## Fix safety
    Display-only, but for DLPack checks: in a one-line `return`, assignment or declaration,
    `x == kDLCUDA` becomes `(x == kDLCUDA || x == kDLROCM)` for the AMD build (`!=`: `&&`), an
    unsafe fix: the code behind the check may still do CUDA-only things with the tensor.

    ## References
    - https://github.com/ROCm/rocSHMEM
    - https://github.com/ROCm/libhipcxx
    - https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_cpp_language_extensions.html
    - https://rocm.docs.amd.com/projects/HIPIFY/en/latest/tables/CUDA_Device_API_supported_by_HIP.html
    - https://github.com/dmlc/dlpack/blob/main/include/dlpack/dlpack.h
    """

    code = "ROC305"
    name = "cuda-only-api"
    language = "cpp"
    message = "CUDA API that HIP lacks, in code the AMD build compiles"
    pattern = table.pattern()
    fix_applicability = Applicability.UNSAFE

    valid = (
        Example(
            "#if defined(__HIP_PLATFORM_AMD__)\n"
            "#define __grid_constant__\n"
            "#endif\n"
            "__global__ void scale(const __grid_constant__ Params p, float* out) { out[0] = p.alpha; }\n"
        ),
        Example(
            "__global__ void ring_put(float* buf, const float* src, size_t n) {\n"
            "#if defined(__HIP_PLATFORM_AMD__)\n"
            "  rocshmem_putmem(buf, src, n * sizeof(float), (rocshmem_my_pe() + 1) % rocshmem_n_pes());\n"
            "#else\n"
            "  nvshmem_putmem(buf, src, n * sizeof(float), (nvshmem_my_pe() + 1) % nvshmem_n_pes());\n"
            "#endif\n"
            "}\n"
        ),
        Example("bool on_gpu(const DLTensor& t) {\n"
                "  return t.device.device_type == kDLCUDA || t.device.device_type == kDLROCM;\n}\n"),
        Example("#include <cuda/std/atomic>\n"),  # ROC303's finding
    )
    invalid = (
        Example(
            "__global__ void ring_put(float* buf, const float* src, size_t n) {\n"
            "  nvshmem_putmem(buf, src, n * sizeof(float), (nvshmem_my_pe() + 1) % nvshmem_n_pes());\n"
            "}\n"
        ),
        Example("__global__ void __cluster_dims__(2, 1, 1) pair_reduce(float* out) {\n"
                "  cooperative_groups::this_cluster().sync();\n}\n"),
        Example("int tiles(int n) { return ::cuda::ceil_div(n, 128); }\n"),
        Example(
            "bool on_gpu(const DLTensor& t) {\n  return t.device.device_type == kDLCUDA;\n}\n",
            expected=(
                "bool on_gpu(const DLTensor& t) {\n"
                "#if defined(__HIP_PLATFORM_AMD__)\n"
                "  return (t.device.device_type == kDLCUDA || t.device.device_type == kDLROCM);\n"
                "#else\n"
                "  return t.device.device_type == kDLCUDA;\n"
                "#endif\n"
                "}\n"
            ),
            unsafe=True,
        ),
    )

    @classmethod
    def literals(cls) -> tuple[bytes, ...]:
        return table.literals()  # more names than the pattern's own factors can hold

    def check(self, ctx) -> None:
        uses: list[_Use] = []
        clusters = False
        source = ctx.source
        for hit in ctx.hits():
            located = table.entry_at(source, hit.start) if _starts_name(source, hit.start) else None
            if located is None:  # inside a word (`my_nvshmem_put`), another namespace's (`at::cuda::`)
                continue
            entry, name = located
            use = _Use(hit.start, hit.end, entry, name)
            clusters = clusters or entry.cuda in ("cooperative_groups::this_cluster",
                                                  "cooperative_groups::cluster_group")
            if _reported(ctx, use):
                uses.append(use)
        if clusters:
            uses.extend(use for use in _cluster_members(ctx) if _reported(ctx, use))
        uses.sort()
        folded = [u for u in uses if u.entry.once_a_file]
        more = {id(folded[0]): len(folded) - 1} if folded else {}
        by_line: dict[int, list[_Use]] = {}
        for use in uses:
            if not use.entry.once_a_file or id(use) in more:
                by_line.setdefault(ctx.line_of(use.start), []).append(use)
        for line, found in by_line.items():
            first = found[0]
            others = list(dict.fromkeys(u.name for u in found[1:] if u.name != first.name))
            note = None
            if first.entry.cuda.startswith("kDL") and not _compared(ctx.source, first):
                note = table.DLPACK_NAMED_NOTE.format(rocm=(first.entry.rocm or "").strip("`"))
            message = table.message(first.entry, first.name, note)
            if others:
                message += "; also on this line: " + ", ".join(f"`{name}`" for name in others)
            if more.get(id(first)):
                message += f" ({more[id(first)]} more use{'s' if more[id(first)] != 1 else ''} in this file)"
            fix = _dlpack_fix(ctx, line, found) if first.entry.cuda == "kDLCUDA" else None
            ctx.report(Span(first.start, first.end), message, fix)


def _starts_name(source: bytes, start: int) -> bool:
    """A match of the pattern that starts a name: not inside a word, and a ``cuda::`` not
    qualified by another namespace (``::cuda::ceil_div`` is libcu++, ``at::cuda::`` is not)."""
    if not starts_word(source, start):
        return False
    if source.startswith(b"cuda::", start) and source[max(start - 2, 0):start] == b"::":
        return start < 3 or (source[start - 3] not in WORD_BYTES and source[start - 3:start - 2] != b">")
    return True


def _reported(ctx, use: _Use) -> bool:
    """In code the AMD build compiles, not an #include line (ROC303's), not a name the file
    defines for the AMD build, not a DLPack check that accepts ROCm already."""
    source = ctx.source
    line_start = source.rfind(b"\n", 0, use.start) + 1
    if _INCLUDE_LINE.match(source, line_start) or not ctx.in_code(use.start) or ctx.nvidia_only(use.start):
        return False
    if use.entry.cuda.startswith("kDL") and _accepts_rocm(ctx, use.start):
        return False
    name = use.name.lstrip(":")
    return not _defined_here(ctx, name) and not (use.entry.prefix and _project_name(ctx, name, use.entry.prefix))


def _project_name(ctx, name: str, prefix: str) -> bool:
    """A name of a prefixed family (``nvshmem_*``) that the project declares itself: flux's
    ``nvshmem_create_tensor(...)`` wrapper, a ``nvshmem_team`` member or parameter. Declared in
    the file or in a header it includes with quotes (not the library's own, vendored)."""
    from rocmlint.cpp.declared_names import declared_in_includes, declares

    key = ("roc305-project-name", name)
    if key not in ctx.cache:
        record = ctx.project.record if ctx.project is not None else None
        model = ctx.model
        resolve = None
        if model is not None:
            def resolve(includer: str, header: str) -> str | None:
                rel = model.rel(includer)
                found = model.resolve_include(rel, header) if rel is not None else None
                return os.path.join(model.root, found) if found is not None else None
        ctx.cache[key] = declares(ctx.source, name.encode(), ctx.in_code) or \
            declared_in_includes(ctx.path, ctx.source, name, prefix.rstrip("_").lower().rstrip("x"), record, resolve)
    return ctx.cache[key]


def _compared(source: bytes, use: _Use) -> bool:
    """A DLPack device type in a comparison or a case label, not one the code names."""
    before = source[max(use.start - 16, 0):use.start].rstrip()
    after = source[use.end:use.end + 4].lstrip()
    return before.endswith((b"==", b"!=")) or re.search(rb"\bcase$", before) is not None or \
        after.startswith((b"==", b"!="))


def _accepts_rocm(ctx, offset: int) -> bool:
    """``kDLROCM`` on the line of ``offset`` or a line next to it (`case kDLCUDA: case kDLROCM:`)."""
    line = ctx.line_of(offset)
    first = ctx.lines.line_start(max(line - 1, 0))
    last = ctx.lines.line_start(line + 2) if line + 2 < ctx.lines.line_count else len(ctx.source)
    return table.DLPACK_ROCM.search(ctx.source, first, last) is not None


def _defined_here(ctx, name: str) -> bool:
    """The file defines ``name`` where the AMD build compiles it: a macro (`#define
    __grid_constant__` on AMD), a function (a `__hgt2_mask` shim) or an enumerator. Read at
    each occurrence of the name (a file may use hundreds of NVSHMEM names)."""
    key = ("roc305-defined", name)
    if key not in ctx.cache:
        source, word = ctx.source, name.encode()
        defined = False
        at = source.find(word)
        while at >= 0 and not defined:
            line_start = source.rfind(b"\n", 0, at) + 1
            line_end = source.find(b"\n", at)
            before, after = source[line_start:at], source[at + len(word):line_end if line_end >= 0 else len(source)]
            if starts_word(source, at) and (not after or after[:1] not in WORD_BYTES) and \
                    (_MACRO_HEAD.fullmatch(before) or (not before.strip() and _ENUMERATOR_TAIL.match(after))
                     or (_FUNCTION_HEAD.search(before) and after.lstrip().startswith(b"("))):
                defined = ctx.in_code(at) and ctx.amd_reach(ctx.line_of(at)) is not False
            at = source.find(word, at + 1)
        ctx.cache[key] = defined
    return ctx.cache[key]


def _cluster_members(ctx) -> list[_Use]:
    """``cluster.sync()`` and the other members, called on variables that a ``this_cluster()``
    call initialises or that are declared ``cluster_group``."""
    entry = table.entry_named("cluster.sync()")
    names = {m.group(m.lastindex or 1) for m in _CLUSTER_VARIABLE.finditer(ctx.source) if ctx.in_code(m.start())}
    found = []
    for variable in sorted(names):
        member = re.compile(rb"\b" + re.escape(variable) + entry.regex.encode())
        for m in member.finditer(ctx.source):
            text = re.sub(r"\s+", "", m.group().decode("utf-8", "replace"))
            found.append(_Use(m.start(), m.end() - 1, entry, text + ")"))
    return found


def _dlpack_fix(ctx, line: int, found: list[_Use]) -> Fix | None:
    """Accept ``kDLROCM`` too, in the AMD build: ``x == kDLCUDA`` becomes ``(x == kDLCUDA || x ==
    kDLROCM)`` (``!=``: ``&&``), for one comparison on a line that is one whole statement."""
    from rocmlint.fixers.cpp_gate import build_fix

    if sum(u.entry.cuda == "kDLCUDA" for u in found) != 1:
        return None
    source = ctx.source
    start = ctx.lines.line_start(line)
    end = ctx.lines.line_start(line + 1) if line + 1 < ctx.lines.line_count else len(source)
    comparisons = [m for m in _DLPACK_COMPARISON.finditer(source, start, end) if ctx.in_code(m.start())]
    if len(comparisons) != 1:
        return None
    m = comparisons[0]
    statement = ctx.statement_of(ctx.node_at(Span(m.start(), m.end())))
    if statement is None or statement.type not in _ONE_LINE_STATEMENTS or \
            ctx.line_of(statement.start_byte) != line or ctx.last_line(statement) != line:
        return None  # an `if (...) {`: gating it would copy its body
    operand = m.group(1).decode("utf-8", "replace")
    op = m.group(2).decode()
    joined = " || " if op == "==" else " && "
    text = f"({operand} {op} kDLCUDA{joined}{operand} {op} kDLROCM)"
    return build_fix(ctx, statement, [Edit(Span(m.start(), m.end()), text)], "accept kDLROCM too",
                     Applicability.UNSAFE)
