from __future__ import annotations

import ast
import re

from rocmlint.fixers.python_gate import TORCH_GATE_LINE, gated_fix, gated_value_edit
from rocmlint.lazy_re import lazy_compile
from rocmlint.model import Applicability
from rocmlint.python.flow import called_name, climb
from rocmlint.python.fp8_flow import dtype_reaches_compute
from rocmlint.python.nodes import walk
from rocmlint.rule import Example, Rule

OCP_E4M3 = "torch.float8_e4m3fn"
FNUZ_WORD = b"fnuz"
# A name that states the E4M3 format itself (`"e4m3fn"`, `"F8_E4M3"`), unlike `"fp8"` or `"float8"`.
_NAMES_E4M3 = lazy_compile(r"(?i)e4m3")
# unittest's comparisons (`assertEqual`, `assertIs`, `assertIn`, ...): they inspect a dtype.
_ASSERTION = lazy_compile(r"assert(?:Equal|NotEqual|Is|IsNot|In|NotIn)$")
# AMD GPUs whose matrix cores take OCP FP8 (`float8_e4m3fn`): CDNA4 (gfx950) and RDNA4 (gfx12).
OCP_FP8_ARCH = lazy_compile(r"gfx(?:95\d|12\d\d)$")
# Code about a format that mandates OCP E4M3 whatever the GPU (MX block formats, NVFP4's
# E4M3 block scales, E8M0/E2M1 companions): the dtype is the format's, not the GPU's.
_FORMAT = r"mx(?:fp|_|\b)|MX[A-Z_]|nvfp4|fp4|e8m0|e2m1|float4|microscal"
FORMAT_WORDS = lazy_compile(_FORMAT, re.IGNORECASE)
# Code that never runs on a GPU or only emulates a format numerically.
_CPU = r"x86|onednn|mkldnn|\bdnnl|_cpu\b|\bcpu_"
CPU_WORDS = lazy_compile(_CPU, re.IGNORECASE)
_EMULATION = r"fake[ _-]?quant|emulat|\bqat\b|_qat\b|\bqat_|simulat|qdq"
EMULATION_WORDS = lazy_compile(_EMULATION, re.IGNORECASE)
# The three at once, in lower case, for lowered text: a function's or a class's whole text is
# read (an ignore-case alternation tries every branch at every character; 2.7x faster so).
_NOT_GPU_WORDS_LOWERED = lazy_compile("|".join((_FORMAT.replace("MX[A-Z_]", "mx[a-z_]"), _EMULATION, _CPU)))
# `x.to(torch.float8_e4m3fn).to(torch.float)`: a reference that only emulates FP8 rounding.
ROUND_TRIP = lazy_compile(r"\.to\(\s*torch\.float8_e4m3fn\s*\)\s*\.(?:to|float|half|bfloat16|double)\(")
# An offline checkpoint converter (`tools/convert_hf_to_fp8.py`, `scripts/convert/quant.py`): what it
# writes is the checkpoint format, and OCP E4M3 is the one checkpoints exchange (loaders convert for MI300).
CONVERTER_PATH = lazy_compile(r"(?:^|/)[^/]*(?:tools|scripts)/(?:[^/]*/)*[^/]*(?:conver[st]|quant|_to_fp8)",
                              re.IGNORECASE)
# A file or folder named for a GPU that computes in OCP E4M3 (`mi355x_moe_task/`, `gfx950_kernels.py`).
OCP_FP8_GPU_PATH = lazy_compile(r"(?:^|[^a-z0-9])(?:gfx95\d|gfx12\d\d|mi35\dx?|rdna4)(?:$|[^a-z0-9])", re.IGNORECASE)
TEST_FILE = lazy_compile(r"(?:^|[/\\])(?:test_[^/\\]*|[^/\\]*_test)\.py$")
_DEVICE_CPU = lazy_compile(r"""["']cpu["']""")
_GPU_WORDS = lazy_compile(r"cuda|gpu|triton|device", re.IGNORECASE)
# A CPU or meta device written out (`device="cpu"`, `with torch.device("meta"):`): it names no
# GPU (meta tensors have shapes and dtypes, no data: nothing computes with them).
_HOST_DEVICE_TEXT = lazy_compile(r"""torch\.device\(\s*["'](?:cpu|meta)["']\s*\)|device\s*=\s*["'](?:cpu|meta)["']"""
                                 r"""|["'](?:cpu|meta)["']""")
