"""Makefiles read as text (never run): the sources a recipe compiles with hipcc are built
for AMD (a HIP build of those files, design §2e), and a pattern rule whose recipe runs
hipify (``out_hip/%.hip.cpp: src/%.cu`` then ``hipify-perl $< > $@``) hipifies its source folder.

Variables (``=``, ``:=``, ``?=``, ``+=``) are expanded where a recipe or a prerequisite
names them; a recipe whose compiler is hipcc or amdclang++ (or clang with ``-x hip``)
compiles its rule's prerequisites, and for a pattern rule (``%.o: %.cu``) every source of
that extension the Makefile names (directly, as an object, or by ``$(wildcard ...)``)."""
from __future__ import annotations

import posixpath
import re

from ..evidence import KIND_BUILD_FILE, Evidence
from ..lazy_re import lazy_compile
from .conditions import TRUE, SourceUse

MAKEFILE_NAMES = frozenset({"Makefile", "makefile", "GNUmakefile"})
_ASSIGN = lazy_compile(r"^(?:export[ \t]+|override[ \t]+)?([A-Za-z_][\w.-]*)[ \t]*([:+?!]?:?=)[ \t]*(.*)$")
_RULE = lazy_compile(r"^([^\t#=:][^=:]*?)[ \t]*::?(?!=)[ \t]*([^;]*)")
_REFERENCE = lazy_compile(r"\$[({]([^(){}$]+)[)}]")
_WILDCARD = lazy_compile(r"\$[({]wildcard[ \t]+([^)}]+)[)}]")
_HIP_COMPILER = lazy_compile(r"(?:^|/)(?:hipcc|amdclang\+\+)(?:[ \t]|$)|\bclang\+\+\S*[ \t].*-x[ \t]*hip\b")
_SOURCE = lazy_compile(r"[\w./+-]+\.(?:cu|hip|cpp|cc|cxx|c)\b")
_OBJECT = lazy_compile(r"[\w./+-]+\.o\b")
MAX_EXPANSION = 8


def is_makefile(name: str) -> bool:
    """Makefile, Makefile.internal, make.inc, make.gen.x, rules.mk."""
    return name in MAKEFILE_NAMES or name.endswith(".mk") or name.startswith(("Makefile.", "makefile.", "make."))


