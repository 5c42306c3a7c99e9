"""``rocmlint verify --run PROGRAM --compare``: run a program at 64 and at 32 lanes and compare
what it hands back to the host.

The executor's header logs every device-to-host copy (``hipMemcpy*``, ``hipMemcpyFromSymbol``)
and, at a synchronize after a launch, every managed or pinned buffer, in order, with its call
site, how many times that site ran, and the kernels launched since the copy before it. Two runs
of a program that does not depend on the wave size log the same bytes. The first record that
differs, or a different exit status, is a *witness*: the program computes something else on a
64-lane wave. Output that differs only in what the program prints (timers) is a note.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

from .executor import RunResult

WAVES = (64, 32)
_ORDINALS = {1: "st", 2: "nd", 3: "rd"}


@dataclass(frozen=True)
class CopyRecord:
    kind: str            # "copy": a copy to the host; "sync": a host-visible buffer at a synchronize;
    #                      "launch": a kernel's first launch (site: its name; no data)
    site: str            # FILE:LINE of the call
    nth: int             # how many times that site had run
    kernels: tuple[str, ...]  # launched since the record before
    data: bytes


def read_log(path: Path) -> list[CopyRecord]:
    """The records of a copy log (what a run wrote before it ended, also when it stopped)."""
    try:
        blob = path.read_bytes()
    except OSError:
        return []
    records, at = [], 0
    while at < len(blob):
        end = blob.find(b"\n", at)
        if end < 0:
            break
        fields = blob[at:end].decode("utf-8", "replace").split(" ")
        if len(fields) != 5 or not fields[2].isdigit() or not fields[3].isdigit():
            break
        size = int(fields[3])
        data = blob[end + 1:end + 1 + size]
        if len(data) != size:
            break  # cut off by the end of the run
        kernels = () if fields[4] == "-" else tuple(fields[4].split(","))
        records.append(CopyRecord(fields[0], fields[1], int(fields[2]), kernels, data))
        at = end + 1 + size
    return records


@dataclass(frozen=True)
class Witness:
    """Where the 64-lane run first computes something else than the 32-lane run."""
    what: str            # "copy" | "copies" | "status"
    message: str
    site: str = ""       # FILE:LINE of the copy
    nth: int = 0
    offset: int | None = None
    values: dict[int, str] = field(default_factory=dict)   # wave -> the value there
    kernels: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return {"what": self.what, "message": self.message, "site": self.site, "nth": self.nth,
                "offset": self.offset, "values": {str(w): v for w, v in self.values.items()},
                "kernels": list(self.kernels)}


@dataclass
class Comparison:
    program: str
    runs: dict[int, RunResult]
    copies: dict[int, int]               # wave -> records logged
    witness: Witness | None = None
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0                 # both builds and runs
    launched: tuple[str, ...] = ()       # every kernel either run launched
    launched_by_wave: dict[int, tuple[str, ...]] = field(default_factory=dict)

    @property
    def not_run(self) -> str | None:
        """Why the program could not be compared (it did not build, or ran out of time)."""
        for wave in WAVES:
            result = self.runs[wave]
            if result.outcome in ("no-build", "timeout"):
                return f"wave {wave}: {result.outcome}: {result.message or ''}".strip()
            if result.outcome == "stopped" and "time limit of" in (result.message or ""):
                return f"wave {wave}: {result.message} (a longer --time-limit, or smaller --args)"
        return None

    def to_json(self) -> dict:
        return {"target": self.program, "witness": self.witness.to_json() if self.witness else None,
                "not_run": self.not_run, "notes": self.notes, "copies": {str(w): n for w, n in self.copies.items()},
                "launched": list(self.launched),
                "status": {str(w): r.status for w, r in self.runs.items()},
                "reason": {str(w): r.message for w, r in self.runs.items()}}


def ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else _ORDINALS.get(n % 10, 'th')}"


def _value_at(data: bytes, offset: int) -> str:
    """The 4 bytes (or what is left) holding ``offset``, as a 32-bit int and float and in hex."""
    start = offset - offset % 4
    word = data[start:start + 4]
    if len(word) < 4:
        return "end of data" if not word else f"bytes {word.hex()}"
    as_int = struct.unpack("<i", word)[0]
    as_float = struct.unpack("<f", word)[0]
    return f"{as_int} (float {as_float:.7g}, 0x{word[::-1].hex()})"


def _first_difference(left: bytes, right: bytes) -> int:
    if left[:len(right)] == right[:len(left)]:
        return min(len(left), len(right))
    low, high = 0, min(len(left), len(right))
    while high - low > 4096:  # halve on slices: large copies compare at memcmp speed
        middle = (low + high) // 2
        if left[low:middle] != right[low:middle]:
            high = middle
        else:
            low = middle
    return next(i for i in range(low, high) if left[i] != right[i])


def _kernels_text(kernels: tuple[str, ...]) -> str:
    return f"; kernels since the copy before: {', '.join(kernels)}" if kernels else ""


def compare(program: str, runs: dict[int, RunResult], logs: dict[int, list[CopyRecord]]) -> Comparison:
    by_wave = {wave: tuple(r.site for r in logs[wave] if r.kind == "launch") for wave in WAVES}
    launched = tuple(dict.fromkeys(by_wave[64] + by_wave[32]))
    logs = {wave: [r for r in logs[wave] if r.kind != "launch"] for wave in WAVES}
    found = Comparison(program, runs, {wave: len(logs[wave]) for wave in WAVES}, launched=launched,
                       launched_by_wave=by_wave)
    if found.not_run:
        return found
    wide, narrow = logs[64], logs[32]
    for index, (a, b) in enumerate(zip(wide, narrow)):
        if (a.kind, a.site, a.nth) != (b.kind, b.site, b.nth):
            found.witness = Witness("copies", f"the {ordinal(index + 1)} copy to the host is {a.site} at wave 64 and "
                                              f"{b.site} at wave 32: the runs took different paths", a.site, a.nth,
                                    kernels=a.kernels)
            break
        if a.data != b.data:
            offset = _first_difference(a.data, b.data)
            values = {64: _value_at(a.data, offset), 32: _value_at(b.data, offset)}
            what = "copy to the host" if a.kind == "copy" else "host-visible buffer read after the synchronize"
            found.witness = Witness(
                "copy", f"{what} at {a.site} ({ordinal(a.nth)} time) differs at byte {offset} of {len(a.data)}: "
                        f"{values[64]} at wave 64, {values[32]} at wave 32{_kernels_text(a.kernels)}",
                a.site, a.nth, offset, values, a.kernels)
            break
    statuses = {wave: runs[wave].status for wave in WAVES}
    stopped = any(runs[wave].outcome == "stopped" for wave in WAVES)
    if found.witness is None and statuses[64] != statuses[32] and stopped:
        # a run the executor stopped (out of bounds, a trap, a deadlock) copies less after it:
        # the stop is the witness, the missing copies follow from it
        reasons = {wave: runs[wave].message or f"exit {statuses[wave]}" for wave in WAVES}
        found.witness = Witness("status", f"exit status {statuses[64]} at wave 64 ({reasons[64]}), {statuses[32]} "
                                          f"at wave 32 ({reasons[32]})")
        if len(wide) != len(narrow):
            found.notes.append(f"{len(wide)} copies to the host at wave 64, {len(narrow)} at wave 32")
        return found
    if found.witness is None and len(wide) != len(narrow):
        longer = 64 if len(wide) > len(narrow) else 32
        extra = (wide if longer == 64 else narrow)[min(len(wide), len(narrow))]
        found.witness = Witness("copies", f"{len(wide)} copies to the host at wave 64, {len(narrow)} at wave 32: "
                                          f"the run at wave {longer} went on to {extra.site}", extra.site, extra.nth,
                                kernels=extra.kernels)
    if found.witness is None and statuses[64] != statuses[32]:
        reasons = {wave: runs[wave].message or f"exit {statuses[wave]}" for wave in WAVES}
        found.witness = Witness("status", f"exit status {statuses[64]} at wave 64 ({reasons[64]}), {statuses[32]} "
                                          f"at wave 32 ({reasons[32]})")
    elif found.witness is not None and statuses[64] != statuses[32]:
        found.notes.append(f"exit status {statuses[64]} at wave 64, {statuses[32]} at wave 32")
    if runs[64].output != runs[32].output and found.witness is None:
        found.notes.append("the program's own output differs (" + _first_output_difference(runs) +
                           "): not a witness, nothing it copied back differs")
    return found


def _first_output_difference(runs: dict[int, RunResult]) -> str:
    wide, narrow = runs[64].output.splitlines(), runs[32].output.splitlines()
    for number, (a, b) in enumerate(zip(wide, narrow), 1):
        if a != b:
            return f"line {number}: {a.strip()[:80]!r} at wave 64, {b.strip()[:80]!r} at wave 32"
    return f"{len(wide)} lines at wave 64, {len(narrow)} at wave 32"


def render_text(comparisons: list[Comparison]) -> str:
    lines = []
    for found in comparisons:
        if found.not_run:
            lines.append(f"{found.program}: not compared: {found.not_run}")
        elif found.witness is not None:
            lines.append(f"{found.program}: WITNESS: {found.witness.message}")
        else:
            copies = found.copies[64]
            lines.append(f"{found.program}: no witness: {copies} cop{'y' if copies == 1 else 'ies'} to the host, "
                         f"the same at wave 64 and 32; exit status {found.runs[64].status} at both")
        lines += [f"  note: {note}" for note in found.notes]
    witnessed = sum(1 for f in comparisons if f.witness is not None)
    lines.append(f"{len(comparisons)} program{'s' if len(comparisons) != 1 else ''} compared: {witnessed} with a "
                 f"witness, {sum(1 for f in comparisons if f.not_run)} not run")
    return "\n".join(lines)
