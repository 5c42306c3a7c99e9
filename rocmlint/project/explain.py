"""Why a line is or is not in the AMD build, and why each rule did or did not fire there:
``rocmlint explain PATH:LINE`` and the ``evidence`` of each finding. Renders what the
project model and the file's #if stack decided; decides nothing itself."""
from __future__ import annotations

import re
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..cpp.context import CppContext

_IDENT = re.compile(r"[A-Za-z_]\w*")
_VERDICT = {True: "taken on AMD", False: "NOT taken on AMD", None: "unknown on AMD"}


def macro_origin(ctx: "CppContext", name: str, line: int) -> str:
    """``NAME: value (where)`` as the AMD build sees it at ``line`` of this file."""
    earlier = [(l, kind) for l, kind in ctx.pp.macro_lines.get(name, []) if l < line]
    if earlier:
        l, kind = earlier[-1]
        return f"{name}: #{kind} in this file ({ctx.path}:{l + 1})"
    model = ctx.model
    if model is not None:
        fact = model.macro(name, ctx.path)
        where = "; ".join(str(e) for e in fact.evidence)
        return f"{name}: {fact.describe()} ({where})" if where else f"{name}: {fact.describe()}"
    settings = ctx.settings
    if name in settings.all_rocm_macros:
        return f"{name}: defined (rocm macro)"
    if name in settings.all_nvidia_macros:
        return f"{name}: undefined (nvidia macro)"
    return f"{name}: unknown"


def file_lines(ctx: "CppContext") -> list[str]:
    model = ctx.model
    if model is None:
        return []
    return model.explain_file(ctx.path)


def if_stack_lines(ctx: "CppContext", line: int) -> list[str]:
    out = []
    for branch in ctx.pp.branches_at(line):
        out.append(f"{ctx.path}:{branch.line + 1}: #{branch.kind} {branch.condition}".rstrip()
                   + f"  -> {_VERDICT[branch.amd]}")
        names = [n for n in dict.fromkeys(_IDENT.findall(branch.condition)) if n != "defined"]
        out.extend("    " + macro_origin(ctx, n, branch.line) for n in names)
    return out


def line_evidence(ctx: "CppContext", line: int) -> list[str]:
    """The evidence carried by a finding at ``line`` (JSON ``evidence``)."""
    if ctx.model is None:
        return []
    memo = ctx.cache.setdefault("evidence", {})
    if line not in memo:
        if "file" not in memo:  # the same for every line of the file
            memo["file"] = file_lines(ctx)
        memo[line] = memo["file"] + if_stack_lines(ctx, line)
    return memo[line]


