"""Where an FP8 dtype goes: into compute (a kernel, a scaled matmul, a quantizer, code that
is not visible here) or only into storage (tensors cast to it and then kept, measured or cast
up before they are used).

FP8 *storage* works on every GPU: PyTorch converts to and from ``float8_e4m3fn`` in ordinary
element-wise kernels on ROCm too. What differs on MI300 (gfx942) is compute: its matrix cores
and hipBLASLt take the FNUZ variant. So a use is followed (names in their scope, ``self.x``
through the class, a parameter's default through the function) and it reaches compute when
the dtype or a tensor of it is handed to a call that is not a cast, an allocation or
``finfo``, or leaves what can be seen (returned, stored in a container, a name other modules
import). Everything else is storage.
"""
from __future__ import annotations

import ast

from ..lazy_re import lazy_compile
from .backends import nvidia_root
from .flow import called_name, climb, containing_list
from .nodes import walk

# Calls that make a tensor of the dtype (`dtype=` argument) or read its range.
_CREATE = frozenset({"empty", "zeros", "ones", "full", "empty_like", "zeros_like", "ones_like", "full_like",
                     "tensor", "as_tensor", "randn", "rand", "empty_strided", "arange", "randint"})
_MEASURE = frozenset({"finfo", "iinfo", "isinstance", "getattr", "str", "repr", "print"})
_CAST = frozenset({"to", "view", "type"})
# Tensor methods that keep the values in the same dtype (the tensor goes on), and reads of metadata.
_SAME_DTYPE = frozenset({"contiguous", "t", "transpose", "reshape", "permute", "clone", "detach", "cpu", "cuda", "data",
                         "flatten", "squeeze", "unsqueeze", "expand", "narrow", "chunk", "split", "T", "mT"})
_METADATA = frozenset({"shape", "size", "numel", "dtype", "device", "nbytes", "element_size", "stride", "dim",
                       "ndim", "is_contiguous", "data_ptr"})
_UPCASTS = frozenset({"float", "half", "bfloat16", "double"})
_STORE_CALLS = frozenset({"save", "copy_", "register_buffer"})
_MAX_DEPTH = 6
# Keywords that name a storage dtype, cast up to a compute dtype before any math (layerwise casting);
# a parameter whose name ends so is the same.
_STORAGE_KEYWORDS = frozenset({"storage_dtype", "weight_storage_dtype"})
# Kernels of formats whose scales are OCP E4M3 by definition (NVFP4), or MX/FP4 formats.
_FORMAT_CALL = lazy_compile(r"(?i)nvfp4|fp4|mxfp|e2m1|float4")
# A weight-only quantiser (`Float8WeightOnlyConfig`, `float8_weight_only`): the dtype it gets stores
# the weights, which are dequantised before any matmul.
_WEIGHT_ONLY = lazy_compile(r"(?i)weight_?only")


