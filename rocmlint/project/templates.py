"""Configuration-header templates as the build writes them (design §2e): CMake's
``configure_file`` (``#cmakedefine X``, ``#cmakedefine01 X``, ``#define X @VAR@``), meson's
(``#mesondefine X``, ``@X@``) and autoconf's ``config.h.in`` (``#undef X``, set by
``./configure``). Read as text; the build readers evaluate what each line reads."""
from __future__ import annotations

import re
from typing import NamedTuple

from ..lazy_re import lazy_compile

# Files a build turns into headers: config.h.in, foo_config.hpp.in, AMReX_Config.H.in, x.h.cmakein
_TEMPLATE_NAME = lazy_compile(r"\.(?:h|hh|hpp|hxx|cuh|inc|inl)\.(?:in|cmake|cmakein)$|^config\.h\.in$", re.IGNORECASE)
_LINE = lazy_compile(r"^[ \t]*#[ \t]*(cmakedefine01|cmakedefine|mesondefine|define|undef)[ \t]+([A-Za-z_]\w*)"
                     r"(?:[ \t]+(.*?))?[ \t]*(?://.*|/\*.*)?$", re.MULTILINE)
_VARIABLE = lazy_compile(r"@([A-Za-z_][\w.+-]*)@|\$\{([A-Za-z_][\w.+-]*)\}")
MAX_TEMPLATE_BYTES = 1 << 20


class TemplateLine(NamedTuple):
    kind: str  # cmakedefine | cmakedefine01 | mesondefine | define (with @VAR@) | undef (autoconf)
    macro: str
    rest: str  # what follows the macro name (a #cmakedefine's value, a #define's body)
    line: int  # 1-based

    def variables(self) -> list[str]:
        """The build variables the line's value reads (``@VAR@``, ``${VAR}``)."""
        return [a or b for a, b in _VARIABLE.findall(self.rest)]


def is_template(name: str) -> bool:
    """Whether a file name is a configuration-header template (``config.h.in``)."""
    return bool(_TEMPLATE_NAME.search(name))


def template_lines(text: str) -> list[TemplateLine]:
    """The lines of a template that the build rewrites: ``#cmakedefine``/``#cmakedefine01``/
    ``#mesondefine`` always; a ``#define`` whose body reads a variable; an ``#undef`` (an
    autoconf template's switch)."""
    out = []
    for m in _LINE.finditer(text[:MAX_TEMPLATE_BYTES]):
        kind, macro, rest = m.group(1), m.group(2), m.group(3) or ""
        if kind == "define" and not _VARIABLE.search(rest):
            continue  # a plain #define: the generated header holds it as written
        out.append(TemplateLine(kind, macro, rest, text.count("\n", 0, m.start()) + 1))
    return out


def substitute(rest: str, value_of) -> str | None:
    """``rest`` with each ``@VAR@``/``${VAR}`` replaced by ``value_of(VAR)``; None when one
    of them is not known."""
    unknown = False

    def one(m: re.Match) -> str:
        nonlocal unknown
        value = value_of(m.group(1) or m.group(2))
        if value is None:
            unknown = True
            return ""
        return value
    text = _VARIABLE.sub(one, rest)
    return None if unknown else text


_WRITTEN = lazy_compile(rb"^[ \t]*#[ \t]*(?:cmakedefine01|cmakedefine|mesondefine)\b[^\n]*", re.MULTILINE)


def as_header(text: str) -> bytes:
    """The template as the header it becomes, for its directives: the lines the build writes
    are left out (what they define in the AMD build is the build's fact, read by the model
    for every file; kept as ``#define``s they would read as defined inside the header)."""
    return _WRITTEN.sub(b"", text.encode("utf-8", "surrogateescape"))
