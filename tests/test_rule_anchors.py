"""``Rule.anchors`` is a speed-up only: a rule's matches through its anchors are exactly
``pattern.finditer``'s, on every fixture, every rule example and the awkward layouts below."""
from __future__ import annotations

from pathlib import Path

import pytest

from rocmlint.registry import all_rules

ROOT = Path(__file__).resolve().parent.parent
ANCHORED = sorted((rule for rule in all_rules().values() if rule.anchors), key=lambda r: r.code)

# Whitespace runs across lines, matches at the buffer's edges, anchors without a match,
# neighbouring matches whose windows merge, CRLF, comments after a #define.
AWKWARD = [
    b"int lane = tid %\n\n   32;\n",
    b"x = (\n\n  32\n\n ,y);\n",
    b"const int W =\n\n\n32\n\n;",
    b"32",
    b"% 32",
    b"#define WARP 32",
    b"#define WARP (32) // lanes\r\n#define OTHER 32 /* x */\n",
    b"a %32; b /32; c &31; d >>5; e ==31; f +=32; g <=31; h <32; min(w, 32); f(32, 1);",
    b"v << (\n  lane);\nmask = 1u <<\n\n laneid;\n__popc\n(\n m);\n",
    b"if (warpSize\n== 32) {} WARP_SIZE_32 kWarpSize warp_size",
    b"x32 32x 3.32 .31 132 320 >>> >> 5 >>\n\n5",
    # a second anchor at the end of a window's last line still reaches into the next line
    b"call(x, 31, y, 32\n);\nf(a, 31, 32\n\n)\n",
    b"\n\n\n",
    b"",
]


def _corpus() -> list[bytes]:
    texts = list(AWKWARD)
    for path in sorted((ROOT / "fixtures").rglob("*")):
        if path.is_file():
            texts.append(path.read_bytes())
    for rule in all_rules().values():
        valid, invalid = rule.examples()
        texts.extend(example.code.encode() for example in valid + invalid)
    return texts


@pytest.mark.parametrize("rule", ANCHORED, ids=lambda r: r.code)
def test_anchored_matches_are_the_patterns_matches(rule):
    corpus = _corpus()
    pattern = rule.compiled_pattern()
    found_any = False
    for text in corpus:
        expected = [m.span() for m in pattern.finditer(text)]
        assert [m.span() for m in rule.matches(text)] == expected, text[:200]
        found_any = found_any or bool(expected)
    assert found_any  # the corpus exercises the rule


def test_some_rules_are_anchored():
    assert {"ROC202", "ROC203", "ROC204", "ROC207", "ROC208", "ROC301"} <= {rule.code for rule in ANCHORED}
