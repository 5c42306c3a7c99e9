"""What a capability gate switches: the code on each side of it, read for what it does.

A gate that only chooses tuning values (tile and block sizes, stages, warps, Triton configs),
log text or Triton's environment variables is at worst slower on AMD, never wrong. One whose
side names an NVIDIA-only feature (TMA, wgmma/tcgen05, cluster launch, async copies,
FlashAttention-3, Hopper/Blackwell kernels, CUTLASS) turns that feature on wherever an AMD GPU
takes that side, even when the number it compares looks right (``[0] >= 8`` for bf16).
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from ..lazy_re import lazy_compile
from .flow import called_name, containing_list
from .nodes import walk

# Identifier words that name an NVIDIA-architecture feature (underscores separate words).
NVIDIA_FEATURE = lazy_compile(
    r"(?<![a-z0-9])(tma|wgmma|tcgen05|cluster(?:_launch)?|cp_?async|async_?cop(?:y|ies)|"
    r"fa3|flash_?attn_?3|flash_?attention_?3|hopper|blackwell|ampere|sm_?(?:80|89|90a?|100a?|120)|"
    r"cutlass|warpgroup|mbarrier|tensor_?memory|marlin)(?![a-z0-9])", re.IGNORECASE)
# Names of launch and tuning knobs (Triton's compile options and `tl.range` arguments, tile
# sizes): a flag or value bound to one only tunes.
TUNING_KNOB = lazy_compile(
    r"(?:num_warps|num_stages|num_ctas|maxnreg|warp_specialize|waves_per_eu|matrix_instr_nonkdim|kpack|"
    r"loop_unroll_factor|split_k|group_size_m|(?:num_)?threads|(?:block|tile)(?:_size)?(?:_[mnk])?|"
    r"(?:is_)?persistent|epilogue_subtile)",
    re.IGNORECASE)
# Kernel block-size names as Triton and TileLang code writes them (`BT`, `BV`, `BLOCK_K`).
_BLOCK_NAME = lazy_compile(r"B[A-Z]{1,2}|(?:BLOCK|TILE)(?:_[A-Z]+)*")
# An architecture label ("9.0a", "12.0"): a name for a report or a build, not a choice the
# program acts on (so is text with spaces that a label function returns).
_ARCH_LABEL = lazy_compile(r"\d+(?:\.\d+)+[a-z]?")
_LOG_CALL = lazy_compile(r"^(?:print|warn|warning|info|debug|error|log|exception|critical)(?:_once)?$")


@dataclass(frozen=True)
class Switch:
    """The code a gate decides: ``on`` runs where the comparison is True, ``off`` elsewhere."""

    on: tuple[ast.AST, ...]
    off: tuple[ast.AST, ...]
    text_labels: bool = False  # in a function that only returns text: its strings are labels


def switched_code(ctx, compare_path: list, depth: int = 0) -> list[Switch]:
    """The branches the comparison at ``compare_path[-1]`` decides: the ``if`` or conditional
    expression whose test it is part of, or, for a flag (`HOPPER = cap >= (9, 0)`), every
    ``if`` testing that flag in the file (one empty switch for a local flag nothing reads), or,
    for a predicate (`def _is_blackwell(): ... return major >= 10`), what its callers in this
    file switch with its answer. Empty when where it goes is not visible here."""
    found = _test_of(compare_path)
    if found is not None:
        return [found]
    i = len(compare_path) - 2
    while i > 0 and isinstance(compare_path[i], (ast.BoolOp, ast.UnaryOp)):
        i -= 1
    parent = compare_path[i] if i >= 0 else None
    if isinstance(parent, ast.Return) and depth < 2:
        return _predicate_callers(ctx, compare_path[:i + 1], depth)
    if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
        name = parent.targets[0].id
        if knob_name(name):
            return [Switch((), ())]  # `warp_specialize = major not in (10, 12)`: a launch option
        scope = ctx.scope_of(compare_path[:i + 1])
        loads = ctx.loads_of(name, scope)
        if not loads and not isinstance(scope, ast.Module):
            return [Switch((), ())]  # a local flag nothing reads decides nothing
        # A read one platform alone reaches decides nothing on AMD: on NVIDIA only, or in a
        # ROCm-only branch that means AMD's own numbers (`SYSTEM == "rocm" and is_sm90`).
        shared = [load for load in loads if not ctx.gated(ctx.span_of(load).start)]
        if loads and not shared and not (isinstance(scope, ast.Module) and _imported_elsewhere(ctx, name)):
            return [Switch((), ())]
        loads = shared
        switches = []
        for load in loads[:8]:
            load_path = ctx.path_to(load)
            found = _test_of(load_path) or _tuning_argument(load_path) or _helper_parameter(ctx, load_path)
            if found is None:
                return []  # the flag goes where this file cannot follow
            switches.append(found)
        return switches
    if isinstance(parent, (ast.Call, ast.keyword)):
        found = _tuning_argument(compare_path[:i + 2]) or _helper_parameter(ctx, compare_path[:i + 2])
        return [found] if found is not None else []
    return []


def _predicate_callers(ctx, return_path: list, depth: int) -> list[Switch]:
    """What the callers of a module-level predicate switch with its answer: its callers in
    this file and, when other modules import it, theirs (a few files, read here). A caller
    the ROCm build never reaches (under an NVIDIA-only gate) decides nothing on AMD."""
    function = next((n for n in reversed(return_path) if isinstance(n, (*FUNCTION_DEFS, ast.Lambda))), None)
    if not isinstance(function, FUNCTION_DEFS) or len(return_path) < 2 or return_path[1] is not function:
        return []
    calls = [(ctx, load) for load in ctx.loads_of(function.name, ctx.tree)]
    if _imported_elsewhere(ctx, function.name):
        elsewhere = _calls_in_importers(ctx, function.name)
        if elsewhere is None:
            return []
        calls += elsewhere
    if len(calls) > MAX_PREDICATE_CALLS:
        return []
    try:
        return _switched_by_calls(calls, depth)
    finally:
        for other in {id(caller): caller for caller, _load in calls if caller is not ctx}.values():
            other.release()  # another module's context, read for this question only


def _switched_by_calls(calls: list, depth: int) -> list[Switch]:
    switches: list[Switch] = []
    for caller, load in calls:
        call_path = caller.path_to(load)[:-1]
        if not (call_path and isinstance(call_path[-1], ast.Call) and call_path[-1].func is load):
            return []  # passed on or stored: where it goes is not visible
        if caller.gated(caller.span_of(call_path[-1]).start) or operands_settle_on_rocm(caller, call_path):
            switches.append(Switch((), ()))  # only NVIDIA GPUs reach this call, or its answer is not read there
            continue
        found = switched_code(caller, call_path, depth + 1)
        if not found:
            return []
        switches.extend(found)
    return switches


def operands_settle_on_rocm(ctx, path: list) -> bool:
    """The node at the end of ``path`` is an operand of an ``and`` that another operand makes
    False on ROCm (or of an ``or`` made True there), so ROCm never reads its answer:
    `HAS_MAGI_ATTENTION and is_hopper()`, `cap < (9, 0) or not HAS_DEEP_GEMM`."""
    i = len(path) - 1
    while i > 0 and isinstance(path[i - 1], (ast.BoolOp, ast.UnaryOp)):
        parent, child = path[i - 1], path[i]
        if isinstance(parent, ast.BoolOp):
            settled = isinstance(parent.op, ast.Or)
            if any(other is not child and ctx.gates.value(other, True) is settled for other in parent.values):
                return True
        i -= 1
    return False


MAX_PREDICATE_CALLS = 8  # more callers than this: where the answer goes is not followed
MAX_IMPORTERS = 6  # files read to find a predicate's callers in other modules


def _calls_in_importers(ctx, name: str) -> list | None:
    """(context, node) of every use of ``name`` in the project files that import it or its
    module (`name` bound by `from mod import name [as alias]`, or `anything.name`), following
    a package that re-exports it (`from .arch import name` in `__init__.py`); None when the
    model does not know the file or too many files would have to be read."""
    model = ctx.python_model
    if model is None or ctx.project is None:
        return None
    from ..cache import stat_stamp
    from ..model import ParseFailure
    from . import LANGUAGE

    uses: list = []
    todo, read = [ctx.path], {model.relative(ctx.path)}
    while todo:
        importers = model.importers_of(todo.pop(), name)
        if importers is None:
            return None
        for rel in importers:
            if rel in read:
                continue
            read.add(rel)
            if len(read) > MAX_IMPORTERS + 1:
                return None
            path = model.root / rel
            key = ("importer", rel)  # read once a file, whatever number of predicates ask
            other = ctx.cache.get(key)
            if other is None:
                try:
                    source = path.read_bytes()
                    ctx.project.record("file-content", str(path), stat_stamp(path.stat()))
                    other = ctx.cache[key] = LANGUAGE.make_context(str(path), source, ctx.settings)
                except (OSError, ParseFailure):
                    return None
                other.project = ctx.project
            bound = {alias.asname or alias.name for node in walk(other.tree) if isinstance(node, ast.ImportFrom)
                     for alias in node.names if alias.name == name}
            if any(isinstance(stmt, ast.ImportFrom) and any(a.name == name for a in stmt.names) for stmt in other.tree.body):
                todo.append(str(path))  # a re-export: its importers call it too
            for node in walk(other.tree):
                if (isinstance(node, ast.Name) and node.id in bound and isinstance(node.ctx, ast.Load)) or (
                        isinstance(node, ast.Attribute) and node.attr == name and isinstance(node.ctx, ast.Load)):
                    uses.append((other, node))
    return uses


def knob_name(name: str) -> bool:
    """A launch or tuning knob's name (`num_warps`, `warp_specialize`, `BLOCK_M`, `BT`)."""
    return TUNING_KNOB.fullmatch(name) is not None or _BLOCK_NAME.fullmatch(name) is not None


