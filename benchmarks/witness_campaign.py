"""The witness campaign (issue 40 item 4): rocmlint's wave-size findings on real HIP ports, proved or
not by running each port at 64 and 32 lanes on the CPU executor.

    python benchmarks/witness_campaign.py --hecbench HECBENCH/src [--time-limit 120] [--out DIR]
                                          [--only NAME[,NAME]] [--rocmlint EXE]

For each port in benchmarks/witness_campaign.toml: `rocmlint check --select ROC201..ROC210
--witness PROGRAM --args ...` on a copy of the port (once per argument set; a finding is
witnessed when any run witnesses it), then `rocmlint check --fix --unsafe-fixes` on a second
copy and `rocmlint verify --run --compare` of the fixed program. Each finding ends as witnessed,
no difference (the run reached its kernel and nothing copied back differs), not reached (no
kernel the run launched reaches it), definition (outside any function), not run (the run could
not be made: why) or not runnable (the port cannot run here: why). Prints a table and writes
DIR/campaign.json. The input files are written here (small generators), never the project's data.
"""
from __future__ import annotations

import argparse
import json
import random
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

CONFIG = Path(__file__).with_name("witness_campaign.toml")
SELECT = ",".join(f"ROC2{n:02d}" for n in range(1, 11))
ORDER = ("witnessed", "no difference", "definition", "not reached", "not run", "not runnable")


# ----- inputs the campaign writes --------------------------------------------------------------

def ispd_grid(path: Path) -> None:
    """An ISPD'08 global-routing benchmark: a 40 x 40 grid of 2 layers, 200 nets of 2 to 40 pins."""
    rng = random.Random(5)
    lines = ["grid 40 40 2", "vertical capacity 0 20", "horizontal capacity 20 0", "minimum width 1 1",
             "minimum spacing 1 1", "via spacing 1 1", "0 0 10 10", "", "num net 200"]
    for net in range(200):
        pins = rng.choice((2, 3, 4, 6, 9, 16, 40))
        lines.append(f"n{net} {net} {pins} 1")
        lines += [f"{rng.randrange(400)} {rng.randrange(400)} 1" for _ in range(pins)]
    lines.append("0")
    path.write_text("\n".join(lines) + "\n")


GENERATORS = {"ispd_grid": ispd_grid}


# ----- one port ----------------------------------------------------------------------------------

def _copy(port: dict, source: Path, target: Path) -> None:
    shutil.copytree(source, target)
    for relative in port.get("copy", []):
        shutil.copy(source / relative, target / Path(port["program"]).parent / Path(relative).name)
    for name, generator in port.get("inputs", {}).items():
        GENERATORS[generator](target / name)


def _category(finding: dict) -> tuple[str, str]:
    witness = finding.get("witness") or {}
    status, detail = witness.get("status", "not run"), witness.get("detail", "no witness run")
    if status == "not witnessed":
        for prefix, category in (("not reached", "not reached"), ("outside any function", "definition")):
            if detail.startswith(prefix):
                return category, detail
        return "no difference", detail
    return status, detail


def _run(command: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def campaign_port(port: dict, hecbench: Path, rocmlint: list[str], out: Path, limit: float) -> dict:
    name, program = port["name"], port["program"]
    before, after = out / name / "before", out / name / "after"
    shutil.rmtree(out / name, ignore_errors=True)
    _copy(port, hecbench / name, before)
    lint = [*rocmlint, "check", "--select", SELECT, "--no-cache", "--exit-zero", "--output-format", "json", "."]
    findings: dict[tuple[str, int, str], tuple[str, str]] = {}
    runs = [] if port.get("not_runnable") else port.get("args", [""])
    for arguments in runs or [None]:
        command = lint if arguments is None else [*lint, "--witness", program, "--args", arguments,
                                                   "--time-limit", f"{limit:g}"]
        done = _run(command, before, 4 * limit + 600)
        for f in json.loads(done.stdout or "[]"):
            key = (f["path"].removeprefix("./"), f["line"], f["code"])
            found = ("not runnable", port["not_runnable"]) if arguments is None else _category(f)
            if key not in findings or ORDER.index(found[0]) < ORDER.index(findings[key][0]):
                findings[key] = found
    result: dict = {"port": name, "findings": [{"path": p, "line": line, "code": c, "category": cat, "detail": d}
                                               for (p, line, c), (cat, d) in sorted(findings.items())]}
    _copy(port, hecbench / name, after)
    _run([*rocmlint, "check", "--fix", "--unsafe-fixes", "--no-cache", "--exit-zero", "-q", "."], after, 600)
    left = json.loads(_run(lint, after, 600).stdout or "[]")
    result["left_after_fix"] = [f"{f['path'].removeprefix('./')}:{f['line']} {f['code']}" for f in left]
    result["after"] = []
    for arguments in runs:
        done = _run([*rocmlint, "verify", "--run", "--compare", program, "--args", arguments, "--time-limit",
                     f"{limit:g}", "--output-format", "json"], after, 2 * limit + 600)
        try:
            compared = json.loads(done.stdout)[0]
        except (ValueError, IndexError):
            compared = {"witness": None, "not_run": (done.stderr or done.stdout).strip()[-300:]}
        result["after"].append({"args": arguments, "witness": (compared.get("witness") or {}).get("message"),
                                "not_run": compared.get("not_run")})
    return result


def _table(results: list[dict]) -> str:
    head = ["port", "findings", *ORDER, "after --fix --unsafe-fixes"]
    rows = [head, ["---"] * len(head)]
    for r in results:
        counts = {category: sum(1 for f in r["findings"] if f["category"] == category) for category in ORDER}
        after = "; ".join("witness: " + a["witness"][:90] if a["witness"] else
                          ("not run" if a["not_run"] else "no witness") for a in r["after"]) or "-"
        rows.append([r["port"], str(len(r["findings"])), *(str(counts[c]) for c in ORDER), after])
    totals = ["all", str(sum(len(r["findings"]) for r in results))]
    totals += [str(sum(1 for r in results for f in r["findings"] if f["category"] == c)) for c in ORDER] + [""]
    rows.append(totals)
    return "\n".join("| " + " | ".join(row) + " |" for row in rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hecbench", type=Path, required=True, help="HeCBench's src folder at the pinned commit")
    parser.add_argument("--rocmlint", default=None, help="the rocmlint to run (default: this Python's -m rocmlint)")
    parser.add_argument("--time-limit", type=float, default=120.0, help="seconds a run may take (default 120)")
    parser.add_argument("--out", type=Path, default=None, help="where the copies and campaign.json go")
    parser.add_argument("--only", default=None, help="comma list of port names")
    args = parser.parse_args()
    config = tomllib.loads(CONFIG.read_text())
    ports = [p for p in config["port"] if args.only is None or p["name"] in args.only.split(",")]
    missing = [p["name"] for p in ports if not (args.hecbench / p["name"]).is_dir()]
    if missing:
        sys.exit(f"not in {args.hecbench}: {', '.join(missing)} (export {config['hecbench']} at {config['commit']})")
    rocmlint = shlex.split(args.rocmlint) if args.rocmlint else [sys.executable, "-m", "rocmlint"]
    out = args.out or Path(tempfile.mkdtemp(prefix="witness-campaign-"))
    results = []
    for port in ports:
        print(f"{port['name']} ...", file=sys.stderr, flush=True)
        results.append(campaign_port(port, args.hecbench, rocmlint, out, args.time_limit))
        (out / "campaign.json").write_text(json.dumps(results, indent=2))
    print(_table(results))
    print(f"\nper finding: {out / 'campaign.json'}")


if __name__ == "__main__":
    main()
