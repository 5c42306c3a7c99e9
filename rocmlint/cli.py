"""Command line: ``rocmlint [check] [PATHS...]``, ``rocmlint rules``, ``rocmlint rule CODE``,
``rocmlint verify``, ``rocmlint server``. Exit 0 clean, 1 findings, 2 usage, config or internal errors."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from . import __version__
from .output import FORMATS
from .output import text as text_output
from .registry import INTERNAL_ERROR

SUBCOMMANDS = ("check", "rule", "rules", "verify", "explain", "server", "report")
EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse exits 2 too, but with our prefix and no traceback
        self.print_usage(sys.stderr)
        raise UsageError(message)


def _positive(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {value!r}")
    return number


def _codes(value: str) -> list[str]:
    return [c.strip().upper() for c in value.split(",") if c.strip()]


def _witness_arguments(group, program_help: str) -> None:
    """--witness PROGRAM, --args, --time-limit (check and explain)."""
    group.add_argument("--witness", type=Path, metavar="PROGRAM", help=program_help)
    group.add_argument("--args", dest="witness_args", metavar="ARGUMENTS", default=None,
                       help="the program's command line, split as a shell would (quote it: --args '1 2')")
    group.add_argument("--time-limit", dest="witness_time_limit", type=float, default=None, metavar="SECONDS",
                       help="stop each run after this long (default: 60)")


def build_parser(with_verify: bool = True) -> argparse.ArgumentParser:
    parser = _Parser(prog="rocmlint",
                     description="Find and fix CUDA-isms that break, corrupt results or crawl on AMD ROCm; "
                                 "fixes are gated so the NVIDIA build is unchanged.",
                     epilog="`rocmlint PATHS` is short for `rocmlint check PATHS`. "
                            "Exit status: 0 clean, 1 findings, 2 usage, configuration or internal error.")
    parser.add_argument("--version", action="version", version=f"rocmlint {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)

    check = sub.add_parser("check", help="lint files (the default command)")
    check.add_argument("paths", nargs="*", default=[], help="files or folders (default: ., or the --witness program)")
    check.add_argument("--fix", action="store_true", help="apply safe fixes")
    check.add_argument("--unsafe-fixes", action="store_true", help="also apply unsafe fixes (with --fix or --diff)")
    check.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; write nothing")
    check.add_argument("--select", type=_codes, metavar="CODES", help="comma list of codes or prefixes to enable")
    check.add_argument("--ignore", type=_codes, metavar="CODES", help="comma list of codes or prefixes to disable")
    check.add_argument("--extend-select", type=_codes, default=[], metavar="CODES", help="add to the configured selection")
    check.add_argument("--output-format", choices=FORMATS, default="text")
    check.add_argument("--statistics", action="store_true", help="count findings per rule")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when findings remain")
    check.add_argument("--config", type=Path, metavar="FILE", help="use this config file for every file (no cascade)")
    check.add_argument("--force-exclude", action="store_true",
                       help="apply exclude patterns to files named on the command line too (pre-commit)")
    check.add_argument("--no-cache", action="store_true", help="neither read nor write the result cache")
    check.add_argument("--baseline", type=Path, metavar="FILE", help="ignore findings recorded in this baseline file")
    check.add_argument("--write-baseline", type=Path, metavar="FILE", help="record the current findings into this file")
    check.add_argument("-j", "--jobs", type=_positive, default=None, metavar="N", help="worker processes (default: all cores)")
    check.add_argument("-q", "--quiet", action="store_true", help="print findings only, no summary")
    check.add_argument("--no-show-source", dest="show_source", action="store_false",
                       help="text output: one line per finding")
    check.add_argument("-p", "--compile-commands", metavar="BUILD_DIR", default="",
                       help="the ROCm build's compile_commands.json (or its folder)")
    check.add_argument("--show-all", action="store_true",
                       help="also list the line findings of files with a rewrite-not-port verdict (ROC307), which are "
                            "otherwise counted, not listed")
    check.add_argument("--port", action="append", default=[], metavar="PATH",
                       help="lint this file or folder as a port (the CUDA code a HIP backend is written from), even "
                            "where the project's HIP build does not compile it; repeatable")
    witness = check.add_argument_group(
        "witness run (--witness)",
        "--witness RUNS the named program on the CPU executor (see `rocmlint verify --run`) at 64 and at 32 lanes and "
        "marks each wave-size finding (ROC201-ROC211) witnessed, not witnessed or not run: name only programs you "
        "trust.")
    _witness_arguments(witness, "a single-file HIP (or hipified CUDA) program with a main(); lints it when no path "
                                "is given")

    explain = sub.add_parser("explain", help="why a line is or is not in the AMD build, and why rules fired")
    explain.add_argument("location", metavar="PATH:LINE")
    explain.add_argument("--config", type=Path, metavar="FILE", help="use this config file")
    explain.add_argument("-p", "--compile-commands", metavar="BUILD_DIR", default="",
                         help="the ROCm build's compile_commands.json (or its folder)")
    explain.add_argument("--no-cache", action="store_true", help="neither read nor write the model cache")
    explain.add_argument("--port", action="append", default=[], metavar="PATH",
                         help="explain as if this file or folder were linted as a port (see check --port)")
    _witness_arguments(explain, "also run this program at 64 and 32 lanes (see check --witness) and say whether it "
                                "witnesses the wave-size findings on the line")

    report = sub.add_parser("report", help="a port plan: one verdict per file (rewrite, needs a look, mechanical, "
                                           "nothing to do), by folder, as Markdown or one HTML page")
    report.add_argument("paths", nargs="*", default=[], help="files or folders (default: .)")
    report.add_argument("--format", dest="report_format", choices=("markdown", "html"), default="markdown")
    report.add_argument("-o", "--output", type=Path, metavar="FILE", help="write here instead of standard output")
    report.add_argument("--title", help="the plan's title (default: the folder's name)")
    report.add_argument("--config", type=Path, metavar="FILE", help="use this config file for every file")
    report.add_argument("-p", "--compile-commands", metavar="BUILD_DIR", default="",
                        help="the ROCm build's compile_commands.json (or its folder)")
    report.add_argument("--port", action="append", default=[], metavar="PATH",
                        help="read this file or folder as a port (see check --port); repeatable")
    report.add_argument("--no-cache", action="store_true", help="neither read nor write the result cache")
    report.add_argument("-j", "--jobs", type=_positive, default=None, metavar="N", help="worker processes")

    server = sub.add_parser("server", help="language server for editors (LSP on stdin/stdout)")
    server.add_argument("--stdio", action="store_true", help="talk over stdin/stdout (the default and only way)")

    rules = sub.add_parser("rules", help="list the rules")
    rules.add_argument("--output-format", choices=("text", "json"), default="text")
    rule = sub.add_parser("rule", help="show a rule's documentation")
    rule.add_argument("code")

    verify = sub.add_parser("verify", help="build the reference kernels / fixed files for gfx targets; --run: run "
                                           "test programs on the CPU with 64- and 32-lane waves")
    verify.add_argument("--config", type=Path, help="config file (offload-arch)")
    verify.add_argument("--output-format", choices=("text", "json"), default="text")
    if with_verify:  # its imports cost ~80 ms: only when asked for (pre-commit latency)
        from .verify import cli as verify_cli

        verify_cli.add_arguments(verify)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0] not in SUBCOMMANDS and argv[0] not in ("-h", "--help", "--version")):
        argv.insert(0, "check")
    try:
        parser = build_parser(with_verify=argv[0] != "check")
        args = parser.parse_args(argv)
        if args.command == "rules":
            return _cmd_rules(args)
        if args.command == "rule":
            return _cmd_rule(args)
        if args.command == "explain":
            return _cmd_explain(args)
        if args.command == "report":
            return _cmd_report(args)
        if args.command == "server":
            return _cmd_server()
        if args.command == "verify":
            from .verify import cli as verify_cli

            return verify_cli.run(args)
        return _cmd_check(args)
    except UsageError as exc:
        print(f"rocmlint: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("rocmlint: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `rocmlint check | head`: the reader left; stop quietly as cat does
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the interpreter's final flush must not fail again
        return 141
    except Exception as exc:  # a crash must be a clear message, not a traceback
        from .config import ConfigError
        from .registry import RegistryError

        if isinstance(exc, (ConfigError, RegistryError)):
            print(f"rocmlint: error: {exc}", file=sys.stderr)
            return EXIT_ERROR
        import traceback

        print(f"rocmlint: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        if _debug():
            traceback.print_exc()
        else:
            print("rocmlint: set ROCMLINT_DEBUG=1 for the traceback and please report it", file=sys.stderr)
        return EXIT_ERROR


def _debug() -> bool:
    import os

    return bool(os.environ.get("ROCMLINT_DEBUG"))


def _cmd_check(args) -> int:
    if args.unsafe_fixes and not (args.fix or args.diff):
        raise UsageError("--unsafe-fixes needs --fix or --diff")
    witness_arguments = _witness_options(args)
    args.paths = args.paths or ([str(args.witness)] if args.witness is not None else ["."])
    results, findings, unread, mode = _lint(args)
    return _report_check(args, results, findings, unread, mode, witness_arguments)


def _cmd_report(args) -> int:
    from .report import build_plan, render_html, render_markdown

    check = build_parser(with_verify=False).parse_args(
        ["check", *(args.paths or ["."]), "--exit-zero", "--output-format", "json",  # json: fixes are built
         *(["--config", str(args.config)] if args.config else []),
         *(["-p", args.compile_commands] if args.compile_commands else []),
         *[option for path in args.port for option in ("--port", path)],
         *(["--no-cache"] if args.no_cache else []), *(["-j", str(args.jobs)] if args.jobs else [])])
    results, findings, _unread, _mode = _lint(check)
    checked = [r.display for r in results if not r.set_aside and not r.internal_error]
    title = args.title or (Path(check.paths[0]).resolve().name if len(check.paths) == 1 else "the checked files")
    plan = build_plan(title, checked, findings)
    text = render_html(plan) if args.report_format == "html" else render_markdown(plan)
    if args.output is None:
        sys.stdout.write(text)
        return EXIT_CLEAN
    try:
        args.output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {args.output}: {exc.strerror}") from None
    print(f"rocmlint: wrote {args.output}", file=sys.stderr)
    return EXIT_CLEAN


def _lint(args):
    """Lints ``args.paths`` as check does: (results, sorted findings, unread warnings, mode)."""
    from .config import resolver_for
    from .discovery import discover
    from .registry import is_known_prefix

    for option in ("select", "ignore", "extend_select"):
        for code in getattr(args, option) or []:
            if not is_known_prefix(code):
                raise UsageError(f"--{option.replace('_', '-')}: unknown rule or prefix {code!r}")
    for raw in args.port:
        if not os.path.exists(raw):
            raise UsageError(f"--port: no such file or folder: {raw}")
    resolver = resolver_for(args.config, args.select, args.ignore, args.extend_select, is_known_prefix, args.port)
    for raw in args.paths:
        if not os.path.exists(raw):
            raise UsageError(f"no such file or folder: {raw}")
    from .project import group_by_project

    discovery = discover(args.paths, resolver, force_exclude=args.force_exclude)
    targets = list(discovery)
    mode = "diff" if args.diff else ("fix" if args.fix else "check")
    # Each file belongs to its own project (its VCS root or top build file), whatever the
    # working folder: one model per project, sibling projects never share one.
    groups = group_by_project([str(t.path) for t in targets], args.paths) if targets else {os.getcwd(): []}
    # A text report counts fixes and never prints their edits: they need not be built.
    options = dict(mode=mode, unsafe=args.unsafe_fixes, use_cache=not args.no_cache,
                   build_fixes=args.output_format != "text", compile_commands=args.compile_commands)
    results = _run_projects([(Path(root), _ProjectTargets([targets[i] for i in members], discovery))
                             for root, members in groups.items()], resolver, args.jobs, options)
    if mode == "check":  # generated copies, headers that go with rewrite-only files
        from .cache import default_dir as default_cache_dir
        from .run_passes import join_results

        join_results(results, default_cache_dir() if options["use_cache"] else None)
    unread = discovery.unread_named()
    for warning in unread:  # never a silent "All checks passed!" for them
        print(warning, file=sys.stderr)
    findings = [f for r in results for f in r.findings]
    findings.sort(key=lambda f: f.sort_key())
    return results, findings, unread, mode


def _report_check(args, results, findings, unread, mode, witness_arguments) -> int:
    # Files rocmlint crashed on carry an ROC003 finding (so no format calls them clean) and
    # make the run exit 2 whatever --exit-zero says: that option is about findings.
    crashed = [r for r in results if r.internal_error]
    for r in crashed:
        print(f"rocmlint: internal error on {r.display} (file not checked; please report): {r.internal_error}",
              file=sys.stderr)
    if crashed and not _debug():
        print("rocmlint: set ROCMLINT_DEBUG=1 for the tracebacks", file=sys.stderr)

    if args.baseline is not None:
        from .baseline import filter_baseline

        findings = filter_baseline(findings, args.baseline)
    if args.write_baseline is not None:
        from .baseline import write_baseline

        write_baseline(findings, args.write_baseline)
        recorded = sum(f.code != INTERNAL_ERROR for f in findings)
        print(f"rocmlint: wrote {recorded} finding(s) to {args.write_baseline}", file=sys.stderr)
        if crashed:
            print(f"rocmlint: error: {text_output.not_checked(findings)} The baseline lacks their findings.",
                  file=sys.stderr)
        return EXIT_ERROR if crashed else EXIT_CLEAN

    fixed = sum(r.fixed_count for r in results)
    refused = [(r.display, r.fix_error) for r in results if r.fix_error]
    for display, message in refused:
        print(f"rocmlint: error: {display}: fix not applied: {message}", file=sys.stderr)

    out = sys.stdout
    if mode == "diff":
        diffs = "".join(r.diff for r in results)
        text_output.write(out, diffs)
        if not args.quiet:
            n = sum(r.fixed_count for r in results if r.diff)
            skipped = text_output.not_checked(findings)
            print(f"Would fix {n} finding{'s' if n != 1 else ''}." + (f" {skipped}" if skipped else ""),
                  file=sys.stderr)
        if crashed:
            return EXIT_ERROR
        return EXIT_FINDINGS if diffs and not args.exit_zero else EXIT_CLEAN

    # C-family files the AMD build never compiles: counted in the summary, and a note for
    # each one named on the command line (a pre-commit run, --force-exclude, stays quiet)
    set_aside = [r for r in results if r.set_aside]
    if not args.force_exclude and not args.quiet:
        named = {os.path.abspath(p) for p in args.paths if os.path.isfile(p)}
        for r in set_aside:
            if os.path.abspath(r.path) in named:
                print(f"rocmlint: note: {r.display}: not compiled by the project's AMD build, not checked for device "
                      f"hazards (`--port {r.display}` lints it as a port; `rocmlint explain {r.display}:1` says why)",
                      file=sys.stderr)
    hidden = rewrite_files = 0
    if not args.show_all and mode == "check":
        findings, hidden, rewrite_files = _fold_rewrite_files(findings)
    witness_line = ""
    if args.witness is not None:
        witness_line = _attach_witness(args, findings, witness_arguments)
    _emit(args, findings, fixed, out, nothing_checked=bool(unread) and not results,
          set_aside=0 if args.force_exclude else len(set_aside),
          unjudged=[entry for r in results for entry in r.unjudged_extents])
    if witness_line and not args.quiet and args.output_format == "text":
        text_output.write(out, witness_line + "\n")
    if hidden and not args.quiet and args.output_format == "text":
        text_output.write(out, text_output.folded_line(hidden, rewrite_files) + "\n")
    if crashed:
        return EXIT_ERROR
    if refused:
        return EXIT_ERROR if not args.exit_zero else EXIT_CLEAN
    return EXIT_FINDINGS if findings and not args.exit_zero else EXIT_CLEAN


def _display_path(path: Path) -> str:
    """``path`` as findings name it: relative to the working folder where it lies below it."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def _fold_rewrite_files(findings: list) -> tuple[list, int, int]:
    """A file with a rewrite-not-port verdict keeps that finding; its line findings are counted:
    (findings kept, line findings folded, rewrite-only files)."""
    from .registry import REWRITE_CODE

    rewrite = {f.path for f in findings if f.code == REWRITE_CODE}
    kept = [f for f in findings if f.path not in rewrite or f.code == REWRITE_CODE or f.code == INTERNAL_ERROR]
    return kept, len(findings) - len(kept), len(rewrite)


