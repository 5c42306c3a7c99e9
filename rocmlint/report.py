"""``rocmlint report``: the findings of a tree as a port plan, one verdict per file.

- **rewrite**: the file is built on NVIDIA machinery with no AMD counterpart (ROC307);
- **needs a look**: a finding without a safe fix (unsafe fixes, lane groups, display-only);
- **mechanical**: every finding has a safe fix (`rocmlint check --fix`);
- **nothing to do**: checked, no finding.

Grouped by folder, with counts and the top rules, as Markdown (a pull-request description) or
as one self-contained HTML page whose chart is the tree coloured by verdict (a square per file,
grouped under each folder's whole name). It serves both
modes: in guard mode (a HIP build exists) it shows what is left.
"""
from __future__ import annotations

import posixpath
from collections import Counter
from dataclasses import dataclass, field

from .model import Applicability, Finding
from .registry import REWRITE_CODE

REWRITE, LOOK, MECHANICAL, NOTHING = "rewrite", "needs a look", "mechanical", "nothing to do"
VERDICTS = (REWRITE, LOOK, MECHANICAL, NOTHING)
COLOURS = {REWRITE: "#c0392b", LOOK: "#e67e22", MECHANICAL: "#2e86c1", NOTHING: "#27ae60"}


@dataclass
class FilePlan:
    path: str
    findings: list[Finding] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        if any(f.code == REWRITE_CODE for f in self.findings):
            return REWRITE
        if not self.findings:
            return NOTHING
        safe = all(f.fix is not None and f.fix.edits and f.fix.applicability is Applicability.SAFE
                   for f in self.findings)
        return MECHANICAL if safe else LOOK

    @property
    def folder(self) -> str:
        return posixpath.dirname(self.path) or "."

    def codes(self) -> str:
        counts = Counter(f.code for f in self.findings if f.code != REWRITE_CODE)
        return ", ".join(f"{code} x{n}" for code, n in sorted(counts.items()))


@dataclass
class Plan:
    title: str
    files: list[FilePlan]

    def by_verdict(self, verdict: str) -> list[FilePlan]:
        return [f for f in self.files if f.verdict == verdict]

    def folders(self) -> dict[str, list[FilePlan]]:
        grouped: dict[str, list[FilePlan]] = {}
        for item in self.files:
            grouped.setdefault(item.folder, []).append(item)
        return dict(sorted(grouped.items()))

    def modes(self) -> Counter:
        return Counter(f.mode for item in self.files for f in item.findings if f.mode)


def build_plan(title: str, checked: list[str], findings: list[Finding]) -> Plan:
    """``checked``: every file the run read (display paths), with or without findings."""
    files = {path.removeprefix("./"): FilePlan(path.removeprefix("./")) for path in checked}
    for f in findings:
        files.setdefault(f.path.removeprefix("./"), FilePlan(f.path.removeprefix("./"))).findings.append(f)
    return Plan(title, sorted(files.values(), key=lambda item: item.path))


def _top_rules(plan: Plan, most: int = 8) -> list[tuple[str, str, int, int]]:
    counts = Counter(f.code for item in plan.files for f in item.findings)
    files = Counter(code for item in plan.files for code in {f.code for f in item.findings})
    names = {f.code: f.name for item in plan.files for f in item.findings}
    return [(code, names[code], n, files[code]) for code, n in counts.most_common(most)]


def _headline(plan: Plan) -> str:
    counts = {v: len(plan.by_verdict(v)) for v in VERDICTS}
    total = sum(len(item.findings) for item in plan.files)
    modes = plan.modes()
    mode = ", ".join(f"{n} in {m} mode" for m, n in sorted(modes.items()))
    return (f"{len(plan.files)} files checked, {total} findings{f' ({mode})' if mode else ''}: "
            f"{counts[REWRITE]} to rewrite, {counts[LOOK]} need a look, {counts[MECHANICAL]} mechanical, "
            f"{counts[NOTHING]} with nothing to do.")


def _blockers(item: FilePlan) -> str:
    """What the verdict names: the blockers, or the rewrite-only files a header goes with."""
    verdict = next(f for f in item.findings if f.code == REWRITE_CODE)
    text = verdict.message.removeprefix("rewrite, not port: ")
    return text.removeprefix("built on ").split(", which AMD", 1)[0].split(", whose AMD versions", 1)[0]