def dtype_reaches_compute(ctx, path: list, depth: int = 0) -> bool:
    """The FP8 dtype at ``path[-1]`` (or a name holding it) reaches compute (see the module)."""
    if depth > _MAX_DEPTH:
        return True
    site = climb(path)
    node, parent = site[-1], site[-2]
    if isinstance(parent, (ast.Assign, ast.AnnAssign)) and parent.value is node:
        if _names_storage(parent):
            return False  # `storage_dtype = torch.float8_e4m3fn`: the code says what the dtype is for
        return _name_reaches(ctx, site[:-1], parent, depth, dtype_reaches_compute)
    if isinstance(parent, ast.FormattedValue):
        return False  # written into a message
    if isinstance(parent, ast.arguments):
        parameter = _parameter_of(parent, node)
        function = site[-3] if len(site) > 2 else None
        if parameter is None or not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return True
        if parameter.lower().endswith("storage_dtype"):
            return False  # `def enable_layerwise_casting(self, storage_dtype=torch.float8_e4m3fn, ...)`
        return any(dtype_reaches_compute(ctx, ctx.path_to(load), depth + 1)
                   for load in ctx.loads_of(parameter, function))
    if isinstance(parent, (ast.Compare, ast.MatchValue)):
        return False
    if isinstance(parent, ast.keyword) and parent.arg in _STORAGE_KEYWORDS:
        return False  # `enable_layerwise_casting(storage_dtype=..., compute_dtype=torch.bfloat16)`
    call = _call_receiving(site)
    if call is None:
        return True  # returned, kept in a container, computed with: out of sight
    name = called_name(call)
    if _FORMAT_CALL.search(name):
        return False  # an FP4/MX kernel's E4M3 block scales: the format's dtype on every GPU
    if _WEIGHT_ONLY.search(name):
        return False  # weight-only quantisation: FP8 weights are cast up for the matmul
    if name in ("finfo", "iinfo"):
        return _range_escapes(ctx, ctx.path_to(call))
    if name in _MEASURE:
        return False
    if name in _CREATE or (name in _CAST and isinstance(call.func, ast.Attribute)):
        return tensor_reaches_compute(ctx, ctx.path_to(call), depth + 1)
    receiver = _local_parameter(ctx, call, site[-1])
    if receiver is not None:  # a function of this file: what it does with the parameter decides
        function, bound = receiver
        if bound.lower().endswith("storage_dtype"):
            return False
        return any(dtype_reaches_compute(ctx, ctx.path_to(load), depth + 1) for load in ctx.loads_of(bound, function))
    return True  # a kernel, a quantizer, a scaled matmul: whoever receives the format decides