def _witness_options(args) -> tuple[str, ...]:
    """The witness program's command line; usage errors for options that need --witness."""
    import shlex

    if args.witness is None:
        if args.witness_args is not None or args.witness_time_limit is not None:
            raise UsageError("--args and --time-limit go with --witness PROGRAM")
        return ()
    if args.fix or args.diff:
        raise UsageError("--witness runs the program as it is: run it without --fix or --diff")
    if not args.witness.is_file():
        raise UsageError(f"--witness: no such file: {args.witness}")
    if args.witness_time_limit is not None and args.witness_time_limit <= 0:
        raise UsageError("--time-limit must be positive")
    try:
        return tuple(shlex.split(args.witness_args or ""))
    except ValueError as exc:
        raise UsageError(f"--args: {exc}") from None


def _attach_witness(args, findings, arguments: tuple[str, ...]) -> str:
    """Runs the witness program and marks the wave-size findings; the summary line."""
    from .verify.toolchain import DEFAULT_TIME_LIMIT_S
    from .witness import attach, is_wave_finding, run_witness, summary_line

    run = run_witness(args.witness, arguments, args.witness_time_limit or DEFAULT_TIME_LIMIT_S)
    sources = {}
    # the program's own file too: its kernels' calls lead to helpers in the files with findings
    for path in {f.path for f in findings if is_wave_finding(f)} | {_display_path(args.witness)}:
        try:
            sources[path] = Path(path).read_bytes()
        except OSError:
            continue
    attach(findings, run, sources)
    return summary_line(findings, run)