def _helper_parameter(ctx, path: list) -> Switch | None:
    """A flag passed to a module-level function of this file (`_pick_tile(K, V, is_hopper)`):
    what the function's parameter decides there (one level)."""
    parent = path[-2] if len(path) > 1 else None
    call, keyword = (path[-3], parent) if isinstance(parent, ast.keyword) and len(path) > 2 else (parent, None)
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
        return None
    function = next((stmt for stmt in ctx.tree.body if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))
                     and stmt.name == call.func.id), None)
    if function is None or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    positional = function.args.posonlyargs + function.args.args
    if keyword is not None:
        parameter = keyword.arg
    else:
        index = next((i for i, a in enumerate(call.args) if a is path[-1]), None)
        parameter = positional[index].arg if index is not None and index < len(positional) else None
    if parameter is None:
        return None
    on: list = []
    off: list = []
    for load in ctx.loads_of(parameter, function)[:8]:
        load_path = ctx.path_to(load)
        found = _test_of(load_path) or _tuning_argument(load_path)
        if found is None:
            return None
        on.extend(found.on)
        off.extend(found.off)
    return Switch(tuple(on), tuple(off))


def _imported_elsewhere(ctx, name: str) -> bool:
    """Another module may import the module-level ``name``: the project says one does, or,
    with no project model that knows the file, it is public."""
    model = ctx.python_model
    if model is not None and model.covers(ctx.path):
        return model.imported_by_name(name)
    return not name.startswith("_")


