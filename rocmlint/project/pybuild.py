"""setup.py and other Python build scripts read with ``ast`` (never run): which extensions,
and so which sources, the build compiles under a ROCm-detecting condition.

A condition is a ROCm test when it reads ``torch.version.hip``, ``ROCM_HOME``/``ROCM_PATH``,
``IS_HIP_EXTENSION``, a hip/rocm word in a name (``IS_ROCM``, ``is_rocm_pytorch()``), or a
module-level name bound to such a test; ``not``, ``and``, ``or`` and ``else`` are followed.
Any other condition (``if "--cuda_ext" in sys.argv``: a user's choice) is unknown. An
extension built at module level, outside every condition, is built on ROCm too (torch
hipifies it), unless the script never tests for ROCm and passes nvcc-only flags
(``-gencode``, ``-arch=sm_``, ``-Xptxas``): hipcc would reject those, so it builds for CUDA
alone. The sources of ``CUDAExtension``/``CppExtension``/``Extension`` calls (and
of any call with a ``sources=`` keyword) are read from literals, lists, ``+``, names bound
at module level, ``os.path.join`` and ``glob.glob``.
"""
from __future__ import annotations

import ast
import posixpath
import re

from ..evidence import KIND_BUILD_FILE, Evidence
from .cmake import Cond, SourceUse

_ROCM_WORD = re.compile(r"(?<![a-z])(?:hip|rocm)(?![a-z])", re.IGNORECASE)
_EXTENSIONS = re.compile(r"(?:^|\.)(?:CUDAExtension|CppExtension|Extension|SyclExtension)$")
_SOURCE = re.compile(r"\.(?:cu|cuh|hip|c|cc|cpp|cxx)$")
MAX_SOURCE_BYTES = 1 << 20
_NVCC_ONLY = re.compile(r"^-gencode|^-arch=(?:sm|compute)_|^-Xptxas|^--use_fast_math$|^-code=sm_")