class _ProjectTargets(list):
    """One project's targets; the files they include that no extension claimed are checked
    with them (``discovery.Discovery.claim_included``, asked by the runner)."""

    def __init__(self, targets: list, discovery) -> None:
        super().__init__(targets)
        self.claim_included = discovery.claim_included


def _run_project(root: Path, targets: list, resolver, jobs: int | None, options: dict) -> list:
    from .runner import run

    project = _project_at(root, resolver, use_cache=options["use_cache"], compile_commands=options["compile_commands"])
    project.jobs = jobs or 1
    return run(targets, options["mode"], unsafe=options["unsafe"], use_cache=options["use_cache"], jobs=jobs,
               project=project, build_fixes=options["build_fixes"])


def _run_projects(groups: list, resolver, jobs: int | None, options: dict) -> list:
    """Each project's files with that project's model. A big project uses every core itself;
    many small ones (a folder of benchmarks, each its own CMake project) are shared among
    forked workers, each project checked whole by one of them."""
    from .runner import PARALLEL_THRESHOLD, usable_cpus

    jobs = jobs or usable_cpus()
    big = [g for g in groups if len(g[1]) >= PARALLEL_THRESHOLD]
    small = [g for g in groups if len(g[1]) < PARALLEL_THRESHOLD]
    results: list = []
    for root, targets in big:
        results += _run_project(root, targets, resolver, jobs, options)
    if len(small) > 1 and jobs > 1 and sum(len(t) for _, t in small) >= PARALLEL_THRESHOLD:
        from concurrent.futures import ProcessPoolExecutor
        from multiprocessing import get_context

        buckets: list[list] = [[] for _ in range(jobs)]
        for index, group in enumerate(sorted(small, key=lambda g: -len(g[1]))):
            buckets[index % jobs].append(group)
        global _GROUP_WORK
        _GROUP_WORK = (resolver, options)  # inherited by the forked workers
        with ProcessPoolExecutor(jobs, mp_context=get_context("fork")) as pool:
            for found in pool.map(_run_bucket, [b for b in buckets if b]):
                results += found
    else:
        for root, targets in small:
            results += _run_project(root, targets, resolver, jobs, options)
    if len(groups) > 1:
        results.sort(key=lambda r: r.display)
    return results