def _tuning_argument(path: list) -> Switch | None:
    """A flag passed as a tuning knob (`kernel[grid](..., warp_specialize=flag)`): it only tunes."""
    i = len(path) - 1
    while i > 0 and isinstance(path[i - 1], ast.UnaryOp):
        i -= 1
    parent = path[i - 1] if i > 0 else None
    if isinstance(parent, ast.keyword) and parent.arg and knob_name(parent.arg):
        return Switch((), ())
    return None


def _test_of(path: list) -> Switch | None:
    labels = _returns_text_only(next((n for n in reversed(path) if isinstance(n, FUNCTION_DEFS)), None))
    flipped = False
    i = len(path) - 1
    while i > 0:
        parent, child = path[i - 1], path[i]
        if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not):
            flipped = not flipped
        elif isinstance(parent, (ast.If, ast.While, ast.IfExp)) and parent.test is child:
            body = tuple(parent.body) if isinstance(parent.body, list) else (parent.body,)
            orelse = tuple(parent.orelse) if isinstance(parent.orelse, list) else (parent.orelse,)
            if isinstance(parent, ast.If) and not orelse and i >= 2 and _skips_test(parent.body[-1]):
                # `if cap < (7, 5): pytest.skip(...)`: the rest of the test runs where it is False
                block = containing_list(path[i - 2], parent) or [parent]
                orelse = tuple(block[block.index(parent) + 1:])
            return Switch(orelse, body, labels) if flipped else Switch(body, orelse, labels)
        elif isinstance(parent, ast.Assert) and parent.test is child and i >= 2:
            # `assert cond`: what follows it in its block runs where cond holds; elsewhere it raises
            block = containing_list(path[i - 2], parent) or [parent]
            rest = tuple(block[block.index(parent) + 1:])
            if not rest:
                return None  # a check that only refuses: what it guards is its caller's
            return Switch((), rest, labels) if flipped else Switch(rest, (), labels)
        elif not isinstance(parent, ast.BoolOp):
            return None
        i -= 1
    return None


