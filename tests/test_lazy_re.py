import copy
import re

from rocmlint.lazy_re import lazy_compile


def test_a_lazy_pattern_compiles_on_first_use_and_then_answers_as_a_compiled_one():
    pattern = lazy_compile(r"warp(\w+)", re.IGNORECASE)
    assert "search" not in vars(pattern)  # nothing compiled at definition
    assert pattern.search("a WARPSize b").group(1) == "Size"
    assert "search" in vars(pattern)  # later uses skip the first-use path
    assert pattern.sub("x", "warpA warpB") == "x x"
    assert [m.start() for m in pattern.finditer("warpA warpB")] == [0, 6]
    assert pattern.pattern == r"warp(\w+)" and pattern.flags & re.IGNORECASE


def test_a_lazy_bytes_pattern_and_copies():
    pattern = lazy_compile(rb"\b__popc\b")
    assert pattern.findall(b"__popc(x) + __popcll(y)") == [b"__popc"]
    assert copy.deepcopy(pattern).search(b"__popc(m)") is not None


def test_patterns_waiting_are_compiled_before_a_pool_forks():
    from rocmlint.lazy_re import compile_waiting

    pattern = lazy_compile(r"__shfl_down_sync\(0x[fF]{8}")
    assert "search" not in vars(pattern)
    compile_waiting()
    assert "search" in vars(pattern)  # the workers inherit it compiled
    assert pattern.search("__shfl_down_sync(0xffffffff, v, 16)") is not None
