"""The prefilter: literal factors of rule patterns and GPU-code markers."""
from __future__ import annotations

import re

import pytest

from rocmlint.config import Settings
from rocmlint.engine import active_rules, analyse_buffer
from rocmlint.literals import required_literals
from rocmlint.registry import all_rules


@pytest.mark.parametrize("pattern,expected", [
    (r"max_split_size_mb", (b"max_split_size_mb",)),
    (r"nv(?:ml|idia_smi)", (b"nvidia_smi", b"nvml")),
    (r"\b__(?:popc|ffs)\s*\(", (b"__ffs", b"__popc")),
    (r"#[ \t]*include[ \t]*<cub/", (b"<cub/",)),  # a common word loses to a rarer factor
    (r"\b\w+\s*=\s*32\s*;", None),  # nothing of 3+ characters every match must hold
    (r"(?i:warp)", None),
])
def test_required_literals(pattern, expected):
    assert required_literals(pattern, re.MULTILINE) == expected


@pytest.mark.parametrize("rule", list(all_rules().values()), ids=list(all_rules()))
def test_literals_are_sound_for_every_example(rule):
    """Every invalid example contains one of its rule's literal factors (else it would be skipped)."""
    literals = rule.literals()
    for example in rule.examples()[1]:
        data = example.code.encode()
        if rule.compiled_pattern().search(data) and literals is not None:
            assert any(lit in data for lit in literals), (rule.code, literals)


def test_gpu_markers_gate_warp_size_arithmetic():
    settings = Settings(select=("ROC204",))
    rules = active_rules(settings, "cpp")
    host = b"inline int word_of(int bit) { return bit / 32; }\nint lanes(int tid) { return tid % 32; }\n"
    device = b"__device__ int lane_of() { return threadIdx.x % 32 + __popcll(__ballot(1)); }\n"
    assert analyse_buffer("host.h", host, "cpp", settings, rules) == []
    assert [f.code for f in analyse_buffer("k.cu", device, "cpp", settings, rules)] == ["ROC204"]


def test_one_prefilter_serves_every_copy_of_a_rule_set():
    """A worker receives each job's rules unpickled, as new instances: the automaton is built
    once per rule set, not once per job (CK's two workers built 330, 45 MB more each)."""
    import pickle

    from rocmlint.config import Settings
    from rocmlint.engine import _prefilter, active_rules

    rules = active_rules(Settings(), "cpp")
    copy = pickle.loads(pickle.dumps(rules))
    assert copy[0] is not rules[0]
    assert _prefilter(copy) is _prefilter(rules)
    assert _prefilter(copy[1:]) is not _prefilter(rules)
