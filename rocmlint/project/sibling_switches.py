"""A switch's meaning from what it guards (design §2g): in a chain of ``#if``/``#elif``
branches where one branch includes CUDA-only headers and a sibling includes HIP headers, the
first branch's macro is the CUDA switch (undefined in the AMD build) and the sibling's the HIP
switch (defined). What the code states outranks what a name says, so a switch named in a
project's own words (``LIB_USING_CUDA``, ``LIB_BACKEND_A``) is decided where no build value is.

Read from the directive summaries alone; only files that include both a ``hip/`` header and a
CUDA-only one are looked at."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..cpp.cuda_headers import lookup as cuda_header
from ..cpp.preprocessor import NOT_MACROS, gate_polarity
from ..lazy_re import lazy_compile
from . import Evidence

_INCLUDED = lazy_compile(r'^\s*[<"]([^>"]+)[>"]')
_CONDITIONS = ("if", "ifdef", "ifndef", "elif")


@dataclass
class _Branch:
    kind: str  # if / ifdef / ifndef / elif / else
    condition: str
    line: int  # 0-based line of the directive
    cuda: list[str] = field(default_factory=list)  # CUDA-only headers it includes
    hip: list[str] = field(default_factory=list)  # HIP headers it includes


def _platform_of(header: str) -> str | None:
    if header.startswith(("hip/", "hipsparse/", "hipblas/", "hipsolver/", "hipcub/", "rocprim/", "hiprand/",
                          "rocblas/", "hipfft/", "rccl/")) or header.startswith(("hipsparse.h", "hipblas.h")):
        return "hip"
    entry = cuda_header(header)
    return "cuda" if entry is not None else None


def _chains(directives: list[tuple[int, int, str, str]]) -> list[list[_Branch]]:
    """Every closed ``#if`` chain with at least one CUDA-only and one HIP include among its
    own branches (includes nested deeper belong to the nested chain)."""
    found: list[list[_Branch]] = []
    stack: list[list[_Branch]] = []
    for first, _last, name, rest in directives:
        if name in ("if", "ifdef", "ifndef"):
            stack.append([_Branch(name, rest.strip(), first)])
        elif name in ("elif", "else") and stack:
            stack[-1].append(_Branch(name, rest.strip(), first))
        elif name == "endif" and stack:
            chain = stack.pop()
            if any(b.cuda for b in chain) and any(b.hip for b in chain):
                found.append(chain)
        elif name == "include" and stack:
            m = _INCLUDED.match(rest)
            platform = _platform_of(m.group(1)) if m else None
            if platform is not None and m is not None:
                getattr(stack[-1][-1], platform).append(m.group(1))
    return found


def _macro(branch: _Branch) -> tuple[str, bool] | None:
    """The single macro a branch tests and whether the branch is taken when it is defined."""
    if branch.kind == "else":
        return None
    kind = "if" if branch.kind == "elif" else branch.kind
    words = re.findall(r"[A-Za-z_]\w*", branch.condition)
    names = [w for w in words if w not in NOT_MACROS]
    if len(names) != 1:
        return None
    polarity = gate_polarity(kind, branch.condition, names[0])
    if polarity is None and kind == "if" and re.fullmatch(r"\s*(!?)\s*" + names[0] + r"\s*", branch.condition):
        polarity = not branch.condition.strip().startswith("!")  # #if M (a 0/1 switch)
    return None if polarity is None else (names[0], polarity)


_SELECTOR = lazy_compile(r"^\(*\s*([A-Za-z_]\w*)\s*==\s*(\d+)\s*\)*$")


def _selector(branch: _Branch) -> tuple[str, int] | None:
    """``#if (BACKEND == 2)``: one macro compared with one number (a back end chosen by value)."""
    if branch.kind not in ("if", "elif"):
        return None
    m = _SELECTOR.match(branch.condition.strip())
    return (m.group(1), int(m.group(2))) if m else None


def _headers(names: list[str]) -> str:
    shown = ", ".join(f"<{h}>" for h in names[:3])
    return shown + (f" (and {len(names) - 3} more)" if len(names) > 3 else "")


def infer_sibling_switches(files: dict) -> dict[str, tuple[bool, int | None, Evidence]]:
    """macro -> (defined on AMD, its value, evidence), for macros every chain agrees on."""
    votes: dict[str, set[tuple[bool, int | None]]] = {}
    why: dict[str, Evidence] = {}
    for rel, summary in files.items():
        directives = summary.directives
        if not directives:
            continue
        for chain in _chains(directives):
            hip_sibling = next(b for b in chain if b.hip)
            cuda_sibling = next(b for b in chain if b.cuda)
            hip_value = _selector(hip_sibling)
            cuda_value = _selector(cuda_sibling)
            if hip_value and cuda_value and hip_value[0] == cuda_value[0] and not hip_sibling.cuda:
                # a back end chosen by value: the HIP branch's number is the AMD build's
                macro, value = hip_value
                votes.setdefault(macro, set()).add((True, value))
                why.setdefault(macro, Evidence(
                    f"{value} on AMD by what it selects: `{macro} == {value}` includes {_headers(hip_sibling.hip)}; "
                    f"`{macro} == {cuda_value[1]}` includes {_headers(cuda_sibling.cuda)}",
                    f"{rel}:{hip_sibling.line + 1}"))
                continue
            for branch in chain:
                if branch.cuda and branch.hip:
                    continue  # both in one branch: it says nothing of the platform
                if not (branch.cuda or branch.hip):
                    continue
                tested = _macro(branch)
                if tested is None:
                    # #if M ... #else <the other platform>: the #if's macro is decided by the #else
                    if branch.kind != "else" or len(chain) != 2:
                        continue
                    tested = _macro(chain[0])
                    if tested is None:
                        continue
                    tested = (tested[0], not tested[1])
                macro, taken_when_defined = tested
                # the branch holding CUDA headers is not taken on AMD; the HIP one is
                taken_on_amd = bool(branch.hip)
                defined = taken_when_defined if taken_on_amd else not taken_when_defined
                votes.setdefault(macro, set()).add((defined, 1 if defined else None))
                other = cuda_sibling if branch.hip else hip_sibling
                mine = _headers(branch.hip or branch.cuda)
                theirs = _headers(other.hip or other.cuda)
                label = "#else" if other.kind == "else" else f"#{other.kind} {other.condition}"
                why.setdefault(macro, Evidence(
                    f"{'defined' if defined else 'undefined'} on AMD by what it guards: its branch includes "
                    f"{mine}; the sibling branch ({label}) includes {theirs}", f"{rel}:{branch.line + 1}"))
    return {m: (*next(iter(s)), why[m]) for m, s in votes.items() if len(s) == 1}