def rocm_test(node: ast.AST, rocm_names: set[str]) -> bool | None:
    """True when the expression is true exactly on ROCm, False when exactly off ROCm,
    None when it is no ROCm test."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = rocm_test(node.operand, rocm_names)
        return None if inner is None else not inner
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.comparators[0], ast.Constant) \
            and node.comparators[0].value is None:
        inner = rocm_test(node.left, rocm_names)
        if inner is None:
            return None
        return inner if isinstance(node.ops[0], ast.IsNot) else (not inner if isinstance(node.ops[0], ast.Is) else None)
    if isinstance(node, ast.Call) and not node.args and not node.keywords:
        return rocm_test(node.func, rocm_names)
    if isinstance(node, ast.Name):
        return True if node.id in rocm_names or _ROCM_WORD.search(node.id) else None
    if isinstance(node, ast.Attribute):
        dotted = _dotted(node)
        if dotted is not None and (dotted.endswith("version.hip") or _ROCM_WORD.search(dotted.rpartition(".")[2])):
            return True
        if dotted is not None and dotted.endswith("version.cuda"):
            return None  # set on NVIDIA only, but not "exactly off ROCm" for CPU-only builds
    return None


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _call_name(node: ast.Call) -> str:
    return _dotted(node.func) or ""


class _Reader:
    def __init__(self, rel: str, tree: ast.Module) -> None:
        self.rel = rel
        self.folder = rel.rpartition("/")[0]
        self.tree = tree
        self.rocm_names: set[str] = set()
        self.values: dict[str, list[tuple[str, str]]] = {}  # module-level name -> [(path, glob)]
        self.uses: list[SourceUse] = []

    def read(self) -> list[SourceUse]:
        for stmt in self.tree.body:  # names bound to a ROCm test (IS_ROCM = torch.version.hip is not None)
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                    and rocm_test(stmt.value, self.rocm_names) is True:
                self.rocm_names.add(stmt.targets[0].id)
        self._body(self.tree.body, self._top())
        return self.uses

    def _top(self) -> Cond:
        tests = any(rocm_test(node, self.rocm_names) is not None for node in ast.walk(self.tree)
                    if isinstance(node, (ast.Name, ast.Attribute)))
        if tests:
            return Cond(True)
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and _NVCC_ONLY.search(node.value):
                return Cond(False, f"a script that never tests for ROCm and passes the nvcc-only flag "
                                   f"{node.value!r}", f"{self.rel}:{node.lineno}")
        return Cond(True)

    def _body(self, body: list[ast.stmt], cond: Cond) -> None:
        for stmt in body:
            if isinstance(stmt, ast.If):
                test = rocm_test(stmt.test, self.rocm_names)
                text = ast.unparse(stmt.test)
                where = f"{self.rel}:{stmt.lineno}"
                yes = Cond(test, f"if {text}", where)
                no = Cond(None if test is None else not test, f"else of if {text}", where)
                self._body(stmt.body, cond.and_(yes))
                self._body(stmt.orelse, cond.and_(no))
                continue
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue  # read where they are called? a build helper: its calls are not followed
            if isinstance(stmt, (ast.For, ast.While, ast.With, ast.Try)):
                inner = Cond(None, "a loop or handler", f"{self.rel}:{stmt.lineno}") \
                    if isinstance(stmt, (ast.For, ast.While)) else Cond(True)
                for part in ("body", "orelse", "finalbody"):
                    self._body(getattr(stmt, part, []) or [], cond.and_(inner))
                for handler in getattr(stmt, "handlers", []) or []:
                    self._body(handler.body, cond.and_(Cond(None, "an exception handler", f"{self.rel}:{handler.lineno}")))
                continue
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                    and cond.value is not False:
                found = self._paths(stmt.value)
                if found is not None:
                    name = stmt.targets[0].id
                    self.values[name] = found if cond.value is True else self.values.get(name, []) + found
            elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) and cond.value is not False:
                found = self._paths(stmt.value)
                if found is not None:
                    self.values[stmt.target.id] = self.values.get(stmt.target.id, []) + found
            for node in ast.walk(stmt):
                if isinstance(node, ast.Call):
                    self._extension(node, cond)

    def _extension(self, call: ast.Call, cond: Cond) -> None:
        name = _call_name(call)
        sources = next((k.value for k in call.keywords if k.arg == "sources"), None)
        if sources is None and _EXTENSIONS.search(name) and len(call.args) >= 2:
            sources = call.args[1]
        if sources is None:
            return
        found = self._paths(sources) or []
        where = f"{self.rel}:{call.lineno}"
        what = name.rpartition(".")[2] or "an extension"
        for path, glob in found:
            self.uses.append(SourceUse(path, glob, cond, Evidence(
                f"{what}(...) builds it {_describe(cond)}", where, KIND_BUILD_FILE)))

    def _paths(self, node: ast.AST) -> list[tuple[str, str]] | None:
        """Root-relative (path, glob kind) of the sources an expression names; None when it
        names none we can read."""
        if isinstance(node, (ast.List, ast.Tuple)):
            out: list[tuple[str, str]] = []
            for element in node.elts:
                out.extend(self._paths(element) or [])
            return out
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self._paths(node.left), self._paths(node.right)
            if left is None and right is None:
                return None
            return (left or []) + (right or [])
        if isinstance(node, ast.Name):
            return self.values.get(node.id)
        text = self._string(node)
        if text is not None:
            return [(self._relative(text), "")] if _SOURCE.search(text) else None
        if isinstance(node, ast.Call):
            name = _call_name(node)
            if name.endswith("glob") and node.args:
                pattern = self._string(node.args[0])
                recursive = any(k.arg == "recursive" for k in node.keywords)
                if pattern is not None:
                    return [(self._relative(pattern), "GLOB_RECURSE" if recursive or "**" in pattern else "GLOB")]
        if isinstance(node, ast.ListComp) and len(node.generators) == 1:
            return self._paths(node.generators[0].iter)
        return None

    def _string(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Call) and _call_name(node).endswith("path.join"):
            parts = [self._string(a) for a in node.args]
            if all(p is not None for p in parts):
                return posixpath.join(*[p for p in parts if p is not None])
            known = [p for p in parts if p is not None]
            if known and parts[0] is None:  # os.path.join(this_dir, "csrc", "x.cu"): the folder of setup.py
                return posixpath.join(*known)
        if isinstance(node, ast.JoinedStr):
            return None
        return None

    def _relative(self, path: str) -> str:
        joined = posixpath.normpath(posixpath.join(self.folder, path)) if self.folder else posixpath.normpath(path)
        return joined


def _describe(cond: Cond) -> str:
    if cond.value is True and not cond.text:
        return "in every build"
    state = {True: "true", False: "false", None: "undecided"}[cond.value]
    return f"under `{cond.text}` ({cond.where}), {state} in the ROCm build"


def read(rel: str, text: str) -> list[SourceUse]:
    """The source uses of one Python build script."""
    if len(text) > MAX_SOURCE_BYTES:
        return []
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return []
    return [u for u in _Reader(rel, tree).read() if not u.path.startswith("..")]
