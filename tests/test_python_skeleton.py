"""Skeleton parsing: large files are parsed around their anchors with positions intact."""
from __future__ import annotations

import ast

from rocmlint.config import Settings
from rocmlint.engine import active_rules, analyse_buffer
from rocmlint.python.skeleton import skeleton

FILLER = "".join(
    f"def helper_{i}(x):\n    '''Pads the module.\n\nfree text at column 0\n'''\n    return x + {i}\n\n\n"
    for i in range(400)
)
HAZARD = (
    "class Runner:\n"
    "    def unrelated(self):\n"
    "        return 1\n\n"
    "    def compile(self, model):\n"
    "        return torch.compile(model, mode=\"reduce-overhead\")\n"
)


def _module() -> bytes:
    return ("import torch\n\nMODE = 'default'\n\n" + FILLER + HAZARD + FILLER).encode()


def test_skeleton_keeps_positions_and_drops_unrelated_blocks():
    source = _module()
    anchor = source.index(b"reduce-overhead")
    reduced = skeleton(source, [anchor], min_size=1000)
    assert reduced is not None and len(reduced) < len(source) / 3
    assert reduced.count(b"\n") == source.count(b"\n")
    tree = ast.parse(reduced)
    # The kept call sits at the same line and column in both.
    full_calls = [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Call)
                  and getattr(n.func, "attr", "") == "compile"]
    kept_calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "compile"]
    assert [(c.lineno, c.col_offset) for c in kept_calls] == [(c.lineno, c.col_offset) for c in full_calls]
    assert b"def unrelated" not in reduced  # sibling method without an anchor dropped
    assert b"MODE = 'default'" in reduced  # module-level code kept


def test_small_files_are_not_reduced():
    assert skeleton(b"import torch\n", [0]) is None


def test_findings_identical_with_and_without_skeleton(monkeypatch):
    import rocmlint.python.skeleton as skeleton_module

    source = _module()
    settings = Settings()
    rules = active_rules(settings, "python")

    def run():
        return [(f.code, f.span, f.message, f.fix) for f in analyse_buffer("big.py", source, "python", settings, rules)]

    reduced = run()
    monkeypatch.setattr(skeleton_module, "skeleton", lambda *a, **k: None)
    full = run()
    assert reduced == full and [code for code, *_ in full] == ["ROC101"]
    assert source[full[0][1].start:full[0][1].end] == b'"reduce-overhead"'


def test_a_large_file_is_judged_as_a_small_one_when_it_chooses_fnuz_elsewhere():
    """ROC107 stays quiet in a file that chooses float8_e4m3fnuz somewhere: the skeleton of a
    large file keeps that block too (the FNUZ name is one of the rule's anchors)."""
    chooser = "def fnuz_dtype():\n    return torch.float8_e4m3fnuz\n\n\n"
    user = "def cast(t):\n    dt = torch.float8_e4m3fn\n    return t.to(dt)\n"
    settings = Settings(select=("ROC107",))
    rules = active_rules(settings, "python")

    def codes(text: str) -> list[str]:
        source = ("import torch\n\n" + text).encode()
        assert len(source) > 48_000  # parsed as a skeleton
        return [f.code for f in analyse_buffer("big.py", source, "python", settings, rules)]

    assert codes(FILLER + user + FILLER) == ["ROC107"]
    assert codes(chooser + FILLER + user + FILLER) == []


def test_a_large_file_keeps_its_own_gate_helper_far_from_the_anchor():
    """A file-local gate helper defined in a block without an anchor still gates the hazard:
    the skeleton keeps blocks holding a gate word."""
    helper = "def _on_amd():\n    return torch.version.hip is not None\n\n\n"
    user = "def cuda_major():\n    if not _on_amd():\n        return torch.version.cuda.split('.')[0]\n"
    settings = Settings(select=("ROC105",))
    rules = active_rules(settings, "python")
    source = ("import torch\n\n" + helper + FILLER + user + FILLER).encode()
    assert len(source) > 48_000
    anchor = source.index(b"torch.version.cuda.split")
    reduced = skeleton(source, [anchor])
    assert reduced is not None and b"def _on_amd" in reduced and b"def helper_1(" not in reduced
    assert [f.code for f in analyse_buffer("big.py", source, "python", settings, rules)] == []


