"""The CPU executor behind ``rocmlint verify --run``: builds a single-file HIP (or CUDA) test
program for the host against rocmlint's own runtime header (``executor_include/rocmlint_executor.h``)
and runs it with waves of 64 or 32 lanes.

A build rewrites ``<<<...>>>`` launches (``launch_syntax``), compiles with clang's
``-fsanitize=thread`` instrumentation (no sanitizer runtime: its hooks put the lanes of a
wave in lockstep at every memory access), preprocesses the program once
per wave size with that target's macros, and compiles once per distinct program text: a
program that never reads the wave-size macros runs at both sizes from one binary (the size
is then read from ``ROCMLINT_WAVE_SIZE`` at run time). Every ``extern __shared__`` array is
linked to the executor's dynamic shared memory. Binaries are cached by content (program
text, flags, compiler, header). rocmlint runs a program only when the user names it.
"""
from __future__ import annotations

import hashlib
import os
import re
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ..lazy_re import lazy_compile
from ..reference import package_folder
from ..source import write_replacing
from .build import BUILD_TIMEOUT_S, compiler_message
from .build import call_tool as _call
from .launch_syntax import LaunchSyntaxError, rewrite_launches
from .toolchain import DEFAULT_TIME_LIMIT_S, HostCompiler

WAVE_SIZES = (64, 32)
EXIT_STOPPED = 70                  # rocmlint_exec::kExitStopped: the executor stopped the program
STOP_PREFIX = "rocmlint executor: "
CACHE_ENTRIES = {"*.exe": 200, "*.pch": 8}   # the most recently used kept, per kind
CACHE_FORMAT = "3"
# -O1: the run is dominated by lane switches, not by the kernel's code (benchmarks/executor_speed.py).
# -fsanitize=thread for its instrumentation only (no sanitizer runtime is linked): the executor's
# hooks make the lanes of a wave access memory in lockstep.
# -fsanitize=array-bounds: an index past a known extent stops the run (its handler is the header's).
COMPILE_FLAGS = ("-std=gnu++17", "-fno-strict-aliasing", "-Werror=vla-cxx-extension", "-fsanitize=thread",
                 "-fsanitize=array-bounds")
OPTIMIZE_FLAGS = ("-O1", "-gline-tables-only")  # lines: where a stop happened
PRELUDE = "rocmlint_prelude.h"        # included before every program; precompiled
DYNAMIC_SHARED_SYMBOL = "rocmlint_dynamic_shared"
_LINE_MARKER = lazy_compile(r'^# \d+ "((?:[^"\\]|\\.)*)"')
_LIBRARY_SYMBOL = lazy_compile(r"^(?:__|_ZN?K?St)")
_UNUSABLE_PCH = lazy_compile(r"precompiled|\bPCH\b|AST file")


def executor_dir() -> Path:
    return package_folder("rocmlint.verify", "executor_include")


@dataclass(frozen=True)
class Program:
    path: Path
    name: str                       # as reported
    flags: tuple[str, ...] = ()     # -I/-D/-U/-std=/-include of the user or compile_commands.json
    form: str | None = None         # reference kernels: "before" or "after"
    defines: tuple[str, ...] = ()   # macros #defined at the top of the program (the flags, and so the
                                    # precompiled prelude, stay the same for both forms of a kernel)
    arguments: tuple[str, ...] = () # its command line


@dataclass
class Build:
    executable: Path | None
    message: str | None = None      # why it did not build
    seconds: float = 0.0
    cached: bool = False
    # its kernels write only device memory: a large launch may be split over processes
    parallel_safe: bool = False


@dataclass
class RunResult:
    program: Program
    wave: int
    outcome: str                    # "pass" | "fail" | "stopped" | "timeout" | "no-build"
    status: int | None = None       # exit status, 128 + N for signal N; None when it did not run to an end
    output: str = ""
    message: str | None = None      # the compiler's errors, the executor's stop message, a signal
    build_seconds: float = 0.0
    run_seconds: float = 0.0
    cached_build: bool = False


