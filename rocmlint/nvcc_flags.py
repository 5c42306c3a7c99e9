"""nvcc's own command-line flags, as ROCm's compilers take them (ROC109's table).

On ROCm, PyTorch's extension builds hand the "nvcc" flags to hipcc, and CMake builds that copy
``CMAKE_CUDA_FLAGS`` into ``CMAKE_HIP_FLAGS`` hand them to clang. Each form below was given to
both compilers on a one-kernel ``k.hip`` (``tests/test_nvcc_flags.py`` runs the same check
again wherever hipcc is installed):

- hipcc: ``HIP_PLATFORM=amd hipcc --offload-arch=gfx90a FLAG -c k.hip`` (HIP 5.2's Perl
  hipcc, which runs clang 15; gfx90a because clang 15 does not know gfx942);
- clang: ``clang++-19 -x hip --offload-arch=gfx942 --cuda-device-only -nogpulib -nogpuinc
  --no-gpu-bundle-output FLAG -c k.hip`` (current ROCm's hipcc passes such flags to amdclang++
  unchanged, so clang's verdict is what a ROCm 6 build sees).

A verdict is ``rejected`` (the compile fails: unknown or unsupported argument, or the value
after the flag read as an input file), ``ignored`` (it compiles, with an "argument unused"
warning: clang read the word as something else, e.g. ``-use_fast_math`` as ``-u se_fast_math``)
or ``accepted``. ROC109 reports a form that either compiler rejects; a form both compile
(``-Xcompiler -fPIC``, ``-lineinfo``, ``-use_fast_math``, ``-default-stream=per-thread``,
``-diag-suppress=177``) is not reported, whatever it means to them.
"""
from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from typing import Iterator

from .lazy_re import lazy_compile

HIP_VERSION = "5.2.21153"  # `hipcc --version` (HIP version: 5.2.21153-0, Debian's hipcc 5.2.3)
HIPCC_CLANG_VERSION = "15.0.6"  # the clang HIP 5.2's hipcc runs
CLANG_VERSION = "19"  # clang++-19 (Debian's clang-19)
REJECTED, IGNORED, ACCEPTED = "rejected", "ignored", "accepted"


@dataclass(frozen=True)
class FlagForm:
    """One way of writing an nvcc flag: ``written`` is what was compiled (the flag and, for a
    flag that takes the next word, that word); ``word`` matches the flag's own word."""

    written: tuple[str, ...]
    word: str  # regex, full match
    hipcc: str
    clang: str
    meaning: str  # what nvcc does with it

    @property
    def takes_next(self) -> bool:
        return len(self.written) == 2

    @property
    def reported(self) -> bool:
        return REJECTED in (self.hipcc, self.clang)

    @property
    def name(self) -> str:
        return self.written[0].split("=", 1)[0]

    def rejected_by(self) -> str:
        return " and ".join(name for name, verdict in (("hipcc", self.hipcc), ("clang", self.clang))
                            if verdict == REJECTED)


def _form(written: str, word: str, hipcc: str, clang: str, meaning: str) -> FlagForm:
    # shlex only where a quote or escape needs it: the table is built at every start-up
    words = shlex.split(written) if any(c in written for c in "\"'\\") else written.split()
    return FlagForm(tuple(words), word, hipcc, clang, meaning)


