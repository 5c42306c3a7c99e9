"""Human output: grouped by file, the source line with a caret, a summary."""
from __future__ import annotations

import os
import sys
import unicodedata
from collections import Counter
from typing import Sequence

from ..model import Applicability, Finding
from ..registry import ENGINE_CODES


TAB = "    "


def use_colour(stream) -> bool:
    """Colour only on a terminal; ``NO_COLOR`` (https://no-color.org) always wins over
    ``FORCE_COLOR``, which turns it on for pipes (CI logs that render ANSI)."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return hasattr(stream, "isatty") and stream.isatty()


class _Style:
    def __init__(self, on: bool) -> None:
        self.on = on

    def __call__(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.on else text

    def bold(self, t): return self(t, "1")
    def red(self, t): return self(t, "1;31")
    def cyan(self, t): return self(t, "36")
    def blue(self, t): return self(t, "1;34")
    def dim(self, t): return self(t, "2")


def fix_marker(f: Finding, unsafe_enabled: bool) -> str:
    if f.fix is None or not f.fix.edits:
        return ""
    if f.fix.applicability is Applicability.SAFE or (unsafe_enabled and f.fix.applicability is Applicability.UNSAFE):
        return "[*] "
    if f.fix.applicability is Applicability.UNSAFE:
        return "[~] "
    return ""


def render(findings: list[Finding], *, colour: bool, unsafe_enabled: bool = False,
           show_source: bool = True) -> str:
    s = _Style(colour)
    out: list[str] = []
    current = None
    for f in findings:
        if f.path != current:
            if current is not None:
                out.append("")
            current = f.path
        out.append(f"{s.bold(f.path)}{s.cyan(':')}{f.line}{s.cyan(':')}{f.column}{s.cyan(':')} "
                   f"{s.red(f.code)} {fix_marker(f, unsafe_enabled)}{f.message}{unknown_suffix(f)}")
        if show_source and f.source_line:
            gutter = str(f.line)
            line = f.source_line.replace("\t", TAB)
            start = display_width(f.source_line[: f.column - 1])
            end_column = f.end_column if f.end_line == f.line else len(f.source_line) + 1
            width = max(1, display_width(f.source_line[f.column - 1 : end_column - 1]))
            pad = " " * len(gutter)
            out.append(f"{s.blue(pad + ' |')}")
            out.append(f"{s.blue(gutter + ' |')} {line}")
            out.append(f"{s.blue(pad + ' |')} {' ' * start}{s.red('^' * width)}")
            if f.fix is not None and f.fix.title:
                out.append(f"{s.blue(pad + ' =')} {s.cyan('help')}: {f.fix.title}")
            if f.witness is not None:
                out.append(f"{s.blue(pad + ' =')} {s.cyan('witness')}: {f.witness[0]}: {f.witness[1]}")
        elif f.witness is not None:
            out[-1] += f" [{f.witness[0]}]"
    return "\n".join(out) + ("\n" if out else "")


def display_width(text: str) -> int:
    """Terminal cells: tabs as four spaces, East Asian wide characters (and most emoji) as
    two, combining marks as none, so carets land under the flagged characters."""
    width = 0
    for ch in text:
        if ch == "\t":
            width += len(TAB)
        elif unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
            continue
        elif unicodedata.east_asian_width(ch) in ("W", "F"):
            width += 2
        else:
            width += 1
    return width


def not_checked(findings: list[Finding]) -> str:
    """``2 files not checked (1 internal-error, 1 parse-error).``, or "" when every file was."""
    files: dict[str, set[str]] = {}
    for f in findings:
        if f.code in ENGINE_CODES:
            files.setdefault(ENGINE_CODES[f.code][0], set()).add(f.path)
    if not files:
        return ""
    total = len(set().union(*files.values()))
    kinds = ", ".join(f"{len(paths)} {name}" for name, paths in sorted(files.items()))
    return f"{total} file{'s' if total != 1 else ''} not checked ({kinds})."


def set_aside_line(count: int) -> str:
    """The summary line for C-family files outside the AMD build ("" for none)."""
    if not count:
        return ""
    files = f"{count} C-family file{'s' if count != 1 else ''}"
    return (f"{files} not compiled by the project's AMD build {'were' if count != 1 else 'was'} not checked for "
            "device hazards (`--port PATH` lints them as a port; `rocmlint explain FILE:1` says why).")


def unknown_suffix(f: Finding) -> str:
    """`` [if X]``: the finding holds only where the AMD build takes an #if path on X."""
    return f" [if {', '.join(f.unknown_macros)}]" if f.unknown_macros else ""


MAX_UNKNOWNS_SHOWN = 5