def _local_parameter(ctx, call: ast.Call,
                     argument: ast.AST) -> tuple[ast.FunctionDef | ast.AsyncFunctionDef, str] | None:
    """(the function, its parameter) that ``argument`` of ``call`` binds, when the call names
    the one function of that name in this file and binds it plainly (by position or keyword)."""
    if not isinstance(call.func, ast.Name) or b"def " + call.func.id.encode() not in ctx.source:
        return None  # (most callees are not this file's functions: no walk for them)
    by_name: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] | None = ctx.cache.get("fp8-flow-functions")
    if by_name is None:  # once a file: the functions it defines, by name
        by_name = {}
        for node in walk(ctx.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                by_name.setdefault(node.name, []).append(node)
        ctx.cache["fp8-flow-functions"] = by_name
    functions = by_name.get(call.func.id, ())
    if len(functions) != 1:
        return None
    function = functions[0]
    parameters = function.args.posonlyargs + function.args.args
    for index, value in enumerate(call.args):
        if value is argument:
            return (function, parameters[index].arg) if index < len(parameters) and not any(
                isinstance(a, ast.Starred) for a in call.args[:index + 1]) else None
    for keyword in call.keywords:
        if keyword.value is argument and keyword.arg is not None:
            names = {a.arg for a in parameters + function.args.kwonlyargs}
            return (function, keyword.arg) if keyword.arg in names else None
    return None


def tensor_reaches_compute(ctx, path: list, depth: int = 0) -> bool:
    """A tensor of the FP8 dtype (``path[-1]``: the call that made it) reaches compute."""
    if depth > _MAX_DEPTH:
        return True
    site = climb(path)
    node, parent = site[-1], site[-2]
    if isinstance(parent, ast.Attribute) and parent.value is node:
        outer = site[-3] if len(site) > 2 else None
        called = isinstance(outer, ast.Call) and outer.func is parent
        if parent.attr in _METADATA or (called and parent.attr in _UPCASTS):
            return False
        if isinstance(outer, ast.Call) and called and parent.attr in _CAST and _converts_away(ctx, outer):
            return False  # cast up (or reinterpreted as bytes) before it is used
        if called and (parent.attr in _SAME_DTYPE or parent.attr in _CAST):
            return tensor_reaches_compute(ctx, site[:-2], depth + 1)  # what `x.contiguous()` gives
        if not called and parent.attr in _SAME_DTYPE:
            return tensor_reaches_compute(ctx, site[:-1], depth + 1)  # `x.T`
        return True
    if isinstance(parent, ast.Subscript) and parent.value is node:
        if isinstance(parent.ctx, ast.Store):
            return False  # `cache[slot] = k`: written into
        return tensor_reaches_compute(ctx, site[:-1], depth + 1)  # a slice of it, same dtype
    if isinstance(parent, (ast.Assign, ast.AnnAssign)) and parent.value is node:
        return _name_reaches(ctx, site[:-1], parent, depth, tensor_reaches_compute)
    call = _call_receiving(site)
    if call is not None and _nvidia_only_callee(ctx, call):
        return False  # a kernel of an NVIDIA-only package (`kernels.quant(x8, ...)`): never called on ROCm
    if call is not None and called_name(call) == "copy_" and _into_a_parameter(ctx, site, call):
        return True  # `out.copy_(q)`: the caller's buffer, which the caller computes with
    if call is not None and called_name(call) in _STORE_CALLS:
        return False
    if call is not None and called_name(call) == "save_for_backward" and _cast_up_in_backward(ctx, site, call):
        return False  # kept for the backward pass, which casts it up before using it
    if call is not None and _FORMAT_CALL.search(called_name(call)):
        return False  # the block scales of an FP4/MX kernel (NVFP4 mandates E4M3 scales)
    if call is not None and called_name(call) == "Parameter":
        return tensor_reaches_compute(ctx, ctx.path_to(call), depth + 1)
    return True


def _nvidia_only_callee(ctx, call: ast.Call) -> bool:
    """The call goes to a name the file imports from an NVIDIA-only package (`import
    deep_gemm.jit_kernels as kernels`, then `kernels.quant(...)`), a call ROCm never makes."""
    base = call.func
    while isinstance(base, ast.Attribute):
        base = base.value
    if not isinstance(base, ast.Name):
        return False
    module = ctx.aliases.get(base.id)
    return module is not None and nvidia_root(module) is not None


def _into_a_parameter(ctx, site: list, call: ast.Call) -> bool:
    """``dst.copy_(x)`` where ``dst`` (or what it is sliced from) is a parameter of the enclosing
    function other than ``self``: the value leaves for the caller."""
    target = call.func.value if isinstance(call.func, ast.Attribute) else None
    while isinstance(target, (ast.Subscript, ast.Attribute)) and not (
            isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"):
        target = target.value
    function = ctx.enclosing(site, (ast.FunctionDef, ast.AsyncFunctionDef))
    if not isinstance(target, ast.Name) or function is None or target.id in ("self", "cls"):
        return False
    arguments = function.args
    return target.id in {a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs}


def _cast_up_in_backward(ctx, site: list, call: ast.Call) -> bool:
    """An autograd Function's ``forward`` saves the tensor (``ctx.save_for_backward(x8, w)``)
    and its ``backward`` first reads it in a cast up (``x8.to(ctx.orig_dtype)``, where
    ``forward`` set ``ctx.orig_dtype = x.dtype``)."""
    position = next((i for i, argument in enumerate(call.args) if argument is site[-1]), None)
    owner = ctx.enclosing(site, ast.ClassDef)
    if position is None or owner is None:
        return False
    backward = next((item for item in owner.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
                     and item.name == "backward"), None)
    if backward is None:
        return False
    for node in walk(backward):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        saved = _saved_tensor_target(node, position)
        if saved is not None:
            if not isinstance(saved, ast.Name):
                return False
            loads = sorted(ctx.loads_of(saved.id, backward), key=lambda n: (n.lineno, n.col_offset))
            if not loads:
                return True  # never read: kept only
            first = ctx.path_to(loads[0])
            attribute, outer = first[-2], first[-3] if len(first) > 2 else None
            return (isinstance(attribute, ast.Attribute) and attribute.attr in _CAST and isinstance(outer, ast.Call)
                    and outer.func is attribute and (_converts_away(ctx, outer) or _to_a_saved_dtype(owner, outer)))
    return False


def _saved_tensor_target(assign: ast.Assign, position: int) -> ast.expr | None:
    """What receives saved tensor ``position`` in ``backward``: `x8, w = ctx.saved_tensors`
    or `x8 = ctx.saved_tensors[0]`; None when this assignment is neither."""
    value, target = assign.value, assign.targets[0]
    if isinstance(value, ast.Attribute) and value.attr == "saved_tensors" \
            and isinstance(target, (ast.Tuple, ast.List)) and position < len(target.elts):
        return target.elts[position]
    if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Attribute) \
            and value.value.attr == "saved_tensors" and isinstance(value.slice, ast.Constant) \
            and value.slice.value == position:
        return target
    return None


def _to_a_saved_dtype(owner: ast.ClassDef, cast: ast.Call) -> bool:
    """``.to(ctx.orig_dtype)`` where the class set ``ctx.orig_dtype = x.dtype``: the dtype the
    tensor had before it was stored."""
    argument = cast.args[0] if cast.args else None
    if not isinstance(argument, ast.Attribute):
        return False
    return any(isinstance(node, ast.Assign) and isinstance(node.value, ast.Attribute) and node.value.attr == "dtype"
               and any(isinstance(t, ast.Attribute) and t.attr == argument.attr for t in node.targets)
               for node in walk(owner))


def _names_storage(assign: ast.Assign | ast.AnnAssign) -> bool:
    """Every target names a storage dtype (`storage_dtype`, `self.weight_storage_dtype`), the
    word layerwise casting uses for the dtype kept between uses and cast up to compute."""
    targets = assign.targets if isinstance(assign, ast.Assign) else [assign.target]
    names = [t.id if isinstance(t, ast.Name) else t.attr if isinstance(t, ast.Attribute) else "" for t in targets]
    return bool(names) and all(name.lower().endswith("storage_dtype") for name in names)


def _range_escapes(ctx, path: list, depth: int = 0) -> bool:
    """`finfo(FP8).max` sizes scales: it matters where the scaled data goes, which the cast
    follows; the number itself only escapes when it is returned (maybe through a local name)
    or kept in a module-level name other modules read."""
    site = climb(path, (ast.IfExp, ast.Attribute, ast.BinOp, ast.UnaryOp, ast.Call))
    parent = site[-2]
    if isinstance(parent, (ast.Return, ast.Yield)):
        return True
    if not (isinstance(parent, (ast.Assign, ast.AnnAssign)) and parent.value is site[-1]) or depth > _MAX_DEPTH:
        return False
    scope = ctx.scope_of(site[:-1])
    for target in parent.targets if isinstance(parent, ast.Assign) else [parent.target]:
        if not isinstance(target, ast.Name):
            continue
        if isinstance(scope, ast.Module):
            if _read_elsewhere(ctx, target.id):
                return True
        elif any(_range_escapes(ctx, ctx.path_to(load), depth + 1) for load in ctx.loads_of(target.id, scope)):
            return True
    return False


def _read_elsewhere(ctx, name: str) -> bool:
    """Other modules may read a module-level name: the project says one imports it, or, with no
    project model that knows the file, it is public."""
    model = ctx.python_model
    if model is not None and model.covers(ctx.path):
        return model.imported_by_name(name)
    return not name.startswith("_")


def _name_reaches(ctx, statement_path: list, assign, depth: int, follow) -> bool:
    """Every read of the name (or ``self.name``) the value is assigned to, followed."""
    targets = assign.targets if isinstance(assign, ast.Assign) else [assign.target]
    scope = ctx.scope_of(statement_path)
    if isinstance(scope, ast.ClassDef):
        return True  # a class attribute or dataclass field: read through instances anywhere
    for target in targets:
        if isinstance(target, ast.Name):
            if isinstance(scope, ast.Module) and _read_elsewhere(ctx, target.id):
                return True  # other modules read it
            in_loop = any(isinstance(node, (ast.For, ast.While, ast.AsyncFor)) for node in statement_path)
            start = (assign.end_lineno, assign.end_col_offset)
            end = _next_binding(statement_path, assign, target.id)
            if any(follow(ctx, ctx.path_to(load), depth + 1) for load in ctx.loads_of(target.id, scope)
                   if in_loop or start < (load.lineno, load.col_offset) < end):
                return True  # (reads above, or past the next plain binding, see another value, unless in a loop)
        elif (attr := _self_attribute(target)) is not None:
            owner = ctx.enclosing(statement_path + [target], ast.ClassDef)
            if owner is None:
                return True
            # Reads above the store in its own function see the value it replaces.
            function = ctx.enclosing(statement_path, (ast.FunctionDef, ast.AsyncFunctionDef))
            before = [n for n in walk(target) if isinstance(n, ast.Attribute)]  # `self.w` of `self.w.data = v`
            if function is not None:
                before += [n for n in walk(function) if isinstance(n, ast.Attribute)
                           and (n.lineno, n.col_offset) < (assign.lineno, assign.col_offset)]
            if any(follow(ctx, ctx.path_to(load), depth + 1)
                   for load in _attribute_loads(owner, attr) if not any(load is b for b in before)):
                return True
        else:
            return True  # an item of a container, a tuple: out of sight
    return False


def _next_binding(statement_path: list, assign: ast.stmt, name: str) -> tuple[float, float]:
    """Where the next plain `name = ...` after ``assign`` in the same block ends (the value
    read from there on is that one's); infinity when there is none."""
    block = (containing_list(statement_path[-2], assign) if len(statement_path) > 1 else None) or [assign]
    for stmt in block[block.index(assign) + 1:]:
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets):
            return (stmt.end_lineno or 0, stmt.end_col_offset or 0)
    return (float("inf"), float("inf"))


