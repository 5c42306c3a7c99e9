"""What the kernel-string pass (rocmlint/python/embedded.py) costs a Python scan.

Analyses every .py file of a tree in this process twice per round, with the rules a run
gives Python files (the C++ rules included: kernel strings) and with the Python rules
only, and prints the best total of each, their ratio, and how many files held a trigger
word. Reading and discovery are left out, so the ratio is an upper bound of the overhead
of a whole run (``rocmlint check``).

    python benchmarks/embedded_kernels.py TREE [--repeat 5]
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

from rocmlint.config import Settings
from rocmlint.engine import EMBEDDED_LANGUAGE, active_rules, analyse_buffer
from rocmlint.languages import ParseFailure
from rocmlint.python.embedded import has_trigger


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    settings = Settings()
    with_kernels = active_rules(settings, "python")
    python_only = tuple(r for r in with_kernels if r.language != EMBEDDED_LANGUAGE)
    files = [(str(p), p.read_bytes()) for p in sorted(args.tree.rglob("*.py")) if p.is_file()]
    triggered = sum(1 for _, data in files if has_trigger(data))
    size = sum(len(data) for _, data in files)
    print(f"{args.tree}: {len(files)} .py files, {size / 1e6:.1f} MB, {triggered} with a trigger word")

    def scan(rules) -> tuple[float, int]:
        found = 0
        start = time.perf_counter()
        for name, data in files:
            try:
                found += len(analyse_buffer(name, data, "python", settings, rules, build_fixes=False))
            except ParseFailure:
                pass
        return time.perf_counter() - start, found

    best = {"python rules only": float("inf"), "with kernel strings": float("inf")}
    counts = {}
    scan(with_kernels)  # warm caches (parsers, automata) before timing
    for _ in range(args.repeat):
        for label, rules in (("python rules only", python_only), ("with kernel strings", with_kernels)):
            seconds, counts[label] = scan(rules)
            best[label] = min(best[label], seconds)
    for label, seconds in best.items():
        print(f"  {label:22} {seconds:7.3f} s  ({counts[label]} findings)")
    print(f"  ratio {best['with kernel strings'] / best['python rules only']:.3f}")


if __name__ == "__main__":
    main()
