"""setup.py and other Python build scripts read with ``ast`` (never run): which extensions,
and so which sources, the build compiles under a ROCm-detecting condition.

A condition is a ROCm test when it reads ``torch.version.hip``, ``ROCM_HOME``/``ROCM_PATH``,
``IS_HIP_EXTENSION``, a hip/rocm word in a name (``IS_ROCM``, ``is_rocm_pytorch()``), or a
module-level name bound to such a test; ``not``, ``and``, ``or`` and ``else`` are followed.
Any other condition (``if "--cuda_ext" in sys.argv``: a user's choice) is unknown. An
extension built at module level, outside every condition, is built on ROCm too (torch
hipifies it), unless the script never tests for ROCm and passes nvcc-only flags
(``-gencode``, ``-arch=sm_``, ``-Xptxas``): hipcc would reject those, so it builds for CUDA
alone. A branch that passes nvcc-only flags itself is the CUDA branch when a later branch
of its chain is the ROCm one, or when no branch of the script builds for ROCm. The sources of ``CUDAExtension``/``CppExtension``/``Extension`` calls (and
of any call with a ``sources=`` keyword) are read from literals, lists, ``+``, names bound
at module level, ``os.path.join`` and ``glob.glob``.
"""
from __future__ import annotations

import ast
import posixpath
import re

from ..evidence import KIND_BUILD_FILE, Evidence
from ..lazy_re import lazy_compile
from ..platform_words import READERS
from ..python.nodes import walk
from .cmake import hipify_folders
from .conditions import SUFFIX, TRUE, Cond, SourceUse, and3, describe, or3

_ROCM_WORD = READERS["python-build"]
_EXTENSIONS = lazy_compile(r"(?:^|\.)(?:CUDAExtension|CppExtension|Extension|SyclExtension)$")
_SOURCE = lazy_compile(r"\.(?:cu|cuh|hip|c|cc|cpp|cxx)$")
MAX_SOURCE_BYTES = 1 << 20
_NVCC_ONLY = lazy_compile(r"^-gencode|^-arch=(?:sm|compute)_|^-Xptxas|^--use_fast_math$|^-code=sm_|^--ptxas-options"
                          r"|^--extended-lambda$|^--expt-relaxed-constexpr$")


def rocm_test(node: ast.AST, rocm_names: set[str]) -> bool | None:
    """True when the expression is true exactly on ROCm, False when exactly off ROCm,
    None when it is no ROCm test."""
    if isinstance(node, ast.BoolOp):
        values = [rocm_test(v, rocm_names) for v in node.values]
        combine = and3 if isinstance(node.op, ast.And) else or3
        result = values[0]
        for value in values[1:]:
            result = combine(result, value)
        return result
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


_Items = list  # [(root-relative path, glob kind, Cond)]


