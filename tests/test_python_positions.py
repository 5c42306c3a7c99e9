"""Every Python rule's trigger in every syntactic position Python has (issue 8, defect 2).

The Python context is asked for spans of whatever node a rule walks through; nodes without
their own position (`arguments`, `comprehension`, `withitem`, `match_case`, operators) must
get the span of what they contain. Each case must analyse without an internal error, and
every finding must sit on the line of the trigger, name the rule, and point inside the file;
where the rule fires, its fix (if any) must leave a file that parses.
"""
from __future__ import annotations

import ast
import itertools

import pytest

from rocmlint.config import Settings
from rocmlint.engine import analyse_buffer
from rocmlint.python.context import has_position
from rocmlint.python import LANGUAGE
from rocmlint.registry import all_rules
from rocmlint.runner import fix_buffer

# An expression that triggers each rule where it is evaluated (the marker `@T@` is replaced).
EXPRESSIONS = {
    "ROC101": 'torch.compile(model, mode="reduce-overhead")',
    "ROC102": 'os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:128")',
    "ROC104": "torch._inductor.config.patch(triton_cudagraphs=True)",
    "ROC105": 'torch.version.cuda.split(".")',
    "ROC106": "torch.cuda.get_device_capability() >= (9, 0)",
    "ROC107": "torch.float8_e4m3fn",
    "ROC109": 'CUDAExtension("k", ["k.cu"], extra_compile_args={"nvcc": ["-Xptxas=-v"]})',
}
# Statements for the rules whose trigger is a statement (and the expression rules as `y = T`).
STATEMENTS = {
    "ROC103": "import pynvml",
    "ROC104": "torch._inductor.config.triton.cudagraphs = True",
    "ROC108": "torch.backends.cuda.matmul.allow_tf32 = True",
    **{code: f"y = {expr}" for code, expr in EXPRESSIONS.items()},
}
EXPRESSION_POSITIONS = {
    "default": "def f(x, d=@T@):\n    return d\n",
    "kw-default": "def f(*, d=@T@):\n    return d\n",
    "lambda-default": "g = lambda x, d=@T@: d\n",
    "lambda-body": "g = lambda: @T@\n",
    "list-comprehension": "L = [@T@ for _ in range(3)]\n",
    "comprehension-iter": "L = [v for v in [@T@]]\n",
    "comprehension-if": "L = [v for v in range(3) if @T@]\n",
    "generator": "G = list(@T@ for _ in range(3))\n",
    "dict-comprehension": "D = {k: @T@ for k in range(3)}\n",
    "set-comprehension": "S = {@T@ for _ in range(3)}\n",
    "with-item": "with ctx(@T@) as c:\n    pass\n",
    "async-with-item": "async def f():\n    async with ctx(@T@):\n        pass\n",
    "match-subject": "match @T@:\n    case _:\n        pass\n",
    "match-guard": "match x:\n    case 1 if @T@:\n        pass\n",
    "decorator": "@wrap(@T@)\ndef f():\n    pass\n",
    "class-decorator": "@wrap(@T@)\nclass C:\n    pass\n",
    "arg-annotation": "def f(x: @T@):\n    pass\n",
    "return-annotation": "def f() -> @T@:\n    pass\n",
    "annotated-assign": "y: @T@ = 1\n",
    "f-string": "msg = f'{@T@}'\n",
    "f-string-spec": "msg = f'{x:{@T@}}'\n",
    "class-keyword": "class C(Base, meta=@T@):\n    pass\n",
    "class-base": "class C(wrap(@T@)):\n    pass\n",
    "walrus": "if (y := @T@):\n    pass\n",
    "assert": "assert @T@, 'message'\n",
    "return": "def f():\n    return @T@\n",
    "yield": "def f():\n    yield @T@\n",
    "await": "async def f():\n    await wrap(@T@)\n",
    "starred": "call(*[@T@])\n",
    "subscript": "table[@T@]\n",
    "slice": "seq[@T@:]\n",
    "keyword": "call(value=@T@)\n",
    "dict-value": 'D = {"k": @T@}\n',
    "conditional": "y = @T@ if flag else None\n",
    "boolean": "y = flag and @T@\n",
    "while-test": "while @T@:\n    break\n",
    "except-type": "try:\n    pass\nexcept wrap(@T@):\n    pass\n",
    "raise": "raise Error(@T@)\n",
    "delete-target": "del table[@T@]\n",
    "global-scope": "def f():\n    global y\n    y = @T@\n",
    "nonlocal-scope": "def f():\n    y = 0\n    def g():\n        nonlocal y\n        y = @T@\n",
}
STATEMENT_POSITIONS = {
    "module": "@S@\n",
    "function-body": "def f():\n    @S@\n",
    "async-body": "async def f():\n    @S@\n",
    "class-body": "class C:\n    @S@\n",
    "if-body": "if flag:\n    @S@\n",
    "else-body": "if flag:\n    pass\nelse:\n    @S@\n",
    "for-body": "for _ in range(3):\n    @S@\n",
    "while-body": "while flag:\n    @S@\n",
    "with-body": "with ctx():\n    @S@\n",
    "try-body": "try:\n    @S@\nexcept ImportError:\n    pass\n",
    "except-body": "try:\n    pass\nexcept ImportError:\n    @S@\n",
    "finally-body": "try:\n    pass\nfinally:\n    @S@\n",
    "match-case-body": "match x:\n    case [1, *rest]:\n        @S@\n",
    "match-class-pattern-body": "match x:\n    case Point(x=0):\n        @S@\n",
    "decorated-function-body": "@wrap\ndef f():\n    @S@\n",
}
# Value patterns: the dtype itself as a `case` pattern.
PATTERN_CASES = {
    "ROC107": "match dtype:\n    case torch.float8_e4m3fn:\n        pass\n",
}
HEADER = "import os\nimport torch\nfrom torch.utils.cpp_extension import CUDAExtension\n"
RULES = all_rules()


