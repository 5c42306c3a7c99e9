from __future__ import annotations

import ast
import re

from rocmlint.lazy_re import lazy_compile
from rocmlint.model import Applicability, Edit, Fix
from rocmlint.python.flow import value_sites
from rocmlint.python.gates import CUDA_VERSION, GPU_PRESENT, HIP_VERSION
from rocmlint.python.nodes import walk
from rocmlint.rule import Rule

# Calls that treat their argument as a version string or number.
VERSION_PARSERS = frozenset({
    "float", "int", "str.split", "version.parse", "packaging.version.parse", "packaging.version.Version",
    "Version", "LooseVersion", "distutils.version.LooseVersion", "parse_version", "pkg_resources.parse_version",
})
_TESTS = (ast.If, ast.While, ast.IfExp, ast.Assert)
# Comparisons that hold for None too (only an ordering, `>= "11.8"`, raises on None).
_EQUALITY = (ast.Eq, ast.NotEq, ast.In, ast.NotIn)


class TorchVersionCudaAssumed(Rule):
    """`torch.version.cuda` used as a version string or as "a GPU is present".

    ## What it does
    Finds `torch.version.cuda` (also through a variable) parsed as a version
    (`.split(".")`, `float(...)`, `version.parse(...)`, ordered against `"11.8"`, indexed)
    or tested for truth / `is not None` in an `if` whose CUDA branch drives the GPU
    (`.cuda()`, `torch.cuda.*`, `"cuda"` devices) that ROCm also has. Toolkit-specific
    branches (nvcc, `CUDA_HOME`, cuDNN, ...), uses already on the CUDA side of a gate
    (`if torch.version.cuda:` bodies, `else` of `torch.version.hip`) and tests that also
    look at `torch.version.hip` are not reported.

    ## Why is this bad?
    On ROCm builds `torch.version.cuda` is `None` (the HIP version is in
    `torch.version.hip`): version parsing raises `AttributeError`/`TypeError`, and
    "GPU present" checks silently take the CPU path on AMD GPUs.

    ## Example
    ```python
    if torch.version.cuda is not None:
        model.cuda()
    ```
    Use instead:
    ```python
    if torch.cuda.is_available():
        model.cuda()
    ```

    ## Fix safety
    Display-only: a presence test is shown as `torch.cuda.is_available()`, which is not
    the same question on CPU-only CUDA builds; version parsing needs a decision about
    what the HIP version means for the code, so it is only reported.

    ## References
    - https://github.com/pytorch/pytorch/pull/172740
    """

    code = "ROC105"
    name = "torch-version-cuda-assumed"
    message = "`torch.version.cuda` is None on ROCm: {use}"
    language = "python"
    pattern = r"version\.cuda\b"
    fix_applicability = Applicability.DISPLAY_ONLY

    valid = (
        "import torch\nprint('CUDA', torch.version.cuda)\n",
        "import torch\nif torch.version.cuda:\n    x = x.cuda()\nelif torch.version.hip:\n    x = x.to('cuda')\n",
        "import torch\nif torch.version.cuda is not None:\n    os.environ['NVCC_APPEND_FLAGS'] = '-lineinfo'\n",
        "import torch\ngpu = torch.version.cuda or torch.version.hip\nif gpu:\n    pass\n",
        "import torch\nif torch.version.cuda:\n    major = int(torch.version.cuda.split('.')[0])\n",
        "import torch\nif torch.version.hip:\n    arch = 'rocm'\nelse:\n    major = torch.version.cuda.split('.')[0]\n",
        "import torch\ndevices = ['cpu', 'cuda'] if torch.cuda.is_available() and torch.version.cuda else ['cpu']\n",
        "import torch\nif torch.version.cuda not in ('11.3', '11.7'):\n    skip('verified on CUDA 11.3 and 11.7 only')\n",
        "import torch\nkernel_file = 'gemm_118.pdll' if torch.version.cuda == '11.8' else 'gemm.pdll'\n",
    )
    invalid = (
        "import torch\nif torch.version.cuda is not None:\n    model.cuda()\n",
        "import torch\ncuda_major = int(torch.version.cuda.split('.')[0])\n",
        "import torch\nfrom packaging import version\n\nver = torch.version.cuda\n"
        "NEW_CUDA = version.parse(ver) >= version.parse('12.1')\n",
        "import torch\nif torch.version.cuda >= '12.1':\n    use_new_allocator()\n",
    )

    def check(self, ctx) -> None:
        for hit in ctx.hits():
            path = ctx.node_path(hit.end - 1)
            node = path[-1]
            if not isinstance(node, ast.Attribute) or ctx.qualname(node) != CUDA_VERSION:
                continue
            for site in value_sites(ctx, path):
                if ctx.gated(ctx.span_of(site[-1]).start):
                    continue
                use = self._hazard(ctx, site)
                if use is None:
                    continue
                fix = self._presence_fix(ctx, site) if use == PRESENCE else None
                ctx.report(ctx.span_of(node), self.message.format(use=use), fix)
                break

    @staticmethod
    def _hazard(ctx, site) -> str | None:
        node, parent = site[-1], site[-2]
        if isinstance(parent, ast.BoolOp) and "hip" in ctx.source_of(parent):
            return None  # `torch.version.cuda or torch.version.hip`
        if isinstance(parent, (ast.Compare, ast.UnaryOp, ast.BoolOp) + _TESTS):
            guarded = _presence_guarded(ctx, site)
            if guarded is not None:
                return PRESENCE if guarded else None
        if isinstance(parent, ast.Compare):
            others = [parent.left, *parent.comparators]
            if any(isinstance(o, ast.Constant) and o.value is None for o in others):
                return None
            if all(isinstance(op, _EQUALITY) for op in parent.ops):
                return None  # `== "11.3"`, `in ("11.0", "11.1")`: None just differs; nothing parses or raises
            return VERSION
        if isinstance(parent, ast.Attribute) or (isinstance(parent, ast.Subscript) and parent.value is node):
            return VERSION
        if isinstance(parent, ast.Call) and node is not parent.func and ctx.qualname(parent.func) in VERSION_PARSERS:
            return VERSION
        if isinstance(parent, ast.BinOp):
            return VERSION
        return None

    @staticmethod
    def _presence_fix(ctx, site) -> Fix | None:
        node, parent = site[-1], site[-2]
        if isinstance(parent, ast.Compare) and len(parent.ops) == 1:
            negated = isinstance(parent.ops[0], (ast.Is, ast.Eq))
            target, text = parent, ("not " if negated else "") + "torch.cuda.is_available()"
        elif isinstance(parent, _TESTS):
            target, text = node, "torch.cuda.is_available()"
        else:
            return None
        return Fix((Edit(ctx.node_span(target), text),), "Test for a GPU with torch.cuda.is_available()",
                   Applicability.DISPLAY_ONLY)