def _self_attribute(target: ast.expr) -> str | None:
    """`self.w` or `self.w.data` (a parameter's storage): the attribute's name."""
    if isinstance(target, ast.Attribute) and target.attr == "data" and isinstance(target.value, ast.Attribute):
        target = target.value
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
        return target.attr
    return None


def _attribute_loads(owner: ast.ClassDef, attr: str) -> list[ast.Attribute]:
    return [node for node in walk(owner) if isinstance(node, ast.Attribute) and node.attr == attr
            and isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Name) and node.value.id == "self"]


def _call_receiving(site: list) -> ast.Call | None:
    """The call the value at ``site[-1]`` is an argument of (positional or keyword)."""
    node, parent = site[-1], site[-2]
    if isinstance(parent, ast.keyword) and len(site) > 2 and isinstance(site[-3], ast.Call):
        return site[-3]
    if isinstance(parent, ast.Call) and node is not parent.func:
        return parent
    if isinstance(parent, ast.Starred) and len(site) > 2 and isinstance(site[-3], ast.Call):
        return site[-3]
    return None


def _parameter_of(arguments: ast.arguments, default: ast.AST) -> str | None:
    positional = arguments.posonlyargs + arguments.args
    for arg, value in zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults):
        if value is default:
            return arg.arg
    for arg, kw_value in zip(arguments.kwonlyargs, arguments.kw_defaults):
        if kw_value is default:
            return arg.arg
    return None


def _converts_away(ctx, call: ast.Call) -> bool:
    """`.to(torch.bfloat16)`, `.to(dtype=x.dtype)`, `.view(torch.uint8)`: a dtype other than
    FP8 (a device or a shape keeps the tensor as it is)."""
    return any(_other_dtype(ctx, argument)
               for argument in [*call.args, *(k.value for k in call.keywords if k.arg in ("dtype", None))])


def _other_dtype(ctx, argument: ast.expr) -> bool:
    """A dtype other than FP8: `torch.bfloat16`, `x.dtype` (the dtype of the tensor it meets),
    a compute dtype by name (`self.compute_dtype`), or a choice between such."""
    if isinstance(argument, ast.IfExp):
        return _other_dtype(ctx, argument.body) and _other_dtype(ctx, argument.orelse)
    name = ctx.qualname(argument) or ""
    if name.startswith("torch.") and "float8" not in name and name.rpartition(".")[2] not in ("device",):
        return True
    if isinstance(argument, ast.Attribute) and argument.attr == "dtype":
        return True
    leaf = argument.attr if isinstance(argument, ast.Attribute) else argument.id if isinstance(argument, ast.Name) else ""
    return leaf.endswith(("compute_dtype", "orig_dtype"))