def render_markdown(plan: Plan) -> str:
    out = [f"## Port plan: {plan.title}", "", _headline(plan), ""]
    if any(item.findings for item in plan.files):
        out += ["| rule | findings | files |", "| --- | ---: | ---: |"]
        out += [f"| {code} {name} | {n} | {files} |" for code, name, n, files in _top_rules(plan)]
        out.append("")
    out += ["| folder | files | rewrite | needs a look | mechanical | nothing to do | findings |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for folder, items in plan.folders().items():
        counts = Counter(item.verdict for item in items)
        out.append(f"| `{folder}` | {len(items)} | " + " | ".join(str(counts[v]) for v in VERDICTS) +
                   f" | {sum(len(item.findings) for item in items)} |")
    out.append("")
    for verdict, heading, detail in (
            (REWRITE, "Rewrite, not port", _blockers),
            (LOOK, "Needs a look (unsafe or no fix)", FilePlan.codes),
            (MECHANICAL, "Mechanical (`rocmlint check --fix`)", FilePlan.codes)):
        items = plan.by_verdict(verdict)
        if items:
            out += [f"### {heading}: {len(items)} file{'s' if len(items) != 1 else ''}", ""]
            out += [f"- `{item.path}`: {detail(item)}" for item in items]
            out.append("")
    return "\n".join(out).rstrip() + "\n"


BOX, GAP = 16, 2  # a file's square in the chart, and the space between squares
LABEL_HEIGHT, GROUP_GAP, CHAR_WIDTH = 16, 14, 7.2  # a folder's name above its squares (12px text)


def _treemap(plan: Plan, width: int = 960) -> str:
    """The tree as SVG: per folder, its whole name above its files' squares (coloured by
    verdict, wrapped to the width; each square's tooltip names the file), the folders laid
    side by side in shelves. Names are never cut: a group is as wide as its name, the chart
    as wide as the widest group."""
    import html  # html.entities costs start-up; only the HTML page needs it

    folders = plan.folders()
    width = max(width, int(CHAR_WIDTH * max((len(f) for f in folders), default=0)) + 8)
    per_line = max(1, width // (BOX + GAP))
    shapes = []
    x = y = shelf = 0
    for folder, items in folders.items():
        lines = -(-len(items) // per_line)
        group_width = max(int(CHAR_WIDTH * len(folder)) + 4, min(len(items), per_line) * (BOX + GAP))
        group_height = LABEL_HEIGHT + lines * (BOX + GAP)
        if x and x + group_width > width:  # the next shelf
            x, y, shelf = 0, y + shelf + GROUP_GAP, 0
        shapes.append(f'<g><title>{html.escape(folder)}</title>'
                      f'<text x="{x}" y="{y + 12}" font-size="12">{html.escape(folder)}</text>')
        for k, item in enumerate(items):
            left, top = x + (k % per_line) * (BOX + GAP), y + LABEL_HEIGHT + (k // per_line) * (BOX + GAP)
            tip = f"{item.path}: {item.verdict}" + (f" ({len(item.findings)} findings)" if item.findings else "")
            shapes.append(f'<rect x="{left}" y="{top}" width="{BOX}" height="{BOX}" fill="{COLOURS[item.verdict]}">'
                          f"<title>{html.escape(tip)}</title></rect>")
        shapes.append("</g>")
        x += group_width + GROUP_GAP
        shelf = max(shelf, group_height)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{max(y + shelf, 1)}" '
            f'font-family="sans-serif" role="img" aria-label="files by verdict">{"".join(shapes)}</svg>')


def render_html(plan: Plan) -> str:
    import html

    legend = " ".join(f'<span class="key" style="background:{COLOURS[v]}"></span>{v} '
                      f"({len(plan.by_verdict(v))})" for v in VERDICTS)
    rows = []
    for item in plan.files:
        detail = _blockers(item) if item.verdict == REWRITE else item.codes()
        rows.append(f'<tr><td><code>{html.escape(item.path)}</code></td><td style="color:{COLOURS[item.verdict]}">'
                    f"{item.verdict}</td><td>{len(item.findings)}</td><td>{html.escape(detail)}</td></tr>")
    top = "".join(f"<tr><td>{code} {html.escape(name)}</td><td>{n}</td><td>{files}</td></tr>"
                  for code, name, n, files in _top_rules(plan))
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Port plan: {html.escape(plan.title)}</title>
<style>
body {{ font-family: sans-serif; margin: 24px; color: #222; }}
table {{ border-collapse: collapse; margin: 12px 0; }} td, th {{ border-bottom: 1px solid #ddd; padding: 3px 8px;
text-align: left; font-size: 13px; }} .key {{ display: inline-block; width: 12px; height: 12px; margin: 0 4px 0 12px; }}
</style></head><body>
<h1>Port plan: {html.escape(plan.title)}</h1>
<p>{html.escape(_headline(plan))}</p>
<p>{legend}</p>
{_treemap(plan)}
<h2>Top rules</h2><table><tr><th>rule</th><th>findings</th><th>files</th></tr>{top}</table>
<h2>Files</h2><table><tr><th>file</th><th>verdict</th><th>findings</th><th>what</th></tr>{"".join(rows)}</table>
</body></html>
"""