R, I, A = REJECTED, IGNORED, ACCEPTED
TABLE: tuple[FlagForm, ...] = (
    _form("-diag-suppress 177", r"-diag-suppress", R, R, "silence front-end diagnostics"),
    _form("--diag-suppress 177", r"--diag-suppress", R, R, "silence front-end diagnostics"),
    _form("--diag-suppress=177", r"--diag-suppress=.*", R, R, "silence front-end diagnostics"),
    _form("-diag-suppress=177", r"-diag-suppress=.*", I, I, "silence front-end diagnostics"),
    _form("--forward-unknown-opts", r"--forward-unknown-opts", R, R, "pass unknown options to the host compiler"),
    _form("-forward-unknown-opts", r"-forward-unknown-opts", R, R, "pass unknown options to the host compiler"),
    _form("--forward-unknown-to-host-compiler", r"--?forward-unknown-to-host-compiler", R, R,
          "pass unknown options to the host compiler"),
    _form("--ptxas-options=-v", r"--ptxas-options=.*", R, R, "options for ptxas"),
    _form("--ptxas-options -v", r"--ptxas-options", R, R, "options for ptxas"),
    _form("-Xptxas -v", r"-Xptxas", I, R, "options for ptxas"),
    _form("-Xptxas=-v", r"-Xptxas=.*", I, R, "options for ptxas"),
    _form("-gencode arch=compute_80,code=sm_80", r"-gencode", R, R, "virtual and real GPU architectures"),
    _form("-gencode=arch=compute_80,code=sm_80", r"-gencode=.*", R, R, "virtual and real GPU architectures"),
    _form("--generate-code=arch=compute_80,code=sm_80", r"--generate-code=.*", R, R,
          "virtual and real GPU architectures"),
    _form("--generate-code arch=compute_80,code=sm_80", r"--generate-code", R, R,
          "virtual and real GPU architectures"),
    _form("--use_fast_math", r"--use_fast_math", R, R, "fast-math device code"),
    _form("-use_fast_math", r"-use_fast_math", I, I, "fast-math device code"),
    _form("--expt-relaxed-constexpr", r"--expt-relaxed-constexpr", R, R, "call constexpr host functions on the device"),
    _form("-expt-relaxed-constexpr", r"-expt-relaxed-constexpr", I, R, "call constexpr host functions on the device"),
    _form("--expt-extended-lambda", r"--expt-extended-lambda", R, R, "__device__ lambdas in host code"),
    _form("-expt-extended-lambda", r"-expt-extended-lambda", I, R, "__device__ lambdas in host code"),
    _form("--extended-lambda", r"--extended-lambda", R, R, "__device__ lambdas in host code"),
    _form("-extended-lambda", r"-extended-lambda", I, R, "__device__ lambdas in host code"),
    _form("-Xcudafe --diag_suppress=177", r"-Xcudafe", R, R, "options for the CUDA front end"),
    _form("--threads 4", r"--threads", R, R, "compile several architectures in parallel"),
    _form("--threads=4", r"--threads=.*", R, R, "compile several architectures in parallel"),
    _form("-t 4", r"-t", R, R, "compile several architectures in parallel"),
    _form("-lineinfo", r"-lineinfo", I, I, "line information for the profiler"),
    _form("--generate-line-info", r"--generate-line-info", R, R, "line information for the profiler"),
    _form("--keep", r"--keep", R, R, "keep intermediate files"),
    _form("-keep", r"-keep", R, R, "keep intermediate files"),
    _form("-maxrregcount=64", r"-maxrregcount=.*", R, R, "cap registers per thread"),
    _form("--maxrregcount=64", r"--maxrregcount=.*", R, R, "cap registers per thread"),
    _form("-maxrregcount 64", r"--?maxrregcount", R, R, "cap registers per thread"),
    _form("-arch=sm_80", r"-arch=(?:sm|compute)_\w+|-arch=(?:native|all|all-major)", I, R,
          "the GPU architecture"),
    _form("-arch sm_80", r"-arch", I, R, "the GPU architecture"),
    _form("--gpu-architecture=sm_80", r"--gpu-architecture=.*", R, R, "the GPU architecture"),
    _form("--gpu-architecture sm_80", r"--gpu-architecture", R, R, "the GPU architecture"),
    _form("-code=sm_80", r"-code=.*", R, R, "the real GPU architectures"),
    _form("--gpu-code=sm_80", r"--gpu-code=.*", R, R, "the real GPU architectures"),
    _form("-rdc=true", r"-rdc=.*", R, R, "relocatable device code"),
    _form("--relocatable-device-code=true", r"--relocatable-device-code=.*", R, R, "relocatable device code"),
    _form("-Xcompiler -fPIC", r"-Xcompiler", I, I, "options for the host compiler"),
    _form("-Xcompiler=-fPIC", r"-Xcompiler=.*", I, R, "options for the host compiler"),
    _form("--compiler-options -fPIC", r"--compiler-options", R, R, "options for the host compiler"),
    _form("--compiler-options=-fPIC", r"--compiler-options=.*", R, R, "options for the host compiler"),
    _form("--default-stream per-thread", r"--default-stream", R, R, "the default stream's kind"),
    _form("--default-stream=per-thread", r"--default-stream=.*", R, R, "the default stream's kind"),
    _form("-default-stream=per-thread", r"-default-stream=.*", I, I, "the default stream's kind"),
    _form("-default-stream per-thread", r"-default-stream", R, R, "the default stream's kind"),
    _form("-res-usage", r"-res-usage", R, R, "print register and memory use"),
    _form("--resource-usage", r"--resource-usage", R, R, "print register and memory use"),
)
_MATCHERS = tuple((lazy_compile(form.word), form) for form in TABLE)
# Words some reported form starts with (the rule's prefilter is built from these).
LEADING_WORDS = tuple(sorted({form.name for form in TABLE if form.reported}))


