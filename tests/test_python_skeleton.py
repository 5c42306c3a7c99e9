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
