"""``unifdef -U<macro>`` for one macro: the NVIDIA view the isolation proof compares.

Only conditionals whose expression names the macro and resolves once it is undefined are
removed (as unifdef does by default); every other directive and line passes through.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .preprocessor import Evaluator, directive_parts, logical_lines


@dataclass
class _Frame:
    dead: bool  # inside a dropped region: nothing of this group is output
    resolved: bool  # the opening condition was decided by the macro
    active: bool  # lines of the current branch are output
    taken: bool  # an earlier branch is definitely taken: the rest is dropped
    emitted_if: bool  # an opening #if of this group is in the output


def undefine(data: bytes, macro: str) -> bytes:
    evaluator = Evaluator({}, {macro})
    mentions = re.compile(rb"\b" + re.escape(macro.encode()) + rb"\b")
    directives = {first: (last, text) for first, last, text in logical_lines(data)}
    lines = data.split(b"\n")
    out: list[bytes] = []
    stack: list[_Frame] = []

    def outputting() -> bool:
        return all(f.active and not f.dead for f in stack)

    def decide(kind: str, text: bytes) -> bool | None:
        rest = directive_parts(text)[1]
        if not mentions.search(rest):
            return None
        cond = rest.decode("utf-8", "replace").strip()
        if kind == "ifdef":
            return False
        if kind == "ifndef":
            return True
        value = evaluator.evaluate(cond)
        return None if value is None else bool(value)

    i = 0
    while i < len(lines):
        if i not in directives:
            if outputting():
                out.append(lines[i])
            i += 1
            continue
        last, text = directives[i]
        physical = lines[i : last + 1]
        name = directive_parts(text)[0]
        i = last + 1
        if name in ("if", "ifdef", "ifndef"):
            if not outputting():
                stack.append(_Frame(True, False, False, False, False))
                continue
            # unifdef leaves conditions continued over several lines alone
            value = decide(name, text) if len(physical) == 1 else None
            if value is None:
                stack.append(_Frame(False, False, True, False, True))
                out.extend(physical)
            else:
                stack.append(_Frame(False, True, value, value, False))
            continue
        if name not in ("elif", "else", "endif") or not stack:
            if outputting():
                out.extend(physical)
            continue
        frame = stack[-1]
        parent_out = all(f.active and not f.dead for f in stack[:-1])
        if frame.dead:
            if name == "endif":
                stack.pop()
            continue
        if name == "endif":
            if frame.emitted_if and parent_out:
                out.extend(physical)
            stack.pop()
            continue
        if frame.taken:
            frame.active = False
            continue
        if name == "else":
            frame.active = True
            frame.taken = not frame.emitted_if
            if frame.emitted_if and parent_out:
                out.extend(physical)
            continue
        value = decide("elif", text) if len(physical) == 1 else None
        if value is False:
            frame.active = False
        elif value is True:
            frame.active = frame.taken = True
            if frame.emitted_if and parent_out:
                out.append(_indent(physical[0]) + b"#else" + (b"\r" if physical[-1].endswith(b"\r") else b""))
        else:
            frame.active = True
            if frame.emitted_if:
                out.extend(physical)
            else:
                frame.emitted_if = True
                out.append(re.sub(rb"elif", b"if", physical[0], count=1))
                out.extend(physical[1:])
    return b"\n".join(out)


def _indent(line: bytes) -> bytes:
    return line[: len(line) - len(line.lstrip(b" \t"))]