def compiles_sources(text: str) -> bool:
    """The Makefile names a C-family source or object: it compiles something itself (a
    Makefile that only wraps ``pip install`` or cleans a build folder builds no source)."""
    return any(_SOURCE.search(line) or _OBJECT.search(line) for _number, line in _logical_lines(text))


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(1-based line, text) with backslash continuations joined and comments dropped."""
    out: list[tuple[int, str]] = []
    pending, start = "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        if not pending:
            start = number
        line = raw.split("#", 1)[0] if not raw.startswith("\t") else raw
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        out.append((start, pending + line))
        pending = ""
    if pending:
        out.append((start, pending))
    return out


class _Makefile:
    def __init__(self, rel: str, text: str) -> None:
        self.rel, self.folder = rel, posixpath.dirname(rel)
        self.variables: dict[str, str] = {}
        self.rules: list[tuple[int, str, str, list[str]]] = []  # (line, targets, prerequisites, recipe)
        for number, line in _logical_lines(text):
            if line.startswith("\t"):
                if self.rules:
                    self.rules[-1][3].append(line.strip())
                continue
            assign = _ASSIGN.match(line)
            if assign:
                name, op, value = assign.groups()
                if op == "+=":
                    self.variables[name] = (self.variables.get(name, "") + " " + value).strip()
                elif op != "?=" or name not in self.variables:
                    self.variables[name] = value.strip()
                continue
            rule = _RULE.match(line)
            if rule:
                self.rules.append((number, rule.group(1).strip(), rule.group(2).strip(), []))

    def expand(self, text: str) -> str:
        for _ in range(MAX_EXPANSION):
            new = _REFERENCE.sub(self._reference, text)
            if new == text:
                break
            text = new
        return text

    def _reference(self, m: re.Match) -> str:
        """A variable's value; ``$(SRC:.cu=.o)`` with its words' suffix replaced; a
        ``$(wildcard ...)`` kept (a glob)."""
        inner = m.group(1).strip()
        if inner.startswith("wildcard"):
            return m.group(0)
        name, _, replace = inner.partition(":")
        value = self.variables.get(name.strip(), "")
        if "=" in replace:
            old, new = replace.split("=", 1)
            value = " ".join(w[: len(w) - len(old)] + new if old and w.endswith(old) else w for w in value.split())
        return value

    def hip_uses(self) -> tuple[list[SourceUse], Evidence | None]:
        """The sources hipcc compiles here, and where it is called."""
        uses: list[SourceUse] = []
        found: Evidence | None = None
        named = self._named_sources()
        for number, targets, prerequisites, recipe in self.rules:
            command = next((line.lstrip("@-+ ") for line in map(self.expand, recipe) if _HIP_COMPILER.search(line)),
                           None)
            if command is None:
                continue
            why = Evidence(f"compiled by `{command.split()[0]}` (Makefile rule {targets})", f"{self.rel}:{number}",
                           KIND_BUILD_FILE)
            found = found or why
            expanded = self.expand(prerequisites)
            sources = [w for m in _WILDCARD.finditer(expanded) for w in m.group(1).split()] + \
                _SOURCE.findall(_WILDCARD.sub("", expanded))
            pattern = re.fullmatch(r"%(\.\w+)", expanded.split()[0]) if expanded.strip() else None
            if pattern is not None:  # %.o: %.cu: every such source the Makefile names
                sources = [s for s in named if s.endswith(pattern.group(1))]
                sources += [o[:-2] + pattern.group(1) for o in _OBJECT.findall(self.expand(" ".join(
                    self.variables.values())))]
            for source in dict.fromkeys(sources):
                path = posixpath.normpath(posixpath.join(self.folder, source))
                kind = "GLOB" if any(c in source for c in "*?[") else ""
                uses.append(SourceUse(path, kind, TRUE, why))
        return uses, found

    def hipify_folders(self) -> list[tuple[str, str, Evidence]]:
        """(source folder, output folder, why) of each pattern rule whose recipe runs hipify."""
        found = []
        for number, targets, prerequisites, recipe in self.rules:
            if not any("hipify" in self.expand(r).lower() for r in recipe):
                continue
            target, source = self.expand(targets).split(), self.expand(prerequisites).split()
            if len(target) != 1 or not source or "%" not in target[0] or "%" not in source[0]:
                continue
            out, src = posixpath.dirname(target[0]), posixpath.dirname(source[0])
            if out != src and "%" not in out + src:
                found.append((posixpath.normpath(posixpath.join(self.folder, src)),
                              posixpath.normpath(posixpath.join(self.folder, out)),
                              Evidence(f"a Makefile rule hipifies {src}/ into {out}/ ({target[0]}: {source[0]})",
                                       f"{self.rel}:{number}", KIND_BUILD_FILE)))
        return found

    def _named_sources(self) -> list[str]:
        every = " ".join(self.variables.values()) + " " + " ".join(p for _, _, p, _ in self.rules)
        wildcards = [w for m in _WILDCARD.finditer(every) for w in m.group(1).split()]
        return wildcards + _SOURCE.findall(self.expand(every))


def read(texts: dict[str, str]) -> tuple[list[SourceUse], list[Evidence], list[tuple[str, str, Evidence]]]:
    """(sources compiled with hipcc, where hipcc is called, folders hipified into others) of a
    project's Makefiles (path -> text)."""
    uses: list[SourceUse] = []
    found: list[Evidence] = []
    hipified: list[tuple[str, str, Evidence]] = []
    for rel, text in sorted(texts.items()):
        if not is_makefile(posixpath.basename(rel)):
            continue
        makefile = _Makefile(rel, text)
        file_uses, why = makefile.hip_uses()
        uses.extend(file_uses)
        if why is not None:
            found.append(why)
        hipified.extend(makefile.hipify_folders())
    return uses, found, hipified


_DEFINE_FLAG = lazy_compile(r"(?:^|\s)-D\s*([A-Za-z_]\w*)")
_NVIDIA_ARCH_FLAG = lazy_compile(r"-gencode\b|--generate-code\b|\barch=compute_\d+|-arch[= ]sm_\d+|"
                                 r"--gpu-architecture[= ]sm_\d+|\bcode=sm_\d+")


def nvidia_arch_defines(texts: dict[str, str]) -> dict[str, Evidence]:
    """Macros the Makefiles define only on lines that also pick an NVIDIA architecture
    (``NVCCFLAGS += -DKITTENS_HOPPER -gencode arch=compute_90a,code=sm_90a``): switches for
    NVIDIA GPUs, which no AMD build (it targets gfx) defines."""
    beside: dict[str, Evidence] = {}
    elsewhere: set[str] = set()
    for rel, text in sorted(texts.items()):
        if not is_makefile(posixpath.basename(rel)):
            continue
        for number, line in _logical_lines(text):
            names = _DEFINE_FLAG.findall(line)
            if not names:
                continue
            arch = _NVIDIA_ARCH_FLAG.search(line)
            for name in names:
                if arch is None:
                    elsewhere.add(name)
                else:
                    beside.setdefault(name, Evidence(
                        f"-D{name} only beside the NVIDIA architecture flag `{arch.group(0).strip()}`: a switch for "
                        "NVIDIA GPUs, which an AMD build (it targets gfx) does not set", f"{rel}:{number}",
                        KIND_BUILD_FILE))
    return {name: why for name, why in beside.items() if name not in elsewhere}