_GROUP_WORK: tuple = ()


def _run_bucket(groups: list) -> list:
    resolver, options = _GROUP_WORK
    out: list = []
    for root, targets in groups:
        out += _run_project(root, targets, resolver, 1, options)
    return out


def _project(paths: list[str], resolver, use_cache: bool = True, compile_commands: str = ""):
    """The project model of the project the first of ``paths`` belongs to."""
    from .project import find_root

    return _project_at(find_root(paths), resolver, use_cache, compile_commands)


def _project_at(root: Path, resolver, use_cache: bool = True, compile_commands: str = ""):
    """The project model at ``root`` for the languages the selected rules need."""
    from .cache import default_dir as default_cache_dir
    from .runner import prepared_project

    return prepared_project(root, resolver.for_path(root), default_cache_dir() if use_cache else None,
                            compile_commands)


def _emit(args, findings, fixed, out, nothing_checked: bool = False, set_aside: int = 0,
          unjudged: list[str] | None = None) -> None:
    fmt = args.output_format
    if fmt == "json":
        from .output import json_format

        text_output.write(out, json_format.render(findings))
    elif fmt == "sarif":
        from .output import sarif

        text_output.write(out, sarif.render(findings))
    elif fmt == "github":
        from .output import github

        text_output.write(out, github.render(findings))
    else:
        colour = text_output.use_colour(out)
        rendered = text_output.render(findings, colour=colour, unsafe_enabled=args.unsafe_fixes,
                                      show_source=args.show_source)
        text_output.write(out, rendered)
        if args.statistics and findings:
            text_output.write(out, ("\n" if rendered else "") + text_output.statistics(findings))
        if not args.quiet:
            text_output.write(out, "No file checked.\n" if nothing_checked else
                              text_output.summary(findings, fixed, args.unsafe_fixes, colour=colour,
                                                  set_aside=set_aside, unjudged=unjudged or ()))