# `torch.<dtype>` as written (`torch.float8_e5m2`, `torch.bfloat16`, `torch.int8`, `torch.bool`).
_TORCH_DTYPE = lazy_compile(r"(?:b?float|u?int|complex)\d*(?:_\w+)?|half|double|bool")


def _names_gpu(text: str) -> bool:
    """The code names a GPU or a device other than the CPU (or the meta device)."""
    return _GPU_WORDS.search(_HOST_DEVICE_TEXT.sub("", text)) is not None


def _on_meta_device(path: list) -> bool:
    """Made on the meta device (`with torch.device("meta"):`, `torch.empty(..., device="meta")`):
    tensors with a shape and a dtype but no data, which nothing computes with."""
    for node in reversed(path):
        if isinstance(node, ast.Call) and any(k.arg == "device" and _names_meta(k.value) for k in node.keywords):
            return True
        if isinstance(node, (ast.With, ast.AsyncWith)) and any(_names_meta(item.context_expr) for item in node.items):
            return True
    return False


def _names_meta(node: ast.AST) -> bool:
    """`"meta"` or `torch.device("meta")`."""
    if isinstance(node, ast.Call) and called_name(node) == "device" and len(node.args) == 1:
        node = node.args[0]
    return isinstance(node, ast.Constant) and node.value == "meta"


def _translation_table(table: ast.Dict) -> bool:
    """Format names mapped to distinct dtypes (`{"F8_E4M3": e4m3fn, "F8_E5M2": e5m2}`), not a
    config whose keys name roles (`{"weight_dtype": ..., "act_dtype": ...}`)."""
    dtypes = [value.attr for value in table.values if isinstance(value, ast.Attribute) and _torch_dtype(value)]
    roles = any(isinstance(key, ast.Constant) and str(key.value).lower().endswith(("dtype", "type"))
                for key in table.keys)
    # Distinct dtypes, or many of them with aliases (`"F8_E4M3"` and `"F8_E4M3FN"` both name
    # e4m3fn) when every key that gives e4m3fn names that format (`"fp8"` alone is a choice).
    distinct = len(set(dtypes))
    aliases_name_it = all(isinstance(key, ast.Constant) and _NAMES_E4M3.search(str(key.value))
                          for key, value in zip(table.keys, table.values)
                          if isinstance(value, ast.Attribute) and value.attr == "float8_e4m3fn")
    return len(dtypes) > 1 and (distinct == len(dtypes) or (distinct >= 3 and aliases_name_it)) and not roles


