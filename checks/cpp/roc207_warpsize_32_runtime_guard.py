from __future__ import annotations

import re

from rocmlint.lazy_re import lazy_compile
from rocmlint.model import Span
from rocmlint.rule import Example, Rule

# What a branch does when it refuses to go on: a return counts only with a failure value
# (`if (warpSize == 32) return kernels32();` dispatches, it does not refuse).
_FAILS = lazy_compile(r"\b(?:throw|abort|exit|assert|\w*CHECK\w*|\w*ASSERT\w*|std::terminate|"
                      r"fprintf|printf|error)\b"
                      r"|\breturn\s*(?:;|-\s*\d|[01]\s*;|false\b|nullptr\b|NULL\b|EXIT_FAILURE\b|\w*[Ee]rr\w*)")


class WarpSize32RuntimeGuard(Rule):
    """Host code refuses to run unless the warp size is 32.

    ## What it does
    Reports checks like `if (prop.warpSize != 32) throw ...`,
    `TORCH_CHECK(warp_size() == 32, ...)`, `assert(warpSize == 32)`, or the same against a
    named constant equal to 32 (`if (prop.warpSize != kWarpSize) abort();`). Compile-time
    checks (`static_assert`, `if constexpr`) are not run-time guards.

    ## Why is this bad?
    Every AMD CDNA GPU (MI100-MI300) reports a warp size of 64: the program aborts on them
    even where the kernels behind the check would work, or hides the kernels that need a
    wave64 path.

    ## Example
    ```cpp
    if (prop.warpSize != 32) throw std::runtime_error("unsupported GPU");
    ```
    Use instead: make the kernels wave-size generic (see ROC204/ROC205) and drop the check,
    or dispatch to a wave64 variant.

    ## Fix safety
    Display-only: what the program should do on wave64 is a design decision.

    ## References
    - https://github.com/ORNL/HeCBench/issues/180
    - https://github.com/ROCm/pytorch/pull/2360
    """

    code = "ROC207"
    name = "warpsize-32-runtime-guard"
    language = "cpp"
    message = "run-time check that the warp size is 32 fails on every AMD CDNA GPU (wave64)"
    # A warp-size name (spelled-out case variants, so the prefilter gets literal factors and
    # ``re`` a fast start); ``check`` reads the comparison around it.
    pattern = r"(?:[wW]arp_?[sS]ize|WARP_?SIZE)\w*"
    anchors = (r"arp_?[sS]ize", r"ARP_?SIZE")  # literal first: fast to find
    wave_size_rule = True
    reference_kernel = "wave_size_constexpr.hip"

    valid = (
        "int threads_per_wave(const hipDeviceProp_t& prop) {\n  return prop.warpSize == 32 ? 32 : 64;\n}\n",
        "void check_device(const hipDeviceProp_t& prop) {\n"
        "  if (!(prop.warpSize == 32 || prop.warpSize == 64)) throw std::runtime_error(\"unexpected wave size\");\n}\n",
        "void select_min(int k, int ws) {\n"
        "  if (k <= 32 && ws == 32) {\n    run_small(k);\n  } else if (k <= 64) {\n    run_medium(k);\n"
        "  } else {\n    throw std::invalid_argument(\"k too large\");\n  }\n}\n",
    )
    invalid = (
        Example(
            "#include <stdexcept>\n"
            "void require_warp32(int warp_size) {\n"
            "  if (warp_size != 32) throw std::runtime_error(\"needs 32-lane warps\");\n"
            "}\n"
        ),
    )

    def check(self, ctx) -> None:
        done = -1
        for hit in ctx.hits():
            name = _identifier(ctx.source, hit.start, hit.end)
            if name.start < done or not ctx.in_code(name.start):
                continue
            done = name.end
            other = _compared_with(ctx.source, name)
            if other is None or not self._is_32(ctx, other) or self._is_32(ctx, ctx.text(name)):
                continue  # not compared with 32, or both sides are constants
            node = ctx.node_at(name)
            comparison = ctx.ancestor(node, {"binary_expression"}) if node is not None else None
            if comparison is not None and self._guards(ctx, comparison):
                ctx.report(ctx.node_span(comparison))

    @staticmethod
    def _is_32(ctx, text: str) -> bool:
        """``32``, or a name defined as 32 (``#define``, ``constexpr``/``const``, enum) here or
        in a header the file includes."""
        if re.fullmatch(r"32[uUlL]*", text):
            return True
        if not re.fullmatch(r"[A-Za-z_]\w*", text):
            return False
        from rocmlint.cpp.lane_constants import constant_value

        value = constant_value(ctx, text)  # this file's, an included header's or the project's
        if value is not None:
            return re.fullmatch(r"\(?\s*32[uUlL]*\s*\)?", value) is not None
        constant = re.compile(rb"\b" + text.encode() + rb"\s*(?:=|\{)\s*32[uUlL]*\s*[;},]")
        return any(ctx.in_code(m.start()) for m in constant.finditer(ctx.source))

    @staticmethod
    def _guards(ctx, comparison) -> bool:
        """The comparison decides a failure at run time: the condition of a (non-constexpr)
        ``if`` whose branches fail, or an argument of a check or assert call."""
        node = comparison
        while node.parent is not None and node.parent.type in _CONDITION_WRAPPERS:
            node = node.parent
        parent = node.parent
        if parent is None or _DISPATCH_64.search(ctx.node_text(node)):
            return False  # `ws == 32 || ws == 64`: 64 lanes pass too
        if parent.type == "condition_clause":
            statement = parent.parent
            if statement is None or statement.type != "if_statement" or \
                    any(child.type == "constexpr" for child in statement.children):
                return False
            if _DISPATCH_64.search(ctx.node_text(statement)):
                return False  # `if (warpSize == 32) ... else if (warpSize == 64) ...`: a dispatch
            branches = [statement.child_by_field_name(f) for f in ("consequence", "alternative")]
            return any(b is not None and not _else_if(b) and _FAILS.search(ctx.node_text(b)) for b in branches)
        if parent.type == "argument_list" and parent.parent is not None and parent.parent.type == "call_expression":
            function = parent.parent.child_by_field_name("function")
            return function is not None and _FAILS.search(ctx.node_text(function)) is not None
        return False