def _table_module() -> bytes:
    """A module-level table of 600 entries in the OpInfo style; two choose fp8 dtypes."""
    entries = []
    for i in range(600):
        dtypes = "(torch.float8_e4m3fn,)" if i in (150, 420) else "(torch.float32, torch.float16)"
        entries.append(f"    OpSpec('op_{i}',\n           dtypes={dtypes},\n           # entry {i}, with a comma,\n"
                       f"           skips=(Skip('flaky', active_if=TEST_WITH_ROCM),)),\n"
                       f"    # after entry {i}\n")
    return ("import torch\n\nTEST_WITH_ROCM = torch.version.hip is not None\n\n"
            "op_table: list[OpSpec] = [\n" + "".join(entries) + "]\n\n"
            "CONST = 1\n").encode()


def test_a_big_data_table_keeps_only_its_entries_with_anchors():
    source = _table_module()
    anchors = [m for m in range(len(source)) if source.startswith(b"float8_e4m3fn", m)]
    reduced = skeleton(source, anchors)
    assert reduced is not None and len(reduced) < len(source) / 20
    assert reduced.count(b"\n") == source.count(b"\n")
    tree = ast.parse(reduced)
    table = next(n for n in tree.body if isinstance(n, ast.AnnAssign))
    assert isinstance(table.value, ast.List)
    # The two entries with an anchor, at their own lines, and the first and last (never dropped).
    assert [e.args[0].value for e in table.value.elts] == ["op_0", "op_150", "op_420", "op_599"]
    full = next(n for n in ast.parse(source).body if isinstance(n, ast.AnnAssign))
    assert [e.lineno for e in table.value.elts] == [full.value.elts[i].lineno for i in (0, 150, 420, 599)]
    assert b"CONST = 1" in reduced and b"TEST_WITH_ROCM = torch.version.hip" in reduced


def test_a_big_data_table_gives_the_same_findings_as_the_whole_file(monkeypatch):
    import rocmlint.python.skeleton as skeleton_module

    source = _table_module()
    settings = Settings(select=("ROC107",))
    rules = active_rules(settings, "python")

    def run():
        return [(f.code, f.span, f.message) for f in analyse_buffer("ops.py", source, "python", settings, rules)]

    reduced = run()
    monkeypatch.setattr(skeleton_module, "skeleton", lambda *a, **k: None)
    assert reduced == run()


def test_table_entries_are_kept_when_they_do_not_end_in_a_comma():
    """`x` then `+ y,` at the entry indent are one expression: dropping `x` alone would
    parse, as a different table. Entries inside a triple-quoted string are not cut either."""
    rows = "".join(f"    'row {i}'\n    + 'tail',\n" for i in range(1500))
    doc = '"""\nop_like = [\n' + "    'a',\n" * 3000 + ']\n"""\n'
    source = ("import torch\n\n" + doc + "TABLE = [\n" + rows + "]\n").encode()
    assert len(source) > 48_000
    assert skeleton(source, [0]) is None


def test_callers_readers_and_called_helpers_are_kept():
    """What decides about an anchor outside its block stays in the skeleton: the callers of
    an anchored function, the readers of an anchored module-level name, and the short
    helpers a kept decorator calls (one level)."""
    source = (
        "import torch\n\n\n"
        "def has_fp8_hw():\n    return is_sm_100() and torch.cuda.device_count() > 0\n\n\n"
        "def has_fp8_hw_extra():\n    return False\n\n\n"
        "def _quantize(x):\n    return x.to(torch.float8_e4m3fn)\n\n\n"
        "def run(x):\n    if not on_amd():\n        return _quantize(x)\n    return x\n\n\n"
        "CONFIGS = [torch.float8_e4m3fn]\n\n\n"
        "def test_configs():\n    for c in CONFIGS:\n        assert c\n\n\n"
        "class T:\n    @skipif(not has_fp8_hw(), reason='SM100')\n    def test_a(self):\n"
        "        return torch.float8_e4m3fn\n\n\n"
        + FILLER
    ).encode()
    anchors = [m for m in range(len(source)) if source.startswith(b"float8_e4m3fn", m)]
    reduced = skeleton(source, anchors)
    assert reduced is not None and b"def helper_1(" not in reduced
    for kept in (b"def run(x):", b"def test_configs():", b"def has_fp8_hw():", b"def _quantize"):
        assert kept in reduced, kept
    assert b"def has_fp8_hw_extra" not in reduced  # a prefix of a kept name is no use of it


def _python_sources() -> list:
    import pytest

    from fixture_harness import fixture_files
    from rocmlint.registry import all_rules

    sources = [pytest.param(path.read_bytes(), id=path.name) for path in fixture_files() if path.suffix == ".py"]
    for code, rule in sorted(all_rules().items()):
        if rule.language == "python":
            valid, invalid = rule.examples()
            sources += [pytest.param(e.code.encode(), id=f"{code}-{n}") for n, e in enumerate(valid + invalid)]
    return sources