class _Reader:
    def __init__(self, rel: str, tree: ast.Module, port: bool = False) -> None:
        self.rel = rel
        self.port = port  # the CUDA build is the port: nvcc-only flags do not make it CUDA-only
        self.folder = rel.rpartition("/")[0]
        self.tree = tree
        self.rocm_names: set[str] = set()
        self.values: dict[str, _Items] = {}  # name -> the sources it holds, each with its condition
        self.strings: dict[str, str] = {}  # name -> a path string it is bound to
        self.extension_names: set[str] = set()  # names bound to an extension class
        self.uses: list[SourceUse] = []
        self.hipify_outputs: list[tuple[str, str, Evidence]] = []  # (CUDA folder, hipified copy's folder, why)

    def read(self) -> list[SourceUse]:
        for stmt in self.tree.body:  # names bound to a ROCm test (IS_ROCM = torch.version.hip is not None)
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                    and rocm_test(stmt.value, self.rocm_names) is True:
                self.rocm_names.add(stmt.targets[0].id)
        top = self._top()
        self._body(self.tree.body, top)
        # Build helpers (def get_extensions(): ...) are read as if called where the script runs.
        for stmt in self.tree.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._body(stmt.body, top)
        return self.uses

    @property
    def rocm_builds(self) -> bool:
        """Some branch that runs only on ROCm builds an extension (or names sources)."""
        found = self.__dict__.get("_rocm_builds")
        if found is None:
            found = False
            for node in walk(self.tree):
                if isinstance(node, ast.If) and _rocm_only(node.test, self.rocm_names):
                    found = any(isinstance(n, ast.Call) and (_EXTENSIONS.search(_call_name(n)) or
                                                            any(k.arg == "sources" for k in n.keywords))
                                for stmt in node.body for n in walk(stmt))
                    if found:
                        break
            self.__dict__["_rocm_builds"] = found
        return found

    def _top(self) -> Cond:
        tests = any(rocm_test(node, self.rocm_names) is not None for node in walk(self.tree)
                    if isinstance(node, (ast.Name, ast.Attribute)))
        if tests or self.port:
            return Cond(True)
        for node in walk(self.tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and _NVCC_ONLY.search(node.value):
                return Cond(False, f"a script that never tests for ROCm and passes the nvcc-only flag "
                                   f"{node.value!r}", f"{self.rel}:{node.lineno}")
        return Cond(True)

    def _chain(self, stmt: ast.If) -> list[tuple[ast.expr | None, list[ast.stmt], int]]:
        """An if/elif/else chain as (test or None for else, body, line)."""
        out: list[tuple[ast.expr | None, list[ast.stmt], int]] = []
        node: ast.stmt | None = stmt
        while isinstance(node, ast.If):
            out.append((node.test, node.body, node.lineno))
            orelse = node.orelse
            if len(orelse) == 1 and isinstance(orelse[0], ast.If):
                node = orelse[0]
            else:
                if orelse:
                    out.append((None, orelse, orelse[0].lineno))
                node = None
        return out

    def _branch_conds(self, chain) -> list[Cond]:
        """Each branch's condition on ROCm: ROCm tests decide; a branch before the chain's
        ROCm branch whose body does CUDA-only work (nvcc-only flags) is the CUDA one."""
        rocm_branch = next((line for test, _body, line in chain
                            if test is not None and _rocm_only(test, self.rocm_names)), None)
        conds: list[Cond] = []
        decided: list[bool | None] = []
        for test, body, line in chain:
            where = f"{self.rel}:{line}"
            text = "else" if test is None else f"if {ast.unparse(test)}"
            if any(v is True for v in decided):
                value: bool | None = False
            elif test is None:
                value = True if all(v is False for v in decided) else None
            else:
                own = rocm_test(test, self.rocm_names)
                if own is None and not self.port and _cuda_work(body) and (rocm_branch is not None and line < rocm_branch
                                                                           or not self.rocm_builds):
                    own = False
                    text += f" (the CUDA branch: its ROCm branch is at line {rocm_branch})" if rocm_branch \
                        else " (nvcc-only flags, and no branch of the script builds for ROCm)"
                value = own if (own is False or all(v is False for v in decided)) else None
            decided.append(value)
            conds.append(Cond(value, text, where))
        return conds

    def _body(self, body: list[ast.stmt], cond: Cond) -> None:
        for stmt in body:
            if isinstance(stmt, ast.If):
                chain = self._chain(stmt)
                for (test, branch_body, line), own in zip(chain, self._branch_conds(chain)):
                    self._body(branch_body, cond.and_(own))
                    if test is not None and own.value is not None and _leaves(branch_body):
                        # `if is_rocm(): return [...]` and what follows runs only when it was not taken
                        cond = cond.and_(Cond(not own.value, f"not {ast.unparse(test)}", f"{self.rel}:{line}"))
                continue
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if isinstance(stmt, (ast.For, ast.While, ast.With, ast.Try)):
                inner = Cond(None, "a loop", f"{self.rel}:{stmt.lineno}") \
                    if isinstance(stmt, (ast.For, ast.While)) else Cond(True)
                for part in ("body", "orelse", "finalbody"):
                    self._body(getattr(stmt, part, []) or [], cond.and_(inner))
                for handler in getattr(stmt, "handlers", []) or []:
                    self._body(handler.body, cond.and_(Cond(None, "an exception handler", f"{self.rel}:{handler.lineno}")))
                continue
            self._statement(stmt, cond)

    def _statement(self, stmt: ast.stmt, cond: Cond) -> None:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            self._bind(stmt.targets[0].id, stmt.value, cond, augment=False)
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            self._bind(stmt.target.id, stmt.value, cond, augment=True)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and len(stmt.value.args) == 1 \
                and isinstance(stmt.value.func, ast.Attribute) and isinstance(stmt.value.func.value, ast.Name) \
                and stmt.value.func.attr in ("extend", "append"):
            added = stmt.value.args[0]  # sources.extend([...]) / sources.append(x)
            self._bind(stmt.value.func.value.id, added if stmt.value.func.attr == "extend" else ast.List(
                elts=[added], ctx=ast.Load()), cond, augment=True)
        for node in walk(stmt):
            if isinstance(node, ast.Call):
                self._extension(node, cond)

    def _bind(self, name: str, value: ast.expr, cond: Cond, augment: bool) -> None:
        text = self._string(value)
        if text is not None and not augment and cond.value is not False:
            self.strings[name] = text
        dotted = _dotted(value)
        if dotted is not None and _EXTENSIONS.search(dotted):
            self.extension_names.add(name)
        found = self._paths(value)
        if found is None:
            return
        found = [(p, g, cond.and_(c)) for p, g, c in found]
        if augment or cond.value is not True:
            self.values[name] = self.values.get(name, []) + found
        else:  # replaced; what another configuration bound stays on record
            self.values[name] = [item for item in self.values.get(name, []) if item[2].value is False] + found

    def _extension(self, call: ast.Call, cond: Cond) -> None:
        name = _call_name(call)
        if "hipify" in name:
            words = [w for k in call.keywords if k.arg for w in (k.arg.upper(), self._string(k.value) or "${?}")]
            mapping = hipify_folders(words, self.folder)
            if mapping is not None:
                self.hipify_outputs.append((*mapping, Evidence(
                    f"{name}(...) writes the hipified copies of {mapping[0] or '.'} to {mapping[1]}",
                    f"{self.rel}:{call.lineno}", KIND_BUILD_FILE)))
        sources = next((k.value for k in call.keywords if k.arg == "sources"), None)
        is_extension = bool(_EXTENSIONS.search(name)) or name in self.extension_names
        if sources is None and is_extension and len(call.args) >= 2:
            sources = call.args[1]
        if sources is None:
            return
        found = self._paths(sources) or []
        where = f"{self.rel}:{call.lineno}"
        what = name.rpartition(".")[2] or "an extension"
        for path, glob, item_cond in found:
            effective = cond.and_(item_cond)
            self.uses.append(SourceUse(path, glob, effective, Evidence(
                f"{what}(...) builds it {describe(effective, '`')}", where, KIND_BUILD_FILE)))

    def _paths(self, node: ast.AST) -> _Items | None:
        """(root-relative path, glob kind, condition) of the sources an expression names;
        None when it names none we can read."""
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            out: _Items = []
            for element in node.elts:
                out.extend(self._paths(element) or [])
            return out
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.BitOr)):
            left, right = self._paths(node.left), self._paths(node.right)
            if left is None and right is None:
                return None
            return (left or []) + (right or [])
        if isinstance(node, ast.IfExp):  # (a if X else []): either list may be built
            body, orelse = self._paths(node.body), self._paths(node.orelse)
            return None if body is None and orelse is None else (body or []) + (orelse or [])
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):  # set(a) - set(b): a, roughly
            return self._paths(node.left)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):  # pathlib: base / "csrc" / "x.cu"
            return self._path_join(node)
        if isinstance(node, ast.Name) and node.id in self.values:
            return self.values[node.id]
        if isinstance(node, ast.JoinedStr):  # f"gen/fwd_hdim{d}_{t}.cu": every file it can name
            parts = [self._field_text(v) for v in node.values]
            pattern = "".join("*" if part is None else part for part in parts)
            if _SOURCE.search(pattern) and pattern.strip("*"):
                return [(self._relative(pattern), "GLOB" if None in parts else "", TRUE)]
            return None
        text = self._string(node)
        if text is not None:
            return [(self._relative(text), "", TRUE)] if _SOURCE.search(text) else None
        if isinstance(node, ast.Call):
            name = _call_name(node)
            if name.endswith("glob") and node.args:
                found = self._string(node.args[0])
                recursive = any(k.arg == "recursive" for k in node.keywords)
                if found is not None:
                    return [(self._relative(found), "GLOB_RECURSE" if recursive or "**" in found else "GLOB", TRUE)]
            if name in ("list", "sorted", "set", "tuple") and len(node.args) == 1:
                return self._paths(node.args[0])
        if isinstance(node, ast.ListComp) and node.generators:
            return self._paths(node.elt) or self._paths(node.generators[0].iter)
        return None

    def _path_join(self, node: ast.BinOp) -> _Items | None:
        """A pathlib join naming a source: the path (the known folder a variable holds is read);
        with leading folders computed at run time (a function's parameter), every project
        file whose path ends with the known part (glob kind SUFFIX)."""
        parts: list[str | None] = []
        todo: list[ast.AST] = [node]
        while todo:
            part = todo.pop()
            if isinstance(part, ast.BinOp) and isinstance(part.op, ast.Div):
                todo += [part.right, part.left]  # the left side is popped first
            elif isinstance(part, ast.Call) and _call_name(part).endswith("Path") and len(part.args) == 1:
                todo.append(part.args[0])
            else:
                parts.append(self._string(part))
        unknown_base = parts[0] is None
        while parts and parts[0] is None:
            parts.pop(0)
        known = [p for p in parts if p is not None]
        if not known or len(known) < len(parts):
            return None  # an unknown folder in the middle of the path
        path = posixpath.join(*known)
        if not _SOURCE.search(path):
            return None
        if not unknown_base:
            return [(self._relative(path), "", TRUE)]
        path = posixpath.normpath(path)
        # a bare file name under an unknown folder could be any file of that name
        return [(path, SUFFIX, TRUE)] if "/" in path else None

    def _field_text(self, value: ast.AST) -> str | None:
        """A piece of an f-string: its text, a field holding a known string
        (``f"{src_dir}/attention.cu"``), or None for a field of unknown value."""
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            return value.value
        if isinstance(value, ast.FormattedValue) and value.conversion == -1 and value.format_spec is None:
            return self._string(value.value)
        return None

    def _string(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            return self.strings.get(node.id)
        if isinstance(node, ast.Call) and _call_name(node).endswith("path.join"):
            parts = [self._string(a) for a in node.args]
            if all(p is not None for p in parts):
                return posixpath.join(*[p for p in parts if p is not None])
            known = [p for p in parts if p is not None]
            if known and parts[0] is None:  # os.path.join(this_dir, "csrc", "x.cu"): the folder of setup.py
                return posixpath.join(*known)
        return None

    def _relative(self, path: str) -> str:
        path = path.replace("**/", "")  # recursive globs match by name at any depth below
        joined = posixpath.normpath(posixpath.join(self.folder, path)) if self.folder else posixpath.normpath(path)
        return joined


def _leaves(body: list[ast.stmt]) -> bool:
    """A branch that always returns or raises: nothing after its ``if`` runs when it is taken."""
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise))


