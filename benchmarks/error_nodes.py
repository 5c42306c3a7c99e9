"""How rocmlint's C++ rules fare on files tree-sitter cannot fully parse (issue 3, item 1).

For every C/C++/CUDA/HIP file under a tree (default: the installed torch package's
``include/``): does the tree have ERROR nodes, how many hazards do the rules report in such
files (and inside ERROR regions), and how many lines a plain-text search with the rules'
own trigger patterns flags in the same files.

    python benchmarks/error_nodes.py [TREE]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from rocmlint.config import Settings
from rocmlint.cpp.treesitter import parse
from rocmlint.engine import analyse_buffer, rules_for
from rocmlint.languages import language_for


def torch_include() -> Path:
    out = subprocess.run([sys.executable, "-c", "import torch,os;print(os.path.dirname(torch.__file__))"],
                         capture_output=True, text=True, check=True).stdout.strip()
    return Path(out) / "include"


def error_ranges(root) -> list[tuple[int, int]]:
    ranges = []
    stack = [root]
    while stack:
        node = stack.pop()
        if not node.has_error:
            continue
        if node.is_error or node.is_missing:
            ranges.append((node.start_byte, node.end_byte))
            continue
        stack.extend(node.children)
    return ranges


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", nargs="?", type=Path, default=None)
    args = parser.parse_args()
    tree = args.tree or torch_include()
    settings = Settings()
    rules = rules_for(("ROC2", "ROC3"), (), "cpp")
    patterns = [(r.code, r.compiled_pattern()) for r in rules]

    files = [p for p in sorted(tree.rglob("*")) if p.is_file() and language_for(p) == "cpp"]
    totals = Counter()
    by_rule_err, by_rule_text = Counter(), Counter()
    started = time.perf_counter()
    for path in files:
        data = path.read_bytes()
        totals["files"] += 1
        totals["bytes"] += len(data)
        ranges = error_ranges(parse(data, str(path)).root_node)
        findings = analyse_buffer(str(path), data, "cpp", settings, rules)
        if not ranges:
            totals["findings_clean_files"] += len(findings)
            continue
        totals["files_with_errors"] += 1
        totals["bytes_in_errors"] += sum(e - s for s, e in ranges)
        totals["findings_in_error_files"] += len(findings)
        for f in findings:
            by_rule_err[f.code] += 1
            if any(s <= f.span.start < e for s, e in ranges):
                totals["findings_inside_error_nodes"] += 1
        for code, regex in patterns:
            lines = {data.count(b"\n", 0, m.start()) for m in regex.finditer(data)}
            by_rule_text[code] += len(lines)
            totals["text_matches_in_error_files"] += len(lines)
    elapsed = time.perf_counter() - started

    print(f"tree: {tree}")
    print(f"C/C++/CUDA files: {totals['files']} ({totals['bytes'] / 1e6:.1f} MB) in {elapsed:.1f} s "
          f"(parse + lint, one core)")
    share = totals["files_with_errors"] / max(totals["files"], 1)
    print(f"files with ERROR nodes: {totals['files_with_errors']} ({share:.0%}); "
          f"bytes inside ERROR nodes: {totals['bytes_in_errors'] / max(totals['bytes'], 1):.1%}")
    print(f"rocmlint findings in files with ERROR nodes: {totals['findings_in_error_files']} "
          f"(of which inside an ERROR node: {totals['findings_inside_error_nodes']}); "
          f"in clean files: {totals['findings_clean_files']}")
    print(f"plain-text search, same trigger patterns, files with ERROR nodes: "
          f"{totals['text_matches_in_error_files']} matching lines")
    print(f"{'rule':8} {'rocmlint':>9} {'text':>7}")
    for code, _ in patterns:
        print(f"{code:8} {by_rule_err[code]:9} {by_rule_text[code]:7}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