def _skips_test(stmt: ast.stmt) -> bool:
    """`pytest.skip(...)`, `self.skipTest(...)` or `raise unittest.SkipTest(...)`."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        return called_name(stmt.value) in ("skip", "skipTest")
    if isinstance(stmt, ast.Raise) and stmt.exc is not None:
        raised = stmt.exc.func if isinstance(stmt.exc, ast.Call) else stmt.exc
        name = raised.attr if isinstance(raised, ast.Attribute) else getattr(raised, "id", "")
        return name == "SkipTest"
    return False


def tuning_only(switches: list[Switch]) -> bool:
    """Every side of every switch only chooses tuning values, labels, logs or sets Triton's env."""
    return bool(switches) and all(_tuning(node, s.text_labels) for s in switches for node in (*s.on, *s.off))


# A weight-only quantiser (`float8_weight_only()`, `Float8WeightOnlyConfig`): FP8 weights kept and
# cast up for the matmul, which works on every GPU.
_WEIGHT_ONLY = lazy_compile(r"(?i)weight_?only")


def weight_only_storage(switches: list[Switch]) -> bool:
    """What the gate turns on calls a weight-only quantiser (`float8_weight_only()`,
    `Float8WeightOnlyConfig(...)`) and nothing NVIDIA-only."""
    on = [node for s in switches for node in s.on]
    called = (called_name(n) for node in on for n in walk(node) if isinstance(n, ast.Call))
    return bool(on) and any(_WEIGHT_ONLY.search(word) for word in called if word) and nvidia_feature(on) is None


FUNCTION_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _returns_text_only(function: ast.AST | None) -> bool:
    """Every `return` of the function gives text (`return "int8 qk, fp16 pv"`, an f-string): it
    names something for a report. (One that returns None on the good path returns an error
    message: a refusal, which is not a label.)"""
    if function is None:
        return False
    returns = [n for n in walk(function) if isinstance(n, ast.Return)]
    return bool(returns) and all(isinstance(r.value, ast.JoinedStr) or (
        isinstance(r.value, ast.Constant) and isinstance(r.value.value, str)) for r in returns)


def nvidia_feature(nodes) -> str | None:
    """The first NVIDIA-only feature the code names in its identifiers (what it calls, reads or
    sets; a skip's or a log's text says nothing it does)."""
    for node in nodes:
        for inner in walk(node):
            word = inner.id if isinstance(inner, ast.Name) else inner.attr if isinstance(inner, ast.Attribute) \
                else inner.arg if isinstance(inner, ast.keyword) else None
            m = NVIDIA_FEATURE.search(word) if word else None
            if m:
                return m.group(1)
    return None