def _rocm_only(test: ast.expr, rocm_names: set[str]) -> bool:
    """The branch runs only on ROCm: a ROCm test, or an ``and`` holding one."""
    if rocm_test(test, rocm_names) is True:
        return True
    return isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) and \
        any(rocm_test(v, rocm_names) is True for v in test.values)


def _cuda_work(body: list[ast.stmt]) -> bool:
    """A branch body that passes nvcc-only flags (hipcc would reject them); a nested ``if``
    selects by its own condition and does not count."""
    for stmt in body:
        if isinstance(stmt, ast.If):
            continue
        for node in walk(stmt):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and _NVCC_ONLY.search(node.value):
                return True
    return False


class _BuilderReader(_Reader):
    """An op-builder module (DeepSpeed's and apex's ``op_builder``): each class's
    ``sources(self)`` returns the sources its extension compiles, relative to the folder of
    the setup.py that imports the module; ``if self.is_rocm_pytorch():`` branches inside it
    decide per platform like a setup.py's."""

    def __init__(self, rel: str, tree: ast.Module, folder: str) -> None:
        super().__init__(rel, tree)
        self.folder = folder
        self.builder = ""
        self.requirement = TRUE  # what the builder needs before it builds anything (is_compatible)

    def read(self) -> list[SourceUse]:
        for cls in self.tree.body:
            if not isinstance(cls, ast.ClassDef):
                continue
            needs = _needs_nvidia_library(cls)
            other = _other_accelerator_base(cls)
            if needs is not None:
                self.requirement = Cond(False, f"{cls.name}.is_compatible() needs {needs[0]}, which has no ROCm "
                                        "build", f"{self.rel}:{needs[1]}")
            elif other is not None:
                self.requirement = Cond(False, f"{cls.name} is a {other} (another accelerator's build)",
                                        f"{self.rel}:{cls.lineno}")
            else:
                self.requirement = TRUE
            for method in cls.body:
                if isinstance(method, ast.FunctionDef) and method.name == "sources":
                    self.builder = cls.name
                    self.values, self.strings = {}, {}
                    self._body(method.body, Cond(True))
        return self.uses


    def _statement(self, stmt: ast.stmt, cond: Cond) -> None:
        super()._statement(stmt, cond)
        if isinstance(stmt, ast.Return) and stmt.value is not None and self.builder:
            where = f"{self.rel}:{stmt.lineno}"
            for path, glob, item_cond in self._paths(stmt.value) or []:
                effective = self.requirement.and_(cond.and_(item_cond))
                self.uses.append(SourceUse(path, glob, effective, Evidence(
                    f"op builder {self.builder}.sources() compiles it {describe(effective, '`')}", where,
                    KIND_BUILD_FILE)))