def form_of(word: str) -> FlagForm | None:
    """The table's form of one command-line word (None: not an nvcc flag of the table)."""
    if not word.startswith("-"):
        return None
    for matcher, form in _MATCHERS:
        if matcher.fullmatch(word):
            return form
    return None


@dataclass(frozen=True)
class Found:
    """A reported form in a word list: ``index`` of its word, ``count`` of words it spans."""

    index: int
    count: int
    form: FlagForm


def find(words: list[str]) -> Iterator[Found]:
    """The reported forms among command-line ``words`` (a flag's own value word is skipped; the
    value of a flag that takes one may sit in the next word or be missing at the list's end)."""
    i = 0
    while i < len(words):
        form = form_of(words[i])
        count = 2 if form is not None and form.takes_next and i + 1 < len(words) else 1
        if form is not None and form.reported:
            yield Found(i, count, form)
        i += count


# The check the table records; the test runs it again where the compilers are installed.
_HIP_KERNEL = "#include <hip/hip_runtime.h>\n__global__ void k(float* x) { x[0] *= 2.0f; }\n"
_CLANG_KERNEL = "__attribute__((global)) void k(float* x) { x[0] *= 2.0f; }\n"
_HIPCC = ("hipcc", "--offload-arch=gfx90a")
_CLANG = ("clang++-19", "-x", "hip", "--offload-arch=gfx942", "--cuda-device-only", "-nogpulib", "-nogpuinc",
          "--no-gpu-bundle-output")


def _verdict(command: tuple[str, ...], kernel: str, words: tuple[str, ...]) -> str:
    import subprocess  # only the table's probe runs compilers; a lint never does
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        with open(os.path.join(folder, "k.hip"), "w") as handle:
            handle.write(kernel)
        done = subprocess.run([*command, *words, "-c", "k.hip", "-o", "k.o"], cwd=folder, capture_output=True,
                              text=True, env=dict(os.environ, HIP_PLATFORM="amd"), timeout=300)
    if done.returncode != 0:
        return REJECTED
    return IGNORED if "unused" in done.stderr else ACCEPTED


def probe(words: tuple[str, ...]) -> tuple[str, str]:
    """(hipcc's verdict, clang's verdict) on ``words``, as recorded in the table."""
    return _verdict(_HIPCC, _HIP_KERNEL, words), _verdict(_CLANG, _CLANG_KERNEL, words)


def baseline_compiles() -> bool:
    """Both compilers build the kernel with no extra flag (the check means something)."""
    return probe(()) == (ACCEPTED, ACCEPTED)
