"""``rocmlint explain PATH:LINE``: why a line is or is not in the AMD build, and why each
rule did or did not fire there. Runs the rules on the file (the engine's own drop reasons);
the project model's evidence is rendered by ``rocmlint/project/explain.py``."""
from __future__ import annotations

import sys
from pathlib import Path


def explain(path: str, line_no: int, settings, out=None, buffer: bytes | None = None,
            language: str | None = None, err=None) -> int:
    """Print the chain that decides ``path:line_no``; 0, or 2 when it cannot be read.
    ``buffer``: the file's contents held in memory (an editor's unsaved text: UTF-8, no
    BOM) instead of the file on disk; ``language``: its half, when its name does not say;
    ``err``: where a reason it cannot explain goes (standard error)."""
    out = out or sys.stdout
    err = err or sys.stderr
    from .engine import _prefilter, active_rules, analyse_buffer, drop_reason
    from .languages import ParseFailure, get_language, language_for
    from .project.explain import explain_cpp, explain_manifest, explain_python, if_stack_lines
    from .rule import active
    from .source import SourceError, read_source
    from .suppress import is_suppressed, suppressed_codes

    language = language or language_for(path, sniff=True, extensions=settings.extensions) or \
        _included_language(path)
    if language is None:
        from .discovery import unread_warning

        print(f"rocmlint: error: {path}: not a Python or C++/CUDA/HIP file "
              f"({unread_warning(path).partition('; ')[2]})", file=err)
        return 2
    if buffer is None:
        try:
            buffer = read_source(Path(path), language).buffer
        except SourceError as exc:
            print(f"rocmlint: error: {path}: {exc}", file=err)
            return 2
    lang = get_language(language)
    try:
        ctx = lang.make_context(path, buffer, settings)
    except ParseFailure as exc:
        print(f"rocmlint: error: {path}: cannot parse: {exc} (ROC001: no rule runs on it)", file=err)
        return 2
    line = line_no - 1
    if line < 0 or line >= ctx.lines.line_count:
        print(f"rocmlint: error: {path} has {ctx.lines.line_count} lines, not {line_no}", file=err)
        return 2
    print(f"{path}:{line_no}: {ctx.lines.line_text(line).strip()}", file=out)
    if language == "python":
        explain_python(active(), path, line_no, out)
    elif language == "manifest":
        explain_manifest(ctx, line, out)  # type: ignore[arg-type]  # make_context gave a ManifestContext
    else:
        explain_cpp(ctx, line, out)  # type: ignore[arg-type]  # make_context gave a CppContext
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
            from .model import Span

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
            text = ctx.lines.line_text(line)
            if ctx.outside_amd_build:
                why = "the file is not in the AMD build"
            elif ctx.nvidia_only(start + len(text) - len(text.lstrip())):  # the line's code, not its indent
                why = "the AMD build never compiles this line"
            elif all(ctx.nvidia_only(s.start) for s in spans if start <= s.start <= end):
                why = "the AMD build never compiles its matches here (a macro argument it drops)"
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
        from .python.embedded import explain_lines

        cpp_rules = tuple(r for r in active_rules(settings, language, Path(path)) if r.language == "cpp")
        for item in explain_lines(ctx, line, cpp_rules, analyse_buffer,  # type: ignore[arg-type]  # a PythonContext
                                  if_stack_lines):
            print(item, file=out)
    return 0


def _included_language(path: str) -> str | None:
    """"cpp" for a file ``check`` reads because a C-family file #includes it (an ``.inc``,
    ``op.inc_isglobal``): one the project model holds, or one a C-family file of the project
    names in an #include next to it."""
    import os

    from .project import active
    from .project.summaries import included_names
    from .project.tree import C_FAMILY_EXTENSIONS

    project = active()
    if project is None:
        return None
    model = project.part("cpp")
    rel = model.rel(path) if model is not None else None
    if rel is not None and rel in model.files:
        return "cpp"
    # No model (a port with no HIP anywhere): its folder's C-family files, as discovery claims them.
    folder, name = os.path.split(os.path.abspath(path))
    for entry in os.scandir(folder):
        if os.path.splitext(entry.name)[1].lower() in C_FAMILY_EXTENSIONS and entry.is_file():
            try:
                with open(entry.path, "rb") as fh:
                    names = included_names(fh.read())
            except OSError:
                continue
            if any(os.path.basename(n) == name for n in names):
                return "cpp"
    return None