# NVIDIA-only libraries an op builder may require before it builds (module or attribute names).
_NVIDIA_LIBRARY = lazy_compile(r"\bcutlass", re.IGNORECASE)


def _needs_nvidia_library(cls: ast.ClassDef) -> tuple[str, int] | None:
    """("CUTLASS", line) when the builder's ``is_compatible`` returns False without CUTLASS: an
    ``if`` on a cutlass name (``if self.cutlass_path is None:``) or an ``import cutlass``
    whose ImportError handler leaves with False."""
    method = next((m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == "is_compatible"), None)
    if method is None:
        return None
    for node in walk(method):
        if isinstance(node, ast.If) and _returns_false(node.body) and \
                _NVIDIA_LIBRARY.search(ast.unparse(node.test)):
            return "CUTLASS", node.lineno
        if isinstance(node, ast.Try) and any(isinstance(s, ast.Import) and any(
                _NVIDIA_LIBRARY.match(a.name) for a in s.names) for s in node.body) and \
                any(_returns_false(h.body) for h in node.handlers):
            return "CUTLASS", node.lineno
    return None


# Builder base classes of other accelerators' builds (Intel SYCL/XPU, Huawei NPU, Habana HPU, ...).
_OTHER_ACCELERATOR_BASE = lazy_compile(r"(?:SYCL|XPU|NPU|HPU|MLU|MPS)\w*Builder$")


