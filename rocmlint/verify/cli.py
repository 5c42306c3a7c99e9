"""``rocmlint verify``: arguments and entry point (the lead's CLI calls these two).

    add_arguments(parser)   adds verify's own options
    run(args) -> int        0 all done and passed, 1 a build or test failed, 2 no toolchain / usage
                            (with --cuda: neither a HIP clang nor nvcc); with --run (run_command):
                            one program at one wave size exits with the program's own status

``args`` may also carry ``config`` (a config file path) and ``output_format`` ("text"/"json").
"""
from __future__ import annotations

import argparse
import shlex
import sys
import tempfile
from pathlib import Path

from ..config import ConfigError, ConfigResolver
from ..reference import list_kernels
from .compile_flags import (CompileCommandsError, amd_view_flags, cli_flags, flags_for,
                            load_database)
from ..runner import usable_cpus
from .core import (NO_NVCC, skipped_builds, verify_cuda, verify_cuda_files, verify_files,
                   verify_reference)
from .cuda import cuda_setup
from .report import EXIT_NO_TOOLCHAIN, exit_code, render_json, render_text
from .targets import invalid_targets, probe_gpus, resolve_targets
from .toolchain import DEFAULT_TIME_LIMIT_S, HOST_COMPILER_HINT, find_host_compiler, find_toolchain


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", type=Path,
                        help="files to compile (AMD view, device-only) for every target, or with --run the "
                             "programs to run; none: the reference kernel library")
    parser.add_argument("--offload-arch", metavar="GFX[,GFX...]",
                        help="gfx targets (default: config offload-arch, else the local GPUs, "
                             "else gfx90a,gfx942,gfx1030,gfx1100,gfx1151,gfx1201)")
    parser.add_argument("-p", "--compile-commands", metavar="DIR", type=Path,
                        help="folder holding compile_commands.json: take -I/-D/-U/-std=/-isystem/-include "
                             "of each file from it (the commands are never executed)")
    parser.add_argument("-I", dest="include_dirs", action="append", metavar="DIR",
                        help="include directory for the given files (repeatable)")
    parser.add_argument("-D", dest="defines", action="append", metavar="NAME[=VALUE]",
                        help="macro definition for the given files (repeatable)")
    parser.add_argument("--kernel", dest="kernels", metavar="NAME[,NAME...]",
                        help="only these reference kernels (default: all)")
    parser.add_argument("--cuda", action="store_true",
                        help="also build with nvcc: the reference kernels (run on an NVIDIA GPU when "
                             "there is one) or the given files (compiled as the NVIDIA build sees them); "
                             "works without a HIP compiler, the AMD builds are then reported as skipped")
    parser.add_argument("-j", "--jobs", type=int, default=None, metavar="N",
                        help="parallel builds (default: the number of cores)")
    running = parser.add_argument_group(
        "running on the CPU executor (--run)",
        "--run compiles each named program (kernels plus a main() that checks them) for this CPU against "
        "rocmlint's runtime header and RUNS it, with 64- or 32-lane waves: name only programs you trust. "
        "rocmlint never runs code from a repository it checks unless you name the file here. With no file: "
        "the reference library's before (CUDA-ism) and after (fix) forms at both wave sizes.")
    running.add_argument("--run", action="store_true",
                         help="build and run programs on the CPU executor instead of building for gfx targets")
    running.add_argument("--wave", metavar="64|32|64,32", default=None,
                         help="wave sizes to run at (default: 64,32; 64 models CDNA and RDNA wave64 as gfx942, "
                              "32 models RDNA wave32 and NVIDIA as gfx1100)")
    running.add_argument("--args", dest="program_args", metavar="ARGUMENTS", default="",
                         help="command line for each program, split as a shell would (quote it: --args '1 2')")
    running.add_argument("--time-limit", type=float, default=DEFAULT_TIME_LIMIT_S, metavar="SECONDS",
                         help=f"stop a run after this long (default: {DEFAULT_TIME_LIMIT_S:g})")
    running.add_argument("--compare", action="store_true",
                         help="run each program at 64 and at 32 lanes and compare what it copies back to the host "
                              "(device-to-host copies, managed memory after a synchronize) and its exit status: "
                              "a difference is a witness (exit 1); none: exit 0")
    running.add_argument("--no-cache", action="store_true",
                         help="build every program anew (default: reuse binaries cached by content in "
                              "$ROCMLINT_EXECUTOR_CACHE, else ~/.cache/rocmlint/executor)")


def _fail(message: str) -> int:
    print(f"rocmlint verify: {message}", file=sys.stderr)
    return EXIT_NO_TOOLCHAIN


def _resolver(config: str | None) -> ConfigResolver:
    from ..registry import is_known_prefix

    return ConfigResolver(Path(config) if config else None, is_known_prefix=is_known_prefix)


def _selected_kernels(names: str | None):
    kernels = list_kernels()
    if not names:
        return kernels, None
    wanted = [name.strip().removesuffix(".hip") for name in names.split(",") if name.strip()]
    unknown = sorted(set(wanted) - {kernel.name for kernel in kernels})
    if unknown:
        return [], f"unknown reference kernel(s): {', '.join(unknown)} (known: {', '.join(k.name for k in kernels)})"
    return [kernel for kernel in kernels if kernel.name in wanted], None