import pytest  # noqa: E402


@pytest.mark.parametrize("source", _python_sources())
def test_every_file_as_a_skeleton_gives_the_whole_files_findings(source, monkeypatch):
    """The skeleton forced on every fixture and rule example (min_size 0): the rules see
    nothing the whole file would have shown them otherwise, fixes included."""
    import rocmlint.python.skeleton as skeleton_module

    settings = Settings()
    rules = active_rules(settings, "python")

    def run():
        return [(f.code, f.span, f.message, f.fix) for f in analyse_buffer("m.py", source, "python", settings, rules)]

    whole = run()
    real = skeleton_module.skeleton
    monkeypatch.setattr(skeleton_module, "skeleton", lambda text, anchors, min_size=0: real(text, anchors, 0))
    assert run() == whole


def test_table_entries_that_continue_a_call_are_kept():
    """`foo(a,` / `b), baz(c,` / `d),` at the entry indent: the middle line ends in a comma and
    balances its brackets, yet dropping it would leave `foo(a, d)`, a valid parse of another
    table. Entries go only where they start at the table's own bracket depth."""
    rows = "".join(f"    foo({i},\n    b), baz(c,\n    d),\n" for i in range(2500))
    source = ("import torch\n\nTABLE = [\n" + rows + "    last,\n]\n").encode()
    assert len(source) > 48_000
    reduced = skeleton(source, [0])
    assert reduced is None or ast.dump(ast.parse(reduced).body[1].value.elts[0]) == ast.dump(
        ast.parse(source).body[1].value.elts[0])
    assert reduced is None or b"b), baz(c," in reduced


def test_a_commented_out_entry_does_not_hold_the_rest_of_the_table():
    entries = "".join(f"    Spec('op_{i}', sizes=(1, 2)),\n" for i in range(1200))
    stray = "    # Spec('broken',\n    #      sizes=(1, 2)),\"),\n"
    source = ("import torch\n\nTABLE = [\n" + stray + entries + "    Spec('fp8', torch.float8_e4m3fn),\n"
              + entries + "]\n").encode()
    anchors = [source.index(b"float8_e4m3fn")]
    reduced = skeleton(source, anchors)
    assert reduced is not None and len(reduced) < len(source) / 10
    kept = [e.args[0].value for e in ast.parse(reduced).body[1].value.elts]
    assert kept == ["op_0", "fp8", "op_1199"]


def test_the_whole_call_chain_of_an_anchored_function_is_kept(monkeypatch):
    """`enable_tf32` is called by `wrapper`, which runs under a CUDA gate and, ungated, from
    `other`: the call chain decides, so every block along it stays in the skeleton."""
    import rocmlint.python.skeleton as skeleton_module

    core = ("import torch\n\n\ndef enable_tf32():\n    torch.backends.cuda.matmul.allow_tf32 = True\n\n\n"
            "def wrapper():\n    enable_tf32()\n\n\nif torch.version.cuda is not None:\n    wrapper()\n\n\n"
            "def other():\n    wrapper()\n")
    source = (core + FILLER).encode()
    anchors = [source.index(b"allow_tf32")]
    reduced = skeleton(source, anchors)
    assert reduced is not None and b"def other():\n    wrapper()" in reduced and b"def helper_1(" not in reduced
    settings = Settings(select=("ROC108",))
    rules = active_rules(settings, "python")

    def codes() -> list[str]:
        return [f.code for f in analyse_buffer("big.py", source, "python", settings, rules)]

    assert codes() == ["ROC108"]
    monkeypatch.setattr(skeleton_module, "skeleton", lambda *a, **k: None)
    assert codes() == ["ROC108"]


def test_an_anchored_import_keeps_the_functions_that_use_the_names_it_binds():
    filler = "".join(f"def unrelated_{i}(x):\n    return x + {i}\n\n\n" for i in range(400))
    source = (b"import os\nfrom torch.utils.cpp_extension import (  # the JIT builders\n    load_inline as build,"
              b"  # renamed\n    CUDA_HOME,\n)\n"
              b"import numpy.linalg as la\n\n\n" + filler.encode() +
              b"def compile_it():\n    return build(name='k')\n\n\ndef home():\n    return CUDA_HOME\n\n\n"
              b"def solve(a):\n    return la.inv(a)\n")
    anchor = source.index(b"load_inline")
    kept = skeleton(source, [anchor])
    assert kept is not None and b"unrelated_3" not in kept
    assert b"return build(name='k')" in kept and b"return CUDA_HOME" in kept  # both names the import binds
    assert b"la.inv" not in kept  # another import's names: not anchored
    ast.parse(kept)