def _other_accelerator_base(cls: ast.ClassDef) -> str | None:
    """The base class naming another accelerator's builder (``SYCLOpBuilder``), or None."""
    for base in cls.bases:
        name = base.attr if isinstance(base, ast.Attribute) else base.id if isinstance(base, ast.Name) else ""
        if _OTHER_ACCELERATOR_BASE.search(name):
            return name
    return None


def _returns_false(body: list[ast.stmt]) -> bool:
    last = body[-1] if body else None
    return isinstance(last, ast.Return) and isinstance(last.value, ast.Constant) and last.value.value is False


def read_builders(rel: str, text: str, folder: str) -> list[SourceUse]:
    """The source uses of the op-builder classes in one module setup.py imports."""
    if len(text) > MAX_SOURCE_BYTES or "def sources" not in text:
        return []
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return []
    return [u for u in _BuilderReader(rel, tree, folder).read() if not u.path.startswith("..")]


def read(rel: str, text: str) -> list[SourceUse]:
    """The source uses of one Python build script."""
    return read_build(rel, text)[0]


def read_build(rel: str, text: str, folder: str | None = None,
               port: bool = False) -> tuple[list[SourceUse], list[tuple[str, str, Evidence]]]:
    """(source uses, hipify output folders) of one Python build script; ``folder``: for a
    build helper setup.py imports, that setup.py's folder (its paths are relative to it);
    ``port``: read in the port configuration, where the CUDA build (nvcc-only flags and all)
    is what hipcc compiles."""
    if len(text) > MAX_SOURCE_BYTES:
        return [], []
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return [], []
    reader = _Reader(rel, tree, port)
    if folder is not None:
        reader.folder = folder
    return [u for u in reader.read() if not u.path.startswith("..")], reader.hipify_outputs