def _display_name(path: Path) -> str:
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def _user_sources(args, resolver: ConfigResolver) -> tuple[list[tuple[Path, str, list[str], list[str]]], str | None]:
    """(path, name, the file's own flags, the AMD view's gating flags) per user file."""
    missing = [str(path) for path in args.paths if not path.is_file()]
    if missing:
        return [], f"no such file: {', '.join(missing)}"
    extra = cli_flags(args.include_dirs, args.defines)
    database = load_database(args.compile_commands) if args.compile_commands else None
    sources = []
    for path in args.paths:
        from_database = flags_for(path, database) if database is not None else None
        if database is not None and from_database is None:
            print(f"rocmlint verify: {path}: not in compile_commands.json (nor its folder): "
                  "compiled with the -I/-D options only", file=sys.stderr)
        settings = resolver.for_path(path)
        gating = amd_view_flags(settings.all_rocm_macros, settings.all_nvidia_macros)
        sources.append((path, _display_name(path), (from_database or []) + extra, gating))
    return sources, None


def _run_programs(args: argparse.Namespace, output_format: str) -> int:
    from . import run_command
    from .executor import Program

    if args.cuda or args.offload_arch:
        return _fail("--run takes neither --cuda nor --offload-arch: it runs on this CPU")
    waves = run_command.parse_waves(args.wave)
    if waves is None:
        return _fail(f"--wave takes 64, 32 or 64,32, not {args.wave!r}")
    if args.time_limit <= 0:
        return _fail("--time-limit must be positive")
    try:
        arguments = tuple(shlex.split(args.program_args))
    except ValueError as exc:
        return _fail(f"--args: {exc}")
    compiler, rejected = find_host_compiler()
    if compiler is None:
        return _fail(HOST_COMPILER_HINT + "".join(f"\n  passed over: {why}" for why in rejected))
    kernels = None
    programs: list[Program] = []
    if args.compare and not args.paths:
        return _fail("--compare needs the programs to run (the reference library declares its own results)")
    if args.compare and args.wave:
        return _fail("--compare runs at both wave sizes: leave out --wave")
    if args.paths:
        try:
            sources, problem = _user_sources(args, _resolver(getattr(args, "config", None)))
        except (CompileCommandsError, ConfigError) as exc:
            return _fail(str(exc))
        if problem:
            return _fail(problem)
        programs = [Program(path, name, tuple(own + gating), arguments=arguments)
                    for path, name, own, gating in sources]
    else:
        kernels, problem = _selected_kernels(args.kernels)
        if problem:
            return _fail(problem)
    if args.compare:
        return run_command.run_compare(compiler, programs, time_limit=args.time_limit, use_cache=not args.no_cache,
                                       jobs=args.jobs or usable_cpus(), output_format=output_format)
    return run_command.run(compiler, kernels=kernels, programs=programs, waves=waves, time_limit=args.time_limit,
                           use_cache=not args.no_cache, jobs=args.jobs or usable_cpus(), output_format=output_format)


def run(args: argparse.Namespace) -> int:
    output_format = getattr(args, "output_format", None) or "text"
    if getattr(args, "run", False):
        return _run_programs(args, output_format)
    discovery = find_toolchain()
    toolchain = discovery.toolchain
    cuda = cuda_setup() if args.cuda else None
    # Without a HIP clang, --cuda still builds (and runs) the NVIDIA side; AMD rows are skipped.
    if toolchain is None and (cuda is None or cuda.nvcc is None):
        return _fail(discovery.missing_message())
    roots = discovery.rocm_roots
    try:
        resolver = _resolver(getattr(args, "config", None))
        configured = resolver.for_path(Path.cwd()).offload_arch
    except ConfigError as exc:
        return _fail(str(exc))
    targets, targets_from = resolve_targets(args.offload_arch, configured, roots)
    bad = invalid_targets(targets)
    if bad or not targets:
        return _fail(f"not a gfx target: {', '.join(bad) or '(empty list)'}")
    jobs = args.jobs or usable_cpus()
    no_hip = "no HIP-capable clang found" + (f" (passed over: {'; '.join(discovery.rejected)})"
                                              if discovery.rejected else "")
    header = [f"toolchain: {toolchain.describe()}" if toolchain
              else f"toolchain: none, AMD builds skipped: {discovery.missing_message()}",
              f"targets: {', '.join(targets)} (from {targets_from})"]
    if cuda is not None:
        header.append(f"CUDA: {cuda.nvcc or NO_NVCC}; "
                      + (f"GPU {cuda.arch}" if cuda.arch else f"tests: {cuda.gpu_reason}"))

    with tempfile.TemporaryDirectory(prefix="rocmlint-verify-") as scratch:
        workdir = Path(scratch)
        if args.paths:
            try:
                sources, problem = _user_sources(args, resolver)
            except (CompileCommandsError, ConfigError) as exc:
                return _fail(str(exc))
            if problem:
                return _fail(problem)
            if toolchain is None:
                rows = skipped_builds([name for _path, name, _own, _gating in sources], targets, no_hip)
            else:
                rows = verify_files(toolchain, [(path, name, own + gating) for path, name, own, gating in sources],
                                    targets, workdir, jobs)
            if cuda is not None:
                rows += verify_cuda_files(cuda, [(path, name, own) for path, name, own, _gating in sources],
                                          workdir, jobs)
        else:
            kernels, problem = _selected_kernels(args.kernels)
            if problem:
                return _fail(problem)
            if toolchain is None:
                rows = skipped_builds([kernel.name for kernel in kernels], targets, no_hip)
            else:
                gpus = probe_gpus(roots)
                header.append(f"AMD GPUs: {', '.join(gpus.agents)}" if gpus.agents else f"tests: {gpus.reason}")
                rows = verify_reference(toolchain, kernels, targets, gpus, workdir, jobs)
            if cuda is not None:
                rows += verify_cuda(cuda, kernels, workdir, jobs)

    print(render_json(rows) if output_format == "json" else render_text(rows, header))
    return exit_code(rows)