def _cmd_explain(args) -> int:
    from .config import ConfigResolver
    from .project import activate
    from .explain_command import explain

    path, _, line = args.location.rpartition(":")
    if not path or not line.isdigit() or int(line) < 1:
        raise UsageError(f"expected PATH:LINE, got {args.location!r}")
    if not os.path.isfile(path):
        raise UsageError(f"no such file: {path}")
    from .registry import is_known_prefix

    from .config import resolver_for

    resolver = resolver_for(args.config, None, None, (), is_known_prefix, args.port) if args.port else \
        ConfigResolver(args.config, is_known_prefix=is_known_prefix)
    args.fix = args.diff = False
    witness_arguments = _witness_options(args)
    activate(_project([path], resolver, use_cache=not args.no_cache, compile_commands=args.compile_commands))
    status = explain(path, int(line), resolver.for_path(path))
    if status == 0 and args.witness is not None:
        from .engine import lint_source

        _source, found = lint_source(Path(path), path, resolver.for_path(path))
        on_line = [f for f in found if f.line == int(line)]
        _attach_witness(args, on_line, witness_arguments)
        for f in on_line:
            if f.witness is not None:
                print(f"witness: {f.code} {f.witness[0]}: {f.witness[1]}")
        if not any(f.witness is not None for f in on_line):
            print("witness: no wave-size finding (ROC201-ROC211) on this line")
    return status


