"""ROC209: each use of the deprecated wave-size macros, with advice by who reads it; and
rocmlint's own fixes never write them."""
from __future__ import annotations

import re

import pytest

from rocmlint.config import ConfigResolver, Settings
from rocmlint.engine import active_rules, analyse_buffer
from rocmlint.languages import language_for
from rocmlint.registry import all_rules
from rocmlint.runner import fix_buffer
from rocmlint.source import read_source

from fixture_harness import fixture_files

MACROS = re.compile(rb"__AMDGCN_WAVEFRONT_SIZE")


def roc209(code: str) -> list:
    return [f for f in analyse_buffer("k.cu", code.encode(), "cpp", Settings(select=("ROC209",)),
                                      (all_rules()["ROC209"](),))]


def test_advice_follows_the_side_that_reads_the_value():
    code = ("#define WAVE __AMDGCN_WAVEFRONT_SIZE\n"
            "__device__ int lane(int t) { return t % __AMDGCN_WAVEFRONT_SIZE; }\n"
            "int launch_width() { return __AMDGCN_WAVEFRONT_SIZE__ * 4; }\n"
            "__host__ __device__ int both() { return __AMDGCN_WAVEFRONT_SIZE; }\n"
            "// __AMDGCN_WAVEFRONT_SIZE in a comment\n"
            "const char* s = \"__AMDGCN_WAVEFRONT_SIZE\";\n")
    by_line = {f.line: f.message for f in roc209(code)}
    assert sorted(by_line) == [1, 2, 3, 4]
    assert "__GFX9__" in by_line[1] and "hipDeviceAttributeWarpSize" in by_line[1]  # a macro: either
    assert "__GFX9__" in by_line[2] and "hipDeviceAttributeWarpSize" not in by_line[2]
    assert "`__AMDGCN_WAVEFRONT_SIZE__`" in by_line[3] and "hipDeviceAttributeWarpSize" in by_line[3]
    assert "__GFX9__" not in by_line[3] and "RDNA" in by_line[3]
    assert "hipDeviceAttributeWarpSize" in by_line[4]  # the host pass compiles it too


def test_nvidia_only_uses_are_not_reported():
    assert roc209("#ifndef __HIP_PLATFORM_AMD__\nint w = __AMDGCN_WAVEFRONT_SIZE;\n#endif\n") == []


def _inputs():
    for rule in all_rules().values():
        if rule.language != "cpp":
            continue
        _valid, invalid = rule.examples()
        for i, example in enumerate(invalid):
            yield pytest.param(example.filename or "example.cu", example.code.encode(), id=f"{rule.code}-{i}")
    for path in fixture_files():
        if language_for(path) == "cpp":
            yield pytest.param(str(path), read_source(path, "cpp").buffer, id=path.name)


@pytest.mark.parametrize("display, buffer", list(_inputs()))
def test_no_fix_introduces_the_deprecated_macros(display, buffer):
    settings = ConfigResolver().for_path(display) if "/" in display else Settings()
    rules = active_rules(settings, "cpp")
    outcome = fix_buffer(buffer, "\n", display, "cpp", settings, rules, unsafe=True)
    assert len(MACROS.findall(outcome.buffer)) <= len(MACROS.findall(buffer))