def _returned_for_a_name(path: list) -> bool:
    """The ``return`` sits in an ``if`` that compares a parameter with strings only (`if
    dtype_str == "e4m3fn" or dtype_str == "float8":`): a function translating names to dtypes."""
    function = next((node for node in reversed(path) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    guard = next((node for node in reversed(path) if isinstance(node, ast.If)), None)
    if function is None or guard is None or path.index(guard) < path.index(function):
        return False
    parameters = {a.arg for a in function.args.posonlyargs + function.args.args + function.args.kwonlyargs}
    compares = [n for n in walk(guard.test) if isinstance(n, ast.Compare)]
    # every name that selects it names the format (`"e4m3fn"`, `"F8_E4M3"`); `"fp8"` is a choice
    return bool(compares) and all(
        isinstance(c.left, ast.Name) and c.left.id in parameters
        and all(isinstance(v, ast.Constant) and isinstance(v.value, str) and _NAMES_E4M3.search(v.value)
                for comparator in c.comparators
                for v in (comparator.elts if isinstance(comparator, (ast.Tuple, ast.List, ast.Set)) else [comparator]))
        for c in compares)


def _torch_dtype(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "torch"
            and _TORCH_DTYPE.fullmatch(node.attr) is not None)


class Fp8E4m3fnHardcoded(Rule):
    """`torch.float8_e4m3fn` hard-coded with no choice for AMD's FNUZ format.

    ## What it does
    Finds where `torch.float8_e4m3fn` is *chosen* as the dtype, where the ROCm build runs
    it: a constant or variable (`FP8 = torch.float8_e4m3fn`), a default argument, a config
    value; other uses (`dtype=` at creation, `.to(...)`, `finfo(...)`, arguments) are
    reported once per file, and only when the file names no choice. Not reported:
    comparisons, dtype tables and lists (they inspect the dtype); files that already choose
    `float8_e4m3fnuz` somewhere (the author handles ROCm); projects that name only AMD GPUs
    without FNUZ (an RDNA-only HIP back end in the top-level build; or, when the build names
    none, kernels and Docker images for gfx950 and gfx1250 only); MX / NVFP4 / FP4 code, where the
    format mandates OCP E4M3 on every GPU; CPU-only (x86, oneDNN) and fake-quant or
    emulation code, which never hands the dtype to a GPU; tensors made on the meta device
    (`with torch.device("meta"):`), which hold no data; FP8 used only as storage (tensors
    cast to it, kept or measured, and cast up before anything computes with them: a KV cache,
    packed weights, a layerwise casting's `storage_dtype=`); code the ROCm build never runs, such as a class whose constructor
    raises on ROCm, a module that loads an NVIDIA-only back end (DeepGEMM, CUTLASS DSL,
    TensorRT), or a function that refuses every GPU but gfx950 and gfx12 (`assert arch ==
    "gfx950"`) or lives in a file or folder named for such a GPU (`mi355x_moe/`), which
    compute in OCP E4M3; offline checkpoint converters and quantisers under `tools/` or
    `scripts/` (OCP E4M3 is the format checkpoints exchange); functions translating a name into
    a dtype (`if name == "e4m3fn": return torch.float8_e4m3fn`) and unittest assertions. A tensor
    an autograd Function saves for its backward pass, which casts it up before use, is storage;
    one copied into the caller's buffer (`out.copy_(q)`) reaches compute; one handed only to
    kernels of an NVIDIA-only package (`kernels.quant(v8)` after `import deep_gemm.jit_kernels as
    kernels`) never reaches them on ROCm. A use is reported when the dtype, or a tensor of it, reaches compute: a
    call other than a cast, an allocation or `finfo` (a Triton kernel, `torch._scaled_mm`, a
    quantizer), or leaves what the file shows (returned, a name other modules import).

    ## Why is this bad?
    MI300 (gfx942) implements the FNUZ FP8 formats: `float8_e4m3fnuz` with a maximum of
    240 instead of 448 and a different NaN/zero encoding. Scales computed with
    `finfo(float8_e4m3fn).max` overflow there, and FP8 GEMMs reject or silently
    mis-handle the OCP dtype. (gfx950/MI350 uses the OCP format again, hence the choice
    must be per architecture.) The format matters where FP8 data is computed with: hipBLASLt
    runs the FNUZ types on gfx942 only and the OCP types on gfx950 and gfx12 (hipBLASLt's
    data-type support table), and a `torch._scaled_mm` mixing e4m3fn weights with e4m3fnuz
    activations fails on MI300 with `HIPBLAS_STATUS_NOT_SUPPORTED` (sgl-project/sglang#35111).
    Casting to and from `float8_e4m3fn` for storage works on every GPU.

    ## Example
    ```python
    FP8_DTYPE = torch.float8_e4m3fn
    ```
    Use instead:
    ```python
    FP8_DTYPE = torch.float8_e4m3fnuz if IS_ROCM else torch.float8_e4m3fn
    ```

    ## Fix safety
    Unsafe: the fix picks `float8_e4m3fnuz` on every ROCm GPU, which is right for
    gfx942 (MI300) but not for gfx950 (MI350, OCP FP8); checkpoints and scales stored
    in one format need conversion. NVIDIA keeps `float8_e4m3fn`. A format-mandated
    dtype (MX, NVFP4) is never reported, so never rewritten.

    ## References
    - https://github.com/uccl-project/uccl/pull/804
    - https://github.com/sgl-project/sglang/pull/35111 (mixed OCP/FNUZ `_scaled_mm` on MI300)
    - https://rocm.docs.amd.com/projects/hipBLASLt/en/latest/reference/data-type-support.html
    """

    code = "ROC107"
    name = "fp8-e4m3fn-hardcoded"
    message = "`float8_e4m3fn` hard-coded: MI300 (gfx942) uses `float8_e4m3fnuz` (max 240); choose per arch"
    language = "python"
    # The FNUZ name is an anchor too: a large file parsed as a skeleton keeps the blocks that
    # choose it (``_chooses_fnuz``), which the rule must see; so is ``saved_tensors``: the
    # backward pass that casts up an FP8 tensor its forward saved (``fp8_flow``).
    pattern = r"float8_e4m3fn(?:uz)?\b|\bsaved_tensors\b"
    anchors = ("float8_e4m3fn", "saved_tensors")  # two literals: re scans an alternation slowly
    requires_any = (b"float8_e4m3fn",)  # (a file with `saved_tensors` alone has nothing to say)
    fix_applicability = Applicability.UNSAFE

    valid = (
        "import torch\nFP8 = torch.float8_e4m3fnuz if torch.version.hip else torch.float8_e4m3fn\n",
        "import torch\nSUPPORTED = (torch.float8_e4m3fn, torch.float8_e4m3fnuz)\n",
        "import torch\nDTYPE_NAME = 'float8_e4m3fn'\n",
        "import torch\n\n\ndef shapes_of(converter):\n    with torch.device('meta'):\n"
        "        weight = torch.empty(256, 256, dtype=torch.float8_e4m3fn)\n    return converter.validate(weight)\n",
        "import torch\nis_fp8 = x.dtype == torch.float8_e4m3fn\nFP8_TYPES = [torch.float8_e4m3fn, torch.float8_e5m2]\n",
        "import torch\nif use_fnuz:\n    dt = torch.float8_e4m3fnuz\nelse:\n    dt = torch.float8_e4m3fn\n",
        "import torch\n\n\ndef to_mxfp8(x, elem_dtype=torch.float8_e4m3fn, block_size=32):\n    return x\n",
        "import torch\ndt = torch.float8_e4m3fn\nif torch.version.hip:\n    dt = torch.float8_e4m3fnuz\n",
        "import torch\nBY_NAME = {'f8_e4m3': torch.float8_e4m3fn, 'f8_e5m2': torch.float8_e5m2, 'bf16': torch.bfloat16}\n",
        "import torch\n\n\ndef dtype_from_name(name):\n    if name == 'bf16':\n        return torch.bfloat16\n"
        "    if name == 'e4m3fn' or name in ('f8_e4m3', 'float8_e4m3fn'):\n        return torch.float8_e4m3fn\n"
        "    return name\n",
        "import torch\nST_DTYPES = {'F16': torch.float16, 'BF16': torch.bfloat16, 'F8_E4M3': torch.float8_e4m3fn,\n"
        "             'F8_E4M3FN': torch.float8_e4m3fn}\n",
        "import torch\n\n\nclass Fp8LayerTest(unittest.TestCase):\n    def test_weight_dtype(self):\n"
        "        layer = make_fp8_layer().cuda()\n        self.assertEqual(layer.weight.dtype, torch.float8_e4m3fn)\n",
        "import torch\n\nfrom .fp8_utils import normalize_e4m3fn_to_e4m3fnuz\n\n\ndef quantize_weight(weight, scale):\n"
        "    return (weight / scale).to(torch.float8_e4m3fn)\n\n\ndef load_fp8_weight(layer, weight, scale):\n"
        "    q = quantize_weight(weight, scale)\n    if layer.fnuz:\n"
        "        q, scale, _ = normalize_e4m3fn_to_e4m3fnuz(q, scale)\n    layer.weight, layer.scale = q, scale\n",
    )
    invalid = (
        "import torch\nRECIPE = {'weight_dtype': torch.float8_e4m3fn, 'act_dtype': torch.bfloat16}\n",
        Example(
            "import torch\n\nFP8_MAX = torch.finfo(torch.float8_e4m3fn).max\n",
            expected=(
                'import torch\n'
                '\n'
                + TORCH_GATE_LINE +
                '\n'
                'FP8_MAX = torch.finfo(torch.float8_e4m3fnuz if IS_ROCM else torch.float8_e4m3fn).max\n'
            ),
            unsafe=True,
        ),
        "import torch\n\n\ndef quantize(x, scale):\n    return (x / scale).to(torch.float8_e4m3fn)\n",
        "import torch\n\n\ndef dtype_from_name(name):\n    if name in ('fp8', 'float8'):\n"
        "        return torch.float8_e4m3fn\n    return torch.bfloat16\n",
        "import torch\nDTYPES = {'bf16': torch.bfloat16, 'bfloat16': torch.bfloat16, 'fp16': torch.float16,\n"
        "          'fp8': torch.float8_e4m3fn}\n",
    )

    def check(self, ctx) -> None:
        if FNUZ_WORD in ctx.source and self._chooses_fnuz(ctx):
            return  # the file already chooses the FNUZ variant somewhere: ROCm is handled
        if self._path_context(ctx.path) or self._normalised_at_load(ctx) or self._no_fnuz_target(ctx):
            return
        inline = []
        named = 0
        declared: set[str] = set()
        test_module = bool(TEST_FILE.search(ctx.path))
        for hit in ctx.hits():
            path = ctx.node_path(hit.start)
            node = path[-1]
            if not isinstance(node, (ast.Attribute, ast.Name)) or ctx.qualname(node) != OCP_E4M3:
                continue
            if not isinstance(node.ctx, ast.Load) or ctx.gated(hit.start) or self._only_inspected(path):
                continue
            if self._dtype_already_tested(ctx, path) or self._only_on_ocp_archs(ctx, path):
                continue
            if self._not_gpu_dtype(ctx, path) or (test_module and not self._on_gpu(ctx, path)):
                continue
            if _on_meta_device(path):
                continue
            if not dtype_reaches_compute(ctx, path):
                continue  # storage only: kept, measured or cast up before anything computes with it
            if self._named_choice(path):
                named += 1
                declaration = self._declaration(path)
                if declaration is not None:
                    if declaration in declared:
                        continue  # the file's convention for this parameter or field is reported once
                    declared.add(declaration)
                self._report(ctx, path)
            elif not self._round_trip(path):
                inline.append(path)
        if inline and not named:
            self._report(ctx, inline[0])  # one use stands for the file's repeats

    @classmethod
    def _chooses_fnuz(cls, ctx) -> bool:
        """Somewhere the file uses `float8_e4m3fnuz` as a value, not only in a list of dtypes
        or a comparison (`SUPPORTED = (e4m3fn, e4m3fnuz)` chooses nothing), or calls a function
        named for the conversion to FNUZ (vLLM's `normalize_e4m3fn_to_e4m3fnuz(weight, scale)`)."""
        if re.search(rb"(?<!def )(?<!\w)\w*fnuz\w*\s*\(", ctx.source):
            return True  # read from the text: a large file's skeleton may leave the call out
        for m in re.finditer(rb"float8_e4m3fnuz\b", ctx.source):
            path = ctx.node_path(m.start())
            node = path[-1]
            if isinstance(node, (ast.Attribute, ast.Name)) and len(path) > 1 and not cls._only_inspected(path):
                return True
        return False

    @staticmethod
    def _no_fnuz_target(ctx) -> bool:
        """The project names the AMD GPUs it supports and none is an FNUZ one (gfx940-942): an
        RDNA-only HIP back end (`gfx1100;gfx1201` in its top-level build), or kernels and images
        for gfx950 and gfx1250 only (its Python files and Dockerfiles, read when the build names
        none), where OCP E4M3 is the native format."""
        model = ctx.python_model
        if model is None:
            return False
        targets = model.amd_gpus()
        return bool(targets) and not any(target.startswith("gfx94") for target in targets)

    @staticmethod
    def _normalised_at_load(ctx) -> bool:
        """Weight-loading code (a folder or module named for loading, checkpoints or weights) of
        a project that reinterprets e4m3fn tensors as e4m3fnuz elsewhere: the loaded FP8
        weights are converted for MI300 before any kernel sees them."""
        model = ctx.python_model
        rel = model.relative(ctx.path) if model is not None else None
        return rel is not None and re.search(r"(?i)load|checkpoint|weight", rel) is not None \
            and model.fnuz_conversion() is not None

    @staticmethod
    def _report(ctx, path) -> None:
        node = path[-1]
        fix = None
        if isinstance(node, ast.Attribute):
            edit = gated_value_edit(ctx, node, path[-2], ctx.source_of(node) + "uz")
            fix = gated_fix(ctx, "Use float8_e4m3fnuz on ROCm", [edit], Applicability.UNSAFE)
        ctx.report(ctx.span_of(node), None, fix)

    @staticmethod
    def _named_choice(path) -> bool:
        """The dtype is chosen here once for later uses: the value of a name, attribute or
        config entry (`FP8 = ...`, `self.dtype = ...`, `{"dtype": ...}`), or a default."""
        site = climb(path)
        parent = site[-2]
        if isinstance(parent, (ast.Assign, ast.AnnAssign)) and parent.value is site[-1]:
            return True
        if isinstance(parent, ast.arguments):
            return True  # a default argument
        return isinstance(parent, ast.Dict) and any(v is site[-1] for v in parent.values)

    @staticmethod
    def _declaration(path) -> str | None:
        """The parameter or class field whose default the dtype is (an API's convention)."""
        site = climb(path)
        arguments = site[-2]
        if isinstance(arguments, ast.AnnAssign) and isinstance(arguments.target, ast.Name) and len(site) > 2 \
                and isinstance(site[-3], ast.ClassDef):
            return arguments.target.id
        if not isinstance(arguments, ast.arguments):
            return None
        positional = arguments.posonlyargs + arguments.args
        for arg, default in zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults):
            if default is site[-1]:
                return arg.arg
        for arg, kw_default in zip(arguments.kwonlyargs, arguments.kw_defaults):
            if kw_default is site[-1]:
                return arg.arg
        return None

    @staticmethod
    def _dtype_already_tested(ctx, path) -> bool:
        """Inside `if dtype == torch.float8_e4m3fn:` (or the matching side of a conditional
        expression): the dtype was chosen by whoever set the tested value; this only follows it."""
        for parent, child in zip(path, path[1:]):
            if isinstance(parent, (ast.If, ast.IfExp)) and child is not parent.test:
                in_body = any(item is child for item in parent.body) if isinstance(parent, ast.If) else (
                    child is parent.body)
                for compare in walk(parent.test):
                    if isinstance(compare, ast.Compare) and len(compare.ops) == 1 and any(
                            ctx.qualname(side) == OCP_E4M3 for side in (compare.left, *compare.comparators)):
                        positive = isinstance(compare.ops[0], (ast.Eq, ast.Is, ast.In))
                        if positive == in_body:
                            return True
        return False

    @staticmethod
    def _only_on_ocp_archs(ctx, path) -> bool:
        """The enclosing function refuses every GPU but those that compute in OCP E4M3 (gfx950,
        gfx12): `assert get_arch() == "gfx950"`, or `if arch not in ("gfx950",): raise` before
        the use. There `float8_e4m3fn` is the right format."""
        function = ctx.enclosing(path, (ast.FunctionDef, ast.AsyncFunctionDef))
        if function is None or b"gfx" not in ctx.source:
            return False
        before = path[-1].lineno
        for node in walk(function):
            if getattr(node, "lineno", before) >= before:
                continue
            if isinstance(node, ast.Assert):
                test = node.test
            elif isinstance(node, ast.If) and node.body and isinstance(node.body[-1], ast.Raise):
                test = node.test
            else:
                continue
            archs = [c.value for c in walk(test) if isinstance(c, ast.Constant) and isinstance(c.value, str)
                     and c.value.startswith("gfx")]
            if archs and all(OCP_FP8_ARCH.match(arch) for arch in archs):
                return True
        return False

    @staticmethod
    def _round_trip(path) -> bool:
        """`x.to(torch.float8_e4m3fn).to(torch.float)`: rounding emulated, no FP8 tensor kept."""
        if len(path) < 5:
            return False
        call, attribute, outer = path[-2], path[-3], path[-4]
        return (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "to"
                and isinstance(attribute, ast.Attribute) and attribute.value is call
                and attribute.attr in ("to", "float", "half", "bfloat16", "double") and isinstance(outer, ast.Call))

    @staticmethod
    def _on_gpu(ctx, path) -> bool:
        """In a test module, tests create their own tensors: a test (function or class) that
        never names a GPU or a device runs on the CPU."""
        outermost = path[1] if len(path) > 2 else None  # the module-level def or class
        if isinstance(outermost, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return _names_gpu(ctx.text(ctx.span_of(outermost)))
        # Module level (`CONFIGS = [...]`): the tests that read the name decide.
        if not (isinstance(outermost, ast.Assign) and len(outermost.targets) == 1
                and isinstance(outermost.targets[0], ast.Name)):
            return True
        users = [ctx.path_to(load) for load in ctx.loads_of(outermost.targets[0].id, ctx.tree)]
        scopes = [user[1] for user in users if len(user) > 2]
        if not scopes or len(scopes) < len(users):
            return True
        return any(_names_gpu(ctx.text(ctx.node_span(scope))) for scope in scopes)

    @staticmethod
    def _path_context(path: str) -> bool:
        """The module's own path says format, CPU-only or emulation code (`mx_formats/`, `x86.py`),
        an offline checkpoint converter, or a GPU that computes in OCP E4M3 (`mi355x_moe/`)."""
        name = path.replace("\\", "/")
        return bool(FORMAT_WORDS.search(name) or CPU_WORDS.search(name) or EMULATION_WORDS.search(name)
                    or CONVERTER_PATH.search(name) or OCP_FP8_GPU_PATH.search(name))

    @staticmethod
    def _not_gpu_dtype(ctx, path) -> bool:
        """The dtype is mandated by a format, or the code around it runs on the CPU or only
        emulates the format: the statement and the enclosing function say so."""
        stmt = ctx.statement_of(path)
        function = ctx.enclosing(path, (ast.FunctionDef, ast.AsyncFunctionDef))
        owner = ctx.enclosing(path, ast.ClassDef)
        if stmt is not None and Fp8E4m3fnHardcoded._says_not_gpu(ctx, stmt, statement=True):
            return True
        if any(Fp8E4m3fnHardcoded._says_not_gpu(ctx, node, statement=False)
               for node in (owner, function) if node is not None):
            return True
        if function is None:
            return False
        texts = [ctx.text(ctx.span_of(function))]
        if ROUND_TRIP.search(texts[-1]):
            return True  # an emulating reference: its other FP8 uses emulate too
        # A function that puts its tensors on the CPU and never mentions a GPU.
        return function is not None and bool(_DEVICE_CPU.search(texts[-1])) and not _names_gpu(texts[-1])

    @staticmethod
    def _says_not_gpu(ctx, node, statement: bool) -> bool:
        """Format, emulation or CPU words in a node's text (memoised: a file's many uses may
        share one statement, a table of thousands of lines)."""
        key = ("roc107-not-gpu", id(node), statement)
        found = ctx.cache.get(key)
        if found is None:
            text = ctx.source_of(node) if statement else ctx.text(ctx.span_of(node))
            found = ctx.cache[key] = _NOT_GPU_WORDS_LOWERED.search(text.lower()) is not None
        return found

    @staticmethod
    def _only_inspected(path) -> bool:
        """Compared against (`x.dtype == ...`, a `case` pattern), a key of a dtype table, or one
        of a list of dtypes: the code checks for the dtype rather than choosing it."""
        node, parent = path[-1], path[-2]
        if isinstance(parent, (ast.Compare, ast.MatchValue)):
            return True  # `x.dtype == ...`, `case torch.float8_e4m3fn:`
        if isinstance(parent, ast.Call) and _ASSERTION.match(called_name(parent)):
            return True  # `self.assertEqual(w.dtype, torch.float8_e4m3fn)`
        if isinstance(parent, ast.Return) and _returned_for_a_name(path):
            return True  # `if name == "e4m3fn": return torch.float8_e4m3fn`: the caller's name picks it
        if isinstance(parent, ast.Subscript) and parent.slice is node:
            return True  # a lookup: `PEAK_TOPS[torch.float8_e4m3fn]`
        if isinstance(parent, ast.Dict):
            # a key, a value of a table keyed by something else than option names, or one of a
            # table translating format names into dtypes (`{"F8_E4M3": e4m3fn, "F8_E5M2": e5m2}`):
            # whoever picks the name picks the format
            return any(key is node for key in parent.keys) or not all(
                isinstance(key, ast.Constant) and isinstance(key.value, str) for key in parent.keys) or \
                _translation_table(parent)
        if isinstance(parent, ast.Assign) and parent.value is node and len(parent.targets) == 1:
            # `DTYPES["f8_e4m3"] = torch.float8_e4m3fn`: an entry of a table from format names to
            # dtypes, filled item by item (a role, `cfg["dtype"] = ...`, is a choice)
            key = parent.targets[0].slice if isinstance(parent.targets[0], ast.Subscript) else None
            return isinstance(key, ast.Constant) and isinstance(key.value, str) \
                and not key.value.lower().endswith(("dtype", "type")) and "8" in key.value
        return isinstance(parent, (ast.List, ast.Tuple, ast.Set)) and len(parent.elts) > 1