def _cases():
    for (code, expr), (where, template) in itertools.product(EXPRESSIONS.items(), EXPRESSION_POSITIONS.items()):
        yield pytest.param(code, template.replace("@T@", expr), id=f"{code}-{where}")
    for (code, stmt), (where, template) in itertools.product(STATEMENTS.items(), STATEMENT_POSITIONS.items()):
        yield pytest.param(code, template.replace("@S@", stmt), id=f"{code}-stmt-{where}")
    for code, body in PATTERN_CASES.items():
        yield pytest.param(code, body, id=f"{code}-case-pattern")


@pytest.mark.parametrize("code,body", list(_cases()))
def test_trigger_in_every_position(code, body):
    source = HEADER + body
    ast.parse(source)  # the case itself is valid Python
    buffer = source.encode()
    trigger_line = HEADER.count("\n") + 1 + next(i for i, line in enumerate(body.splitlines())
                                                 if _trigger_word(code) in line)
    settings = Settings(select=(code,))
    rules = (RULES[code](),)
    findings = analyse_buffer("case.py", buffer, "python", settings, rules)  # raises on an internal error
    for finding in findings:
        assert finding.code == code
        assert 0 <= finding.span.start <= finding.span.end <= len(buffer)
        assert finding.line == trigger_line, (finding.line, finding.message)
    if any(f.fix is not None for f in findings):
        outcome = fix_buffer(buffer, "\n", "case.py", "python", settings, rules, unsafe=True)
        ast.parse(outcome.buffer.decode())


def _trigger_word(code: str) -> str:
    return {"ROC101": "reduce-overhead", "ROC102": "max_split_size_mb", "ROC103": "pynvml",
            "ROC104": "cudagraphs", "ROC105": "version.cuda", "ROC106": "get_device_capability",
            "ROC107": "float8_e4m3fn", "ROC108": "allow_tf32", "ROC109": "-Xptxas"}[code]


@pytest.mark.parametrize("where", ["default", "lambda-default", "list-comprehension", "with-item",
                                   "match-subject", "match-guard"])
def test_fp8_choice_in_positionless_parents_is_reported(where):
    """The crash positions of issue 8: the dtype chosen there is a finding, not a skipped file."""
    source = HEADER + EXPRESSION_POSITIONS[where].replace("@T@", "torch.float8_e4m3fn")
    findings = analyse_buffer("case.py", source.encode(), "python", Settings(select=("ROC107",)),
                              (RULES["ROC107"](),))
    if where in ("default", "lambda-default"):
        assert [f.code for f in findings] == ["ROC107"]
    else:
        assert len(findings) <= 1  # one inline use stands for the file


def test_spans_of_positionless_nodes_are_the_extent_of_their_children():
    source = b"def f(a, b=1, *, c=2):\n    return [x for x in a if x]\n"
    ctx = LANGUAGE.make_context("case.py", source, Settings())
    function = ctx.tree.body[0]
    arguments = function.args
    comprehension = function.body[0].value.generators[0]
    assert not has_position(arguments) and not has_position(comprehension)
    assert ctx.source_of(arguments) == "a, b=1, *, c=2"
    assert ctx.source_of(comprehension) == "x in a if x"
    empty = ast.parse("lambda: 0").body[0].value.args
    assert ctx.node_span(empty).start == ctx.node_span(empty).end  # nothing inside: an empty span