def _tuning(node: ast.AST, text: bool = False) -> bool:
    if isinstance(node, ast.expr):
        return _tuning_value(node, text)
    if isinstance(node, ast.Pass):
        return True
    if isinstance(node, ast.Expr):
        return isinstance(node.value, ast.Constant) or _log_call(node.value) or _triton_env(node.value) \
            or _knob_call(node.value)
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if any(_environ_key(t, "TRITON_") for t in targets):
            return True
        names = [n for t in targets for n in (t.elts if isinstance(t, ast.Tuple) else [t])]
        if names and all(isinstance(n, ast.Name) and knob_name(n.id) for n in names):
            return True  # `BC = min(BT, 64)`, `BT, BS, num_warps = ...`: block sizes, whatever the value
        if names and all(isinstance(n, ast.Name) for n in names) and node.value is not None \
                and _number_made(node.value):
            return True  # `min_freq = int(os.environ.get("X", "4096"))`: a local number, computed
        return node.value is not None and _tuning_value(node.value)
    if isinstance(node, ast.Return):
        return node.value is not None and _tuning_value(node.value, text)
    if isinstance(node, ast.If):
        return all(_tuning(n, text) for n in (*node.body, *node.orelse))
    return False


def _tuning_value(node: ast.AST, text: bool = False) -> bool:
    """A number (not a flag), a tuple/list/dict of them, or a Triton config."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, str):  # a label, not a back end's name
            return (text and " " in node.value) or _ARCH_LABEL.fullmatch(node.value) is not None
        return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
    if isinstance(node, ast.JoinedStr):
        return text  # an f-string: text for a person or a report
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return _tuning_value(node.operand)
    if isinstance(node, (ast.Tuple, ast.List)):
        return bool(node.elts) and all(_tuning_value(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        if node.keys and all(isinstance(k, ast.Constant) and isinstance(k.value, str) and knob_name(k.value)
                             for k in node.keys):
            return True  # `{"BV": pick(...), "threads": 256}`: a launch configuration
        return bool(node.values) and all(_tuning_value(v) for v in node.values)
    if isinstance(node, ast.IfExp):
        return _tuning_value(node.body, text) and _tuning_value(node.orelse, text)
    if isinstance(node, ast.Call):
        return called_name(node) == "Config"  # triton.Config(...): a tuning point
    return False


# Functions that make a number of numbers, text or environment values.
_NUMBER_MAKERS = frozenset({"int", "float", "min", "max", "round", "abs", "str", "getenv", "next_power_of_2",
                            "cdiv", "ceil", "floor"})


def _number_made(node: ast.AST, in_call: bool = False) -> bool:
    """An expression that computes a number from numbers, names and the environment (`int(
    os.environ.get("X", str(DEFAULT)))`, `8 if n >= limit else 4`, `max(BT, 16) * 2`): no flag
    (a bool), no call that does anything else."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, str):
            return in_call  # text only as what a number is read from
        return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
    if isinstance(node, ast.Name):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return _number_made(node.operand, in_call)
    if isinstance(node, ast.BinOp):
        return _number_made(node.left, in_call) and _number_made(node.right, in_call)
    if isinstance(node, ast.IfExp):
        return _number_made(node.body, in_call) and _number_made(node.orelse, in_call)
    if isinstance(node, ast.Call) and not node.keywords:
        func = node.func
        name = called_name(node)
        environ = name == "get" and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Attribute) \
            and func.value.attr == "environ"
        return (environ or name in _NUMBER_MAKERS) and all(_number_made(a, True) for a in node.args)
    return False


def _log_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    return _LOG_CALL.match(called_name(node)) is not None


def _knob_call(node: ast.AST) -> bool:
    """A call handed only launch and tuning knobs (`opt_flags.update_opt_flags_constraints(
    {"split_k": 1})`, `set_config(num_warps=4)`): it tunes, whatever it is named."""
    if not isinstance(node, ast.Call) or not (node.args or node.keywords):
        return False
    return all(isinstance(a, ast.Dict) and _tuning_value(a) for a in node.args) and all(
        k.arg is not None and knob_name(k.arg) and _tuning_value(k.value) for k in node.keywords)


def _triton_env(node: ast.AST) -> bool:
    """`os.environ.setdefault("TRITON_...", ...)`, `os.environ.update(...)` of Triton keys."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("setdefault", "__setitem__") and node.args):
        return False
    key = node.args[0]
    return isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value.startswith("TRITON_")


def _environ_key(target: ast.AST, prefix: str) -> bool:
    if not isinstance(target, ast.Subscript):
        return False
    key = target.slice
    return isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value.startswith(prefix)