def _rocm_branch_follows(ctx, owner: ast.AST) -> bool:
    """An ``elif`` of the chain tests ``torch.version.hip``."""
    while isinstance(owner, ast.If) and len(owner.orelse) == 1 and isinstance(owner.orelse[0], ast.If):
        owner = owner.orelse[0]
        if any(ctx.qualname(n) == HIP_VERSION for n in walk(owner.test) if isinstance(n, ast.Attribute)):
            return True
    return False


def _presence_guarded(ctx, site) -> bool | None:
    """For `torch.version.cuda` tested as a condition: True when the branch taken "if CUDA"
    drives the GPU (`.cuda()`, `torch.cuda.*`, `"cuda"` devices), which ROCm also has;
    False when it is toolkit-specific (nvcc, CUDA_HOME, ...) or parses the version itself;
    None when the value is not a condition of an `if`/`while`/conditional expression."""
    positive = True
    i = len(site) - 1
    parent = site[i - 1]
    if isinstance(parent, ast.Compare):
        if len(parent.ops) != 1 or not any(isinstance(o, ast.Constant) and o.value is None
                                           for o in (parent.left, *parent.comparators)):
            return None
        positive = isinstance(parent.ops[0], (ast.IsNot, ast.NotEq))
        i -= 1
    while i > 0 and isinstance(site[i - 1], (ast.BoolOp, ast.UnaryOp)):
        if isinstance(site[i - 1], ast.UnaryOp):
            positive = not positive
        elif isinstance(site[i - 1].op, ast.And) and any(
                isinstance(v, ast.Call) and ctx.qualname(v.func) == GPU_PRESENT for v in site[i - 1].values):
            return False  # `is_available() and torch.version.cuda`: presence is asked; this picks NVIDIA
        i -= 1
    owner = site[i - 1]
    if not isinstance(owner, _TESTS) or owner.test is not site[i] or isinstance(owner, ast.Assert):
        return None
    if positive and _rocm_branch_follows(ctx, owner):
        return False  # `if torch.version.cuda: ... elif torch.version.hip: ...`: ROCm has its own branch
    branch = owner.body if positive else getattr(owner, "orelse", None)
    nodes = branch if isinstance(branch, list) else [branch] if branch is not None else []
    text = "\n".join(ctx.source_of(n) for n in nodes)
    if not text or _TOOLKIT.search(text):
        return False
    return bool(_GPU_USE.search(text))


_GPU_USE = lazy_compile(r"""\.cuda\(|torch\.cuda\.|["']cuda""")
_TOOLKIT = lazy_compile(r"nvcc|CUDA_HOME|cupti|nvrtc|ptx|cudnn|version\.cuda|nvidia", re.IGNORECASE)


PRESENCE = 'tested as "GPU present" (false on AMD GPUs)'
VERSION = "parsed as a version string (raises on ROCm)"