def unknowns_lines(findings: list[Finding]) -> list[str]:
    """The macros that decide the most findings, each with the configuration line that
    settles it: one answer turns many uncertain findings into certain ones, or into none."""
    counts = Counter(name for f in findings for name in f.unknown_macros)
    if not counts:
        return []
    uncertain = sum(1 for f in findings if f.unknown_macros)
    lines = [f"{uncertain} finding{'s' if uncertain != 1 else ''} sit{'' if uncertain != 1 else 's'} under `#if` "
             "conditions rocmlint could not decide; one line in [tool.rocmlint] settles each macro:"]
    for name, n in counts.most_common(MAX_UNKNOWNS_SHOWN):
        lines.append(f"  {name}: {n} finding{'s' if n != 1 else ''}  -> rocm-macros = [\"{name}\"] if the AMD "
                     f"build defines it, nvidia-macros = [\"{name}\"] if not")
    if len(counts) > MAX_UNKNOWNS_SHOWN:
        lines.append(f"  ... and {len(counts) - MAX_UNKNOWNS_SHOWN} more (JSON/SARIF: unknown_macros)")
    return lines


def mode_line(findings: list[Finding]) -> str:
    """How many findings are porting work (C-family code with no HIP build, or --port)."""
    port = sum(1 for f in findings if f.mode == "port")
    if not port:
        return ""
    return (f"Port mode: {port} finding{'s' if port != 1 else ''} {'are' if port != 1 else 'is'} in CUDA code with no "
            "HIP build (or named by --port), checked as its hipcc build: each is porting work.")


def folded_line(hidden: int, files: int) -> str:
    """The summary line for line findings folded into rewrite-not-port verdicts."""
    return (f"{hidden} line finding{'s' if hidden != 1 else ''} in {files} rewrite-only file{'s' if files != 1 else ''}"
            f" (ROC307) counted, not listed (`--show-all` lists them).")


def unjudged_extents_line(entries: Sequence[str]) -> str:
    """The summary line for arrays sized from 32 whose lane indices ROC211 could not bound ("" for none)."""
    if not entries:
        return ""
    shown = ", ".join(entries[:5]) + (f" and {len(entries) - 5} more" if len(entries) > 5 else "")
    many = len(entries) != 1
    return (f"{len(entries)} array{'s' if many else ''} sized from 32 with lane index ranges rocmlint could not "
            f"bound (ROC211 did not judge {'them' if many else 'it'}): {shown}.")


def summary(findings: list[Finding], fixed: int, unsafe_enabled: bool, *, colour: bool, set_aside: int = 0,
            unjudged: Sequence[str] = ()) -> str:
    s = _Style(colour)
    n = len(findings)
    parts = []
    if fixed:
        parts.append(f"Fixed {fixed} finding{'s' if fixed != 1 else ''}.")
    aside = set_aside_line(set_aside)
    extents = unjudged_extents_line(unjudged)
    if n == 0:
        if aside:  # never a bare "All checks passed!" over files that were not checked
            parts.append(("No findings remain" if fixed else "No findings") + " in the code the AMD build compiles.")
            return " ".join(parts) + "\n" + aside + "\n" + (extents + "\n" if extents else "")
        if extents:  # nor over arrays no rule could judge
            parts.append("No findings remain." if fixed else "No findings.")
            return " ".join(parts) + "\n" + extents + "\n"
        parts.append("All checks passed!" if not fixed else "No findings remain.")
        return " ".join(parts) + "\n"
    skipped = not_checked(findings)
    if skipped:
        parts.append(s.red(skipped))
    safe = sum(1 for f in findings if f.fix and f.fix.edits and f.fix.applicability is Applicability.SAFE)
    unsafe = sum(1 for f in findings if f.fix and f.fix.edits and f.fix.applicability is Applicability.UNSAFE)
    by_code = Counter(f.code for f in findings)
    codes = ", ".join(f"{code} x{count}" for code, count in sorted(by_code.items()))
    line = f"Found {n} finding{'s' if n != 1 else ''} ({codes})."
    parts.append(s.bold(line))
    fixable = []
    if safe:
        fixable.append(f"{safe} fixable with `--fix`")
    if unsafe:
        fixable.append(f"{unsafe} fixable with `--fix --unsafe-fixes`" if unsafe_enabled
                       else f"{unsafe} more with `--unsafe-fixes`")
    if fixable:
        parts.append("[*] " + ", ".join(fixable) + ".")
    for extra in (mode_line(findings), aside, extents):
        if extra:
            parts.append(extra)
    parts.extend(unknowns_lines(findings))
    return "\n".join(parts) + "\n"


def statistics(findings: list[Finding]) -> str:
    """A table of counts per rule, most frequent first: ``[*]`` some have safe fixes,
    ``[~]`` only unsafe ones."""
    counts = Counter((f.code, f.name) for f in findings)
    safe = Counter(f.code for f in findings if f.fix is not None and f.fix.applicability is Applicability.SAFE)
    unsafe = Counter(f.code for f in findings if f.fix is not None and f.fix.applicability is Applicability.UNSAFE)
    if not counts:
        return ""

    def marker(code: str) -> str:
        return "[*]" if safe[code] else ("[~]" if unsafe[code] else "")

    rows = [("Count", "Code", "Fix", "Rule")]
    rows += [(str(n), code, marker(code), name)
             for (code, name), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0][0]))]
    rows.append((str(len(findings)), "Total", "", ""))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    return "".join(f"{r[0]:>{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]:<{widths[2]}}  {r[3]}".rstrip() + "\n"
                   for r in rows)


def write(stream, text: str) -> None:
    try:
        stream.write(text)
    except BrokenPipeError:  # `rocmlint | head`
        sys.stderr.close()
