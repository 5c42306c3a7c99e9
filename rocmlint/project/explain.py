"""Why a line is or is not in the AMD build, and why each rule did or did not fire there:
``rocmlint explain PATH:LINE`` and the ``evidence`` of each finding. Renders what the
project model and the file's #if stack decided; decides nothing itself."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..cpp.platform_names import describe_by_name, value_by_name
from ..cpp.preprocessor import CUDACC, CUDACC_IN_PORT, NOT_MACROS
from ..lazy_re import lazy_compile

if TYPE_CHECKING:
    from ..cpp.context import CppContext
    from ..manifest.context import ManifestContext

_IDENT = lazy_compile(r"[A-Za-z_]\w*")
# the compiler's own questions (`__has_builtin(__match_any_sync)`): no configuration line answers them
_COMPILER_QUERY = lazy_compile(r"\b__has_\w+\s*\([^()]*\)")
NO_MODEL_PORT = ("no source or build file names HIP: the AMD build is this CUDA code compiled by hipcc, so every "
                 "hazard is porting work")
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
    passed_over = getattr(ctx, "included_dead", {}).get(name)
    if passed_over is not None:
        return f"{name}: undefined (#define {name} only where the AMD build never goes ({passed_over}))"
    settings = ctx.settings
    if name in settings.all_rocm_macros:
        return f"{name}: defined (rocm macro)"
    if name in settings.all_nvidia_macros:
        return f"{name}: undefined (nvidia macro)"
    if name == CUDACC:  # no model: a port
        return f"{name}: {CUDACC_IN_PORT}"
    if value_by_name(name, port=True) is not None:  # no model: a port (see CppContext.mode)
        return f"{name}: {describe_by_name(name, port=True)}"
    return f"{name}: unknown"


def file_lines(ctx: "CppContext") -> list[str]:
    model = ctx.model
    if model is None:
        return []
    return model.explain_file(ctx.path)


def if_stack_lines(ctx: "CppContext", line: int) -> list[str]:
    out = []
    opening = {id(b): chain.branches[0] for chain in ctx.pp.chains for b in chain.branches}
    guard = ctx.pp.header_guard()
    for branch in ctx.pp.branches_at(line):
        if guard is not None and branch is guard.branches[0]:
            continue  # the include guard: taken wherever the header's text is read
        first = opening.get(id(branch), branch)
        chain = f" (of #{first.kind} {first.condition} at line {first.line + 1})" if first is not branch else ""
        out.append(f"{ctx.path}:{branch.line + 1}: #{branch.kind} {branch.condition}".rstrip() + chain
                   + f"  -> {_VERDICT[branch.amd]}" + ("; picks code by wave size" if branch.wave_size else ""))
        shown = f"{first.condition} {branch.condition}" if first is not branch else branch.condition
        names = [n for n in dict.fromkeys(_IDENT.findall(shown)) if n not in NOT_MACROS]
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


def _yes(value) -> str:
    return {True: "yes", False: "no", None: "unknown"}[value]


def finding_evidence(ctx, offset: int) -> list[str]:
    """The evidence a finding at ``offset`` carries (C++ files with a project model)."""
    if getattr(ctx, "model", None) is None:
        return []
    return line_evidence(ctx, ctx.lines.line_of(offset))


def unknown_macros_at(ctx: "CppContext", line: int) -> tuple[str, ...]:
    """The macros no build file or definition decides on the #if path of ``line``, where that
    path is itself undecided: the one question that would settle a finding there."""
    pp = ctx.pp
    if not any(b.amd is None and not b.wave_size for b in pp.branches_at(line)):
        return ()  # every branch around the line is decided (most findings): nothing to ask
    guard = pp.header_guard()
    chain_of = ctx.cache.get("chain-of-branch")
    if chain_of is None:
        chain_of = ctx.cache["chain-of-branch"] = {id(b): chain for chain in pp.chains for b in chain.branches}
    found: dict[str, None] = {}
    for branch in pp.branches_at(line):
        if branch.amd is not None or (guard is not None and branch is guard.branches[0]):
            continue
        if branch.wave_size:  # chosen per gfx target (wave64 or wave32), not by a configuration line
            continue
        chain = chain_of.get(id(branch))
        earlier = chain.branches[:chain.branches.index(branch) + 1] if chain is not None else [branch]
        for each in earlier:
            for name in _IDENT.findall(_COMPILER_QUERY.sub(" ", each.condition)):
                if name not in NOT_MACROS and pp.evaluator.is_defined(name) is None:
                    found[name] = None
    return tuple(found)


def finding_unknowns(ctx, offset: int) -> tuple[str, ...]:
    """``unknown_macros_at`` for a finding at ``offset`` (C-family files only)."""
    if getattr(ctx, "pp", None) is None:
        return ()
    return unknown_macros_at(ctx, ctx.lines.line_of(offset))


def explain_python(project, path: str, line_no: int, out) -> None:
    part = project.part("python") if project is not None else None
    if part is not None and hasattr(part, "explain"):
        verdict = part.explain(path, line_no)
        print(f"AMD build runs this line: {_yes(verdict.value)}", file=out)
        for item in verdict.evidence:
            print(f"  {item}", file=out)


def explain_manifest(ctx: "ManifestContext", line: int, out) -> None:
    """Whether ROCm machines install this manifest, and what its `-r`/`-c` lines pull in."""
    from ..manifest.kinds import named_for_rocm

    if ctx.for_nvidia_only:
        why = "no: it is named for NVIDIA or another platform, or a ROCm variant sits beside it"
    elif ctx.kind in ("pyproject", "requirements", "setup_cfg", "setup_py", "conda") and ctx.manifest.lock \
            and not named_for_rocm(ctx.path):
        why = "as a lock file (its exact pins record the environment it was resolved on)"
    else:
        why = "yes"
    print(f"manifest: {ctx.kind}; installed on ROCm machines: {why}", file=out)
    for included in ctx.included:
        if ctx.lines.position(included.line.span.start)[0] != line + 1:
            continue  # another line's include
        where = f"{ctx.path}:{line + 1}"
        via = " -> ".join(included.chain)
        if included.manifest is None:
            print(f"  include {via} ({where}): {included.problem}", file=out)
        else:
            print(f"  include {via} ({where}): followed, {len(included.manifest.dependencies)} requirement(s), "
                  f"{len(included.manifest.indexes)} index option(s)", file=out)


def file_verdict_line(ctx: "CppContext") -> str:
    """Port mode's verdict on the file (ROC307): rewrite, or port line by line."""
    from ..cpp.rewrite_blockers import describe, rewrite_blockers

    if ctx.mode != "port":
        return "file verdict: guarded (the project's HIP build compiles it: its guards are checked, no port verdict)"
    found = rewrite_blockers(ctx)
    if not found:
        return "file verdict: port (no NVIDIA-only machinery: its line findings are the porting work)"
    return (f"file verdict: rewrite, not port (ROC307): built on {describe(found, most=8)}; its line findings are "
            "counted, not listed (`check --show-all` lists them)")