def explain(path: str, line_no: int, settings, out=None) -> int:
    """Print the chain that decides ``path:line_no``; 0, or 2 when it cannot be read."""
    out = out or sys.stdout
    from ..engine import _prefilter, active_rules, drop_reason
    from ..languages import ParseFailure, get_language, language_for
    from ..source import SourceError, read_source
    from ..suppress import is_suppressed, suppressed_codes
    from . import active

    language = language_for(path, sniff=True, extensions=settings.extensions)
    if language is None:
        from ..discovery import unread_warning

        print(f"rocmlint: error: {path}: not a Python or C++/CUDA/HIP file "
              f"({unread_warning(path).partition('; ')[2]})", file=sys.stderr)
        return 2
    try:
        from pathlib import Path

        source = read_source(Path(path), language)
    except SourceError as exc:
        print(f"rocmlint: error: {path}: {exc}", file=sys.stderr)
        return 2
    buffer = source.buffer
    lang = get_language(language)
    try:
        ctx = lang.make_context(path, buffer, settings)
    except ParseFailure as exc:
        print(f"rocmlint: error: {path}: cannot parse: {exc} (ROC001: no rule runs on it)", file=sys.stderr)
        return 2
    line = line_no - 1
    if line < 0 or line >= ctx.lines.line_count:
        print(f"rocmlint: error: {path} has {ctx.lines.line_count} lines, not {line_no}", file=sys.stderr)
        return 2
    print(f"{path}:{line_no}: {ctx.lines.line_text(line).strip()}", file=out)
    if language == "python":
        project = active()
        part = project.part("python") if project is not None else None
        if part is not None and hasattr(part, "explain"):
            verdict = part.explain(path, line_no)
            print(f"AMD build runs this line: {_yes(verdict.value)}", file=out)
            for item in verdict.evidence:
                print(f"  {item}", file=out)
    else:
        _explain_cpp(ctx, line, out)  # type: ignore[arg-type]  # make_context gave a CppContext
    # Rules: which matched this line, which fired, which the engine dropped and why.
    # The file's own half (setup.py's manifest rules read a manifest context, not this one).
    rules = tuple(r for r in active_rules(settings, language, Path(path)) if r.runs_on(language))
    candidates = _prefilter(rules)(buffer)
    start, end = ctx.lines.line_start(line), ctx.lines.line_end(line)
    print("rules:", file=out)
    quiet = 0
    for rule in rules:
        spans = []
        if rule.code in candidates and rule.pattern:
            from ..model import Span

            spans = [Span(m.start(), m.end()) for m in rule.matches(buffer)]
        ctx.findings = []
        ctx._hits = {rule.code: spans}
        ctx.rule = rule
        if spans and not ctx.outside_amd_build:
            rule.check(ctx)
        ctx.rule = None
        here = [f for f in ctx.findings if start <= f.span.start <= end]
        matched = any(start <= s.start <= end for s in spans)
        if not here and not matched:
            quiet += 1
            continue
        if not here:
            if ctx.outside_amd_build:
                why = "the file is not in the AMD build"
            elif ctx.nvidia_only(start):  # rules look only at the hits the AMD build compiles
                why = "the AMD build never compiles this line"
            elif rule.wave_size_rule and ctx.wave_size_aware(start):
                why = "inside a branch that picks code by wave size"
            else:
                why = "its pattern matches here but the rule found no hazard"
            print(f"  {rule.code} {rule.name}: silent: {why}", file=out)
            continue
        text = ctx.lines.line_text(line)
        previous = ctx.lines.line_text(line - 1) if line > 0 else ""
        for finding in here:
            dropped = drop_reason(ctx, type(rule), finding.span.start)
            if dropped is not None:
                verdict = f"dropped: {dropped}"
            elif is_suppressed(rule.code, suppressed_codes(text, previous)):
                verdict = "dropped: suppressed by a comment"
            else:
                verdict = "REPORTED"
            print(f"  {rule.code} {rule.name}: {verdict}: {finding.message}", file=out)
            gate_lines = getattr(rule, "gate_lines", None)  # a rule whose finding rests on #if branches elsewhere
            for gate in gate_lines(ctx, finding) if gate_lines is not None else ():
                print(f"    gate at {ctx.path}:{gate + 1}:", file=out)
                for item in if_stack_lines(ctx, gate + 1):  # type: ignore[arg-type]  # a C++ rule's context
                    print(f"      {item}", file=out)
    print(f"  ({quiet} other rule(s): no match on this line)", file=out)
    if language == "python":  # CUDA source in strings the line holds (rocmlint/python/embedded.py)
        from ..python.embedded import explain_lines

        cpp_rules = tuple(r for r in active_rules(settings, language, Path(path)) if r.language == "cpp")
        for item in explain_lines(ctx, line, cpp_rules):  # type: ignore[arg-type]  # a PythonContext
            print(item, file=out)
    return 0


def _yes(value) -> str:
    return {True: "yes", False: "no", None: "unknown"}[value]


def _explain_cpp(ctx: "CppContext", line: int, out) -> None:
    amd = ctx.pp.amd[line] if not ctx.outside_amd_build else False
    print(f"AMD build compiles this line: {_yes(amd)}", file=out)
    lines = file_lines(ctx)
    if ctx.model is not None:
        print(f"project: {ctx.model.root} (the paths below are relative to it)", file=out)
    if not lines:
        print("file: no project model (a lone file, or CUDA-only code with no HIP anywhere): "
              "judged on its own", file=out)
    for item in lines:
        print(item, file=out)
    stack = if_stack_lines(ctx, line)
    print("#if stack:" if stack else "#if stack: none (not inside any #if)", file=out)
    for item in stack:
        print(f"  {item}", file=out)
    from ..cpp.lanegroups import lane_groups, needs_lane_model

    if needs_lane_model(ctx):
        for item in lane_groups(ctx).explain(line):
            print(item, file=out)
    model = ctx.model
    if model is not None:
        text = ctx.lines.line_text(line)
        for name in dict.fromkeys(re.findall(r"\b(__\w+)\s*\(", text)):
            shim = model.shim(name)
            if shim is not None:
                dropped = [p for i, p in enumerate(shim.params) if shim.drops(i)]
                print(f"shim: {name}({', '.join(shim.params)}) -> {shim.body} in the AMD build ({shim.where})"
                      + (f"; drops {', '.join(dropped)}" if dropped else ""), file=out)
        include = re.match(r'\s*#\s*include\s*[<"]([^>"]+)[>"]', text)
        if include:
            mapped = model.hipify_maps(ctx.path, include.group(1))
            verdict = model.hipified(ctx.path)
            if mapped:
                why = "; ".join(str(e) for e in verdict.evidence)
                print(f"hipify: <{include.group(1)}> becomes <{mapped}> before the AMD build ({why})", file=out)