def default_cache_dir() -> Path:
    explicit = os.environ.get("ROCMLINT_EXECUTOR_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base, "rocmlint", "executor")


def _digest_folder(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def program_text(preprocessed: str, header_folder: Path) -> str:
    """The preprocessed program without the executor's own headers: what the wave-size
    macros can change."""
    prefix = str(header_folder)
    kept: list[str] = []
    ours = False
    for line in preprocessed.splitlines():
        marker = _LINE_MARKER.match(line)
        if marker:
            ours = marker.group(1).startswith(prefix)
        if not ours:
            kept.append(line)
    return "\n".join(kept)


_CONSTANT_EXPRESSION = lazy_compile(r"not (?:an integral )?(?:a )?constant expression|must be initialized by a "
                                    r"constant expression|variable length array")


def _with_notes(output: str, source: str) -> str:
    """The compiler's errors, and what they mean here when the usual cause is the executor's
    subset (``output`` is the whole compiler output: notes name what the errors do not)."""
    notes = []
    if re.search(r"\b(?:asm|__asm__)\s*(?:volatile\s*|__volatile__\s*)?\(", source):
        notes.append("the program has inline assembly: PTX cannot run on the CPU executor, nor build for AMD GPUs "
                     "(ROC301)")
    if "<<<" in output:
        notes.append("launches (<<<...>>>) are rewritten in the program's own file only: launch from it, or with "
                     "hipLaunchKernelGGL in a header")
    if _CONSTANT_EXPRESSION.search(output) and re.search(r"\bwarpSize\b|rocmlint_warp_size", output):
        notes.append("warpSize is a run-time value here, as from ROCm 7: choose a compile-time wave size with "
                     "__GFX9__ (ROC206)")
    return compiler_message(output) + "".join(f"\nnote: {note}" for note in notes)


class Executor:
    """Builds and runs programs; one per command (its header digest and scratch folder)."""

    def __init__(self, compiler: HostCompiler, workdir: Path, cache_dir: Path | None,
                 time_limit_s: float = DEFAULT_TIME_LIMIT_S, run_jobs: int = 1) -> None:
        self.compiler = compiler
        self.run_jobs = run_jobs  # processes a large launch may be split over
        self.workdir = workdir
        self.cache_dir = cache_dir
        self.time_limit_s = time_limit_s
        self.header_folder = executor_dir()
        self._header_digest = _digest_folder(self.header_folder)
        self._plain_prelude = ["-include", str(self.header_folder / PRELUDE)]
        clang = os.path.realpath(compiler.clang)
        try:
            self._compiler_id = f"{clang}\0{os.stat(clang).st_mtime_ns}"
        except OSError:
            self._compiler_id = f"{clang}\0?"
        self._precompiled: dict[str, Path | None] = {}
        self._lock = threading.Lock()

    # ----- building ------------------------------------------------------------------------
    def _base_flags(self, program: Program, source_dir: Path) -> list[str]:
        return [*COMPILE_FLAGS, "-I", str(self.header_folder), "-iquote", str(source_dir), *program.flags]

    def _prelude(self, flags: list[str], wave: int) -> list[str]:
        """The prelude as a precompiled header built once per flags and wave size (in the cache,
        else in the scratch folder), or as a plain include where that fails."""
        key = self._cache_key(flags, "prelude", wave)
        with self._lock:
            if key not in self._precompiled:
                self._precompiled[key] = self._build_prelude(flags, wave, key)
            built = self._precompiled[key]
        return ["-include-pch", str(built)] if built is not None else self._plain_prelude

    def _build_prelude(self, flags: list[str], wave: int, key: str) -> Path | None:
        folder = self.cache_dir or self.workdir
        target = folder / f"{key}.pch"
        if target.is_file():
            os.utime(target)  # kept by the pruning, which drops the least recently used
            return target
        try:
            folder.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=folder, suffix=".part")
            os.close(handle)
        except OSError:
            return None
        status, _output, _errors = _call([self.compiler.clang, *flags, *OPTIMIZE_FLAGS, f"-DROCMLINT_WAVE_SIZE={wave}",
                                          "-x", "c++-header", str(self.header_folder / PRELUDE), "-o", temporary],
                                         BUILD_TIMEOUT_S)
        if status != 0:
            Path(temporary).unlink(missing_ok=True)  # clang removes its output when it fails
            return None
        os.replace(temporary, target)
        return target

    def _prepared_source(self, program: Program, folder: Path) -> tuple[Path | None, str, str | None]:
        """The file to compile (launches rewritten, lines kept), the source text, or why not."""
        try:
            text = program.path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            return None, "", f"cannot read {program.path}: {exc.strerror}"
        try:
            rewritten, launches = rewrite_launches(text)
        except LaunchSyntaxError as exc:
            return None, text, f"{program.name}:{exc.line}: error: {exc.reason}"
        if not launches and not program.defines:
            return program.path, text, None
        target = folder / f"{program.path.stem}.cpp"
        quoted = str(program.path).replace("\\", "\\\\").replace('"', '\\"')
        defines = "".join(f"#define {name} 1\n" for name in program.defines)
        target.write_text(f'{defines}#line 1 "{quoted}"\n{rewritten}', encoding="utf-8")
        return target, text, None

    def build(self, program: Program, waves: tuple[int, ...] = WAVE_SIZES) -> dict[int, Build]:
        """One build per wave size; waves whose program text is the same share one binary."""
        start = time.monotonic()
        folder = Path(tempfile.mkdtemp(prefix=f"{program.path.stem}-", dir=self.workdir))  # one per build: threads
        source, text, problem = self._prepared_source(program, folder)
        if source is None:
            return {wave: Build(None, problem, time.monotonic() - start) for wave in waves}
        flags = self._base_flags(program, program.path.resolve().parent)
        texts: dict[int, str] = {}
        for wave in waves:
            status, output, errors = _call([self.compiler.clang, *flags, *OPTIMIZE_FLAGS, *self._plain_prelude,
                                            f"-DROCMLINT_WAVE_SIZE={wave}", "-E",
                                            "-x", "c++", str(source)], BUILD_TIMEOUT_S)
            if status != 0:
                message = _with_notes(errors + output, text)
                return {w: Build(None, message, time.monotonic() - start) for w in waves}
            # The scratch folder's name is not part of the program (cache keys stay stable).
            texts[wave] = program_text(output, self.header_folder).replace(str(folder), "<scratch>")
        wave_dependent = len(set(texts.values())) > 1
        builds: dict[int, Build] = {}
        for wave in waves:
            shared = next((w for w in builds if texts[w] == texts[wave]), None)
            if shared is not None:
                builds[wave] = builds[shared]
                continue
            key = self._cache_key(flags, texts[wave], wave if wave_dependent else None)
            builds[wave] = self._compile(source, text, flags, wave, key, folder)
        parallel_safe = not writes_program_memory(text)
        for result in builds.values():
            result.seconds = time.monotonic() - start
            result.parallel_safe = parallel_safe
        return builds

    def _cache_key(self, flags: list[str], text: str, wave: int | None) -> str:
        digest = hashlib.sha256()
        for part in (CACHE_FORMAT, self._compiler_id, self._header_digest, " ".join(flags), " ".join(OPTIMIZE_FLAGS),
                     str(wave), text):
            digest.update(part.encode("utf-8", "replace") + b"\0")
        return digest.hexdigest()[:40]

    def _compile(self, source: Path, text: str, flags: list[str], wave: int, key: str, folder: Path) -> Build:
        cached = self.cache_dir / f"{key}.exe" if self.cache_dir else None
        if cached is not None and os.access(cached, os.X_OK):
            os.utime(cached)  # kept by the pruning, which drops the least recently used
            return Build(cached, cached=True)
        obj = folder / f"wave{wave}.o"
        executable = folder / f"wave{wave}.exe"
        compile = [self.compiler.clang, *flags, *OPTIMIZE_FLAGS, f"-DROCMLINT_WAVE_SIZE={wave}", "-c", "-x", "c++",
                   str(source), "-o", str(obj)]
        prelude = self._prelude(flags, wave)
        status, output, errors = _call([*compile, *prelude], BUILD_TIMEOUT_S)
        if status != 0 and prelude[0] == "-include-pch" and _UNUSABLE_PCH.search(errors):
            # Stale or damaged (a header it was built from changed, a disk error): build without it.
            Path(prelude[1]).unlink(missing_ok=True)
            status, output, errors = _call([*compile, *self._plain_prelude], BUILD_TIMEOUT_S)
        if status != 0:
            return Build(None, _with_notes(errors + output, text))
        link = [self.compiler.clang, str(obj), "-o", str(executable)]
        link += [f"-Wl,--defsym={name}={DYNAMIC_SHARED_SYMBOL}" for name in self._dynamic_shared_arrays(obj)]
        status, output, errors = _call(link, BUILD_TIMEOUT_S)
        if status != 0:
            return Build(None, compiler_message(errors + output))
        if cached is None:
            return Build(executable)
        return Build(self._store(executable, cached))

    def _dynamic_shared_arrays(self, obj: Path) -> list[str]:
        """The program's ``extern __shared__`` arrays: its undefined thread-local symbols."""
        if self.compiler.readelf is None:
            return []
        status, output, _errors = _call([self.compiler.readelf, "-sW", str(obj)], 60)
        names = []
        for line in output.splitlines() if status == 0 else []:
            fields = line.split()
            if len(fields) >= 8 and fields[3] == "TLS" and fields[6] == "UND" and not _LIBRARY_SYMBOL.match(fields[7]):
                names.append(fields[7])
        return names

    def _store(self, executable: Path, cached: Path) -> Path:
        """Copies a new binary into the cache (atomically), drops the least recently used."""
        try:
            cached.parent.mkdir(parents=True, exist_ok=True)
            write_replacing(cached, lambda out: out.write(executable.read_bytes()), binary=True, mode=0o755,
                            suffix=".part")
            _prune(cached.parent)
        except OSError:
            return executable  # an unwritable cache only costs the next run a build
        return cached

    # ----- running -------------------------------------------------------------------------
    def environment(self, wave: int, executable: Path | None = None, copy_log: Path | None = None,
                    parallel_safe: bool = False) -> dict[str, str]:
        env = dict(os.environ)
        env.pop("ROCMLINT_COPY_LOG", None)
        if not parallel_safe:
            env["ROCMLINT_JOBS"] = "1"
        if copy_log is not None:  # verify --run --compare: what the program copies back, in order
            env["ROCMLINT_COPY_LOG"] = str(copy_log)
        env["ROCMLINT_WAVE_SIZE"] = str(wave)
        env["ROCMLINT_TIME_LIMIT"] = f"{self.time_limit_s:g}"
        env["ROCMLINT_JOBS"] = str(self.run_jobs)
        if executable is not None:
            env["ROCMLINT_SHARED_ARRAYS"] = self._shared_arrays(executable)
        return env

    def _shared_arrays(self, executable: Path) -> str:
        """The static ``__shared__`` arrays of a built program as the header reads them:
        "ANCHOR;OFFSET:BYTES:NAME;..." (thread-local offsets; ANCHOR: the dynamic shared buffer's)."""
        if self.compiler.readelf is None:
            return ""
        status, output, _errors = _call([self.compiler.readelf, "-sW", str(executable)], 60)
        anchor, arrays = None, []
        for line in output.splitlines() if status == 0 else []:
            fields = line.split()
            if len(fields) < 8 or fields[3] != "TLS" or fields[6] == "UND":
                continue
            if fields[7] == DYNAMIC_SHARED_SYMBOL:
                anchor = int(fields[1], 16)
            elif not _LIBRARY_SYMBOL.match(fields[7]) and int(fields[2], 0) > 0:
                arrays.append(f"{int(fields[1], 16)}:{int(fields[2], 0)}:{shared_array_name(fields[7])}")
        return ";".join([str(anchor), *arrays[:64]]) if anchor is not None and arrays else ""

    def _with_lines(self, message: str, executable: Path) -> str:
        """``[pc +0x...]`` in a stop message becomes the program's line where the build has one."""
        found = _CODE_OFFSET.search(message)
        symbolizer = self.compiler.readelf.replace("llvm-readelf", "llvm-symbolizer") if self.compiler.readelf else None
        if found is None or symbolizer is None or not os.access(symbolizer, os.X_OK):
            return _CODE_OFFSET.sub("", message)
        status, output, _errors = _call([symbolizer, f"--obj={executable}", "--no-inlines", "--relative-address",
                                         hex(int(found.group(1), 16) - 1)], 60)
        lines = output.splitlines() if status == 0 else []
        place = lines[1].strip() if len(lines) > 1 and not lines[1].startswith("??") else ""
        place = re.sub(r"^.*[/\\]", "", place)  # the scratch copy's folder means nothing to the user
        return _CODE_OFFSET.sub(f" at {place}" if place else "", message)

    def run(self, program: Program, wave: int, build: Build, copy_log: Path | None = None) -> RunResult:
        if build.executable is None:
            return RunResult(program, wave, "no-build", message=build.message, build_seconds=build.seconds)
        start = time.monotonic()
        try:
            done = subprocess.run([str(build.executable), *program.arguments], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, env=self.environment(wave, build.executable, copy_log, build.parallel_safe),
                                  timeout=self.time_limit_s + 10)
        except OSError as exc:
            return RunResult(program, wave, "no-build", message=f"cannot run the build: {exc.strerror}",
                             build_seconds=build.seconds)
        except subprocess.TimeoutExpired as exc:
            output = (exc.stdout or b"").decode("utf-8", "replace") if isinstance(exc.stdout, bytes) else ""
            return RunResult(program, wave, "timeout", None, output,
                             f"still running after {self.time_limit_s + 10:.0f} s: killed",
                             build.seconds, time.monotonic() - start, build.cached)
        output = done.stdout.decode("utf-8", "replace")
        result = RunResult(program, wave, "pass", status_of(done.returncode), output, None, build.seconds,
                           time.monotonic() - start, build.cached)
        if done.returncode == 0:
            return result
        stops = [line[len(STOP_PREFIX):] for line in output.splitlines() if line.startswith(STOP_PREFIX)]
        if done.returncode == EXIT_STOPPED and stops:
            result.outcome, result.message = "stopped", self._with_lines(stops[-1], build.executable)
            result.output = output.replace(stops[-1], result.message)
        else:
            result.outcome, result.message = "fail", describe_status(done.returncode, output)
        return result


# A `__device__`/`__managed__` variable (no parenthesis before its `;`, `=` or `[`): kernels may
# write it, and a worker process's writes to program memory are its own.
_PROGRAM_VARIABLE = lazy_compile(r"\b__(?:device|managed)__\s+(?![^;{}=]*\()[^;{}]*?(?:;|=|\[)")


def writes_program_memory(text: str) -> bool:
    """The program defines variables its kernels could write outside device memory."""
    return _PROGRAM_VARIABLE.search(text) is not None


_CODE_OFFSET = lazy_compile(r" ?\[pc \+0x([0-9a-f]+)\]")
_LOCAL_STATIC = lazy_compile(r"^_ZZ(?:(\d+)(\w+)|N\w+)E(\d+)(\w+)$")


def shared_array_name(symbol: str) -> str:
    """``_ZZ24block_binary_prefix_sumsiE5sdata`` -> "`sdata` of block_binary_prefix_sums"; other
    names as they are."""
    found = _LOCAL_STATIC.match(symbol)
    if found is None or len(found.group(4)) != int(found.group(3)):
        return f"`{symbol}`"
    function = found.group(2)[:int(found.group(1))] if found.group(1) else ""
    return f"`{found.group(4)}` of {function}" if function else f"`{found.group(4)}`"


def _prune(folder: Path) -> None:
    for pattern, keep in CACHE_ENTRIES.items():
        entries = sorted(folder.glob(pattern), key=lambda path: path.stat().st_mtime, reverse=True)
        for stale in entries[keep:]:
            stale.unlink(missing_ok=True)


def status_of(returncode: int) -> int:
    """The shell's view of an exit: 128 + N for a program ended by signal N."""
    return 128 - returncode if returncode < 0 else returncode


def describe_status(returncode: int, output: str) -> str:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"killed by {name}"
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return f"exit {returncode}: {lines[-1]}" if lines else f"exit {returncode}"