def explain_cpp(ctx: "CppContext", line: int, out) -> None:
    amd = ctx.amd_reach(line)
    print(f"AMD build compiles this line: {_yes(amd)}", file=out)
    lines = file_lines(ctx)
    if ctx.model is not None:
        print(f"project: {ctx.model.root} (the paths below are relative to it)", file=out)
        for item in ctx.model.mode_lines(ctx.path):
            print(item, file=out)
    if not lines:
        print(f"mode: port ({NO_MODEL_PORT})", file=out)
        if ctx.outside_amd_build and ctx.file_verdict is not None:
            print("file: NOT compiled by the AMD build (no project model)", file=out)
            lines = [f"  {e.what}" for e in ctx.file_verdict.evidence]
        else:
            print("file: no project model (a lone file, or CUDA-only code with no HIP anywhere): "
                  "judged on its own", file=out)
    for item in lines:
        print(item, file=out)
    print(file_verdict_line(ctx), file=out)
    stack = if_stack_lines(ctx, line)
    print("#if stack:" if stack else "#if stack: none (not inside any #if)", file=out)
    for item in stack:
        print(f"  {item}", file=out)
    undecided = unknown_macros_at(ctx, line)
    if undecided:
        names = ", ".join(undecided)
        print(f"undecided: {names}: a finding here holds only if the AMD build takes this path; settle it with "
              f"rocm-macros / nvidia-macros in [tool.rocmlint]", file=out)
    start, end = ctx.lines.line_start(line), ctx.lines.line_end(line)
    arguments: set[str] = set()
    if not ctx.outside_amd_build and ctx.model is not None and ctx.model.droppers:
        arguments = {why for at in range(start, end) if (why := ctx.dropped_argument(at)) is not None}
    for why in sorted(arguments):
        print(f"macro argument: {why}: the code written there is never compiled by the AMD build", file=out)
    gate = ctx.constant_gate(line) if not ctx.outside_amd_build else None
    if gate is not None:
        print(f"C++ gate: {gate}", file=out)
    expansions = ctx.expansions_amd_skips(line) if not ctx.outside_amd_build else []
    if expansions:
        body = ctx.macro_bodies.body_at(line)
        sites = ", ".join(str(site + 1) for site in expansions)
        print(f"macro body: {body.name if body else 'the macro'} is expanded only at line(s) {sites}, "
              "which the AMD build skips", file=out)
    from ..cpp.lane_includes import may_hold_lane_facts
    from ..cpp.lanegroups import lane_groups

    if may_hold_lane_facts(ctx):
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