_DISPATCH_64 = lazy_compile(r"(?i)warp_?size\w*\s*(?:\(\s*\))?\s*[!=]=\s*64\b|\b64\s*[!=]=\s*\w*warp_?size")
_CONDITION_WRAPPERS = frozenset({"parenthesized_expression", "binary_expression", "unary_expression"})
_AFTER = lazy_compile(rb"\s*(?:\(\s*\))?\s*[!=]=\s*([\w:]+)")
_BEFORE = lazy_compile(rb"(\w+)\s*[!=]=\s*[\w:.>-]*$")


def _else_if(branch) -> bool:
    """``else if (...)``: the next case of a dispatch, not the failure of this test."""
    inner = branch.named_children[0] if branch.type == "else_clause" and branch.named_children else branch
    return inner.type == "if_statement"


def _identifier(source: bytes, start: int, end: int) -> Span:
    """The whole identifier around a match (``kWarpSize`` for a match at ``WarpSize``)."""
    while start > 0 and (source[start - 1 : start].isalnum() or source[start - 1] == 0x5F):
        start -= 1
    return Span(start, end)


def _compared_with(source: bytes, name: Span) -> str | None:
    """The other operand of ``name == X`` / ``X != obj.name`` on the same line, as text."""
    after = _AFTER.match(source, name.end)
    if after and b"\n" not in after.group():
        return after.group(1).decode("utf-8", "replace").split("::")[-1]
    line_start = source.rfind(b"\n", 0, name.start) + 1
    before = _BEFORE.search(source, line_start, name.start)
    if before:
        return before.group(1).decode("utf-8", "replace").split("::")[-1]
    return None