def _cmd_server() -> int:
    try:
        import lsprotocol  # noqa: F401
        import pygls  # noqa: F401
    except ImportError:
        raise UsageError("`rocmlint server` needs pygls and lsprotocol: pip install 'rocmlint[server]'") from None
    from .server.lsp import serve

    return serve()


def _cmd_rules(args) -> int:
    from .registry import all_rules

    rules = all_rules()
    if args.output_format == "json":
        import json

        print(json.dumps([{"code": c, "name": r.name, "language": r.language, "summary": r.summary(),
                           "fix": r.fix_applicability.value if r.fix_applicability else None,
                           "default": r.default_enabled}
                          for c, r in rules.items()], indent=2))
        return EXIT_CLEAN
    width = max((len(r.name) for r in rules.values()), default=10)
    for code, rule in rules.items():
        fix = rule.fix_applicability.value if rule.fix_applicability else "-"
        opt_in = "" if rule.default_enabled else f" (opt-in: --extend-select {code})"
        print(f"{code}  {rule.name:<{width}}  {rule.language:<6}  {fix:<12}  {rule.summary().splitlines()[0]}{opt_in}")
    return EXIT_CLEAN


def _cmd_rule(args) -> int:
    from .docs import render_rule
    from .registry import all_rules

    rule = all_rules().get(args.code.upper())
    if rule is None:
        raise UsageError(f"unknown rule {args.code!r} (see `rocmlint rules`)")
    print(render_rule(rule))
    return EXIT_CLEAN


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
