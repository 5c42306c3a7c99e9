"""Rule premises checked against today's PyTorch: ROC108 is opt-in (everywhere a selection is
made: registry, configuration, command line, SARIF, flake8), ROC106 reports gates only,
ROC107 reports FP8 that reaches compute, ROC104 accepts max-autotune without CUDA graphs."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rocmlint.config import ConfigResolver, Settings
from rocmlint.engine import active_rules, analyse_buffer
from rocmlint.registry import all_rules, select_rules

TF32 = "import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n"


def codes(code: str, select: tuple[str, ...] = ("ROC",), path: str = "mod.py") -> list[tuple[str, int, str]]:
    settings = Settings(select=select)
    found = analyse_buffer(path, textwrap.dedent(code).encode(), "python", settings,
                           active_rules(settings, "python", Path(path)))
    return [(f.code, f.line, f.message) for f in found]


def rocmlint(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rocmlint", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


# ROC108 opt-in ---------------------------------------------------------------------------
@pytest.mark.parametrize("select, enabled", [
    (["ROC"], False), (["ALL"], False), (["ROC1"], False), (["ROC10"], False),
    (["ROC108"], True), (["ROC", "ROC108"], True),
])
def test_an_opt_in_rule_runs_only_where_its_code_is_selected(select, enabled):
    assert ("ROC108" in {r.code for r in select_rules(select, [])}) is enabled
    assert "ROC101" in {r.code for r in select_rules(["ROC"], [])}  # the others stay on by prefix


def test_extend_select_in_a_config_file_and_on_the_command_line(tmp_path):
    (tmp_path / "mod.py").write_text(TF32)
    assert json.loads(rocmlint("check", "--no-cache", "--output-format", "json", ".", cwd=tmp_path).stdout) == []
    cli = json.loads(rocmlint("check", "--no-cache", "--output-format", "json", "--extend-select", "ROC108", ".",
                              cwd=tmp_path).stdout)
    assert [f["code"] for f in cli] == ["ROC108"]
    (tmp_path / "pyproject.toml").write_text('[tool.rocmlint]\nextend-select = ["ROC108"]\n')
    configured = json.loads(rocmlint("check", "--no-cache", "--output-format", "json", ".", cwd=tmp_path).stdout)
    assert [f["code"] for f in configured] == ["ROC108"]
    assert "ROC108" in ConfigResolver().for_path(tmp_path / "mod.py").select
    (tmp_path / "pyproject.toml").write_text('[tool.rocmlint]\nextend-select = ["ROC999"]\n')
    bad = rocmlint("check", "--no-cache", ".", cwd=tmp_path)
    assert bad.returncode == 2 and "unknown rule or prefix 'ROC999'" in bad.stderr


def test_rules_listing_docs_and_sarif_say_it_is_opt_in(tmp_path):
    listing = rocmlint("rules", cwd=tmp_path).stdout
    assert "(opt-in: --extend-select ROC108)" in next(l for l in listing.splitlines() if l.startswith("ROC108"))
    assert "opt-in" not in next(l for l in listing.splitlines() if l.startswith("ROC101"))
    rows = {r["code"]: r for r in json.loads(rocmlint("rules", "--output-format", "json", cwd=tmp_path).stdout)}
    assert rows["ROC108"]["default"] is False and rows["ROC101"]["default"] is True
    assert "Opt-in" in rocmlint("rule", "ROC108", cwd=tmp_path).stdout
    (tmp_path / "mod.py").write_text(TF32)
    sarif = json.loads(rocmlint("check", "--no-cache", "--exit-zero", "--output-format", "sarif", "--extend-select",
                                "ROC108", ".", cwd=tmp_path).stdout)
    rules = {r["id"]: r for r in sarif["runs"][0]["tool"]["driver"]["rules"]}
    assert rules["ROC108"]["defaultConfiguration"]["enabled"] is False
    assert "enabled" not in rules["ROC101"]["defaultConfiguration"]
    assert [r["ruleId"] for r in sarif["runs"][0]["results"]] == ["ROC108"]


def test_flake8_enables_it_only_by_its_code(tmp_path):
    (tmp_path / "mod.py").write_text(TF32)

    def flake8(select: str) -> str:
        return subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--select", select, "mod.py"],
                              cwd=tmp_path, capture_output=True, text=True, timeout=120).stdout

    assert "ROC108" not in flake8("ROC")
    assert "ROC108" in flake8("ROC,ROC108")


# ROC106 gates only -----------------------------------------------------------------------
def test_capability_in_a_key_an_index_or_a_log_is_not_a_gate():
    assert codes('''
        import torch
        CONFIGS = {}
        key = ("gemm", torch.cuda.get_device_capability())
        if key in CONFIGS:
            pass
        tile = TILES[torch.cuda.get_device_capability()]
        print("capability", torch.cuda.get_device_capability())
        cap = torch.cuda.get_device_capability()
        if cap in self._compiled:
            pass
    ''', ("ROC106",)) == []


def test_a_gate_against_an_unknown_value_is_reported_only_where_it_turns_on_an_nvidia_feature():
    found = codes("import torch\nif torch.cuda.get_device_capability() >= kernel.min_capability:\n"
                  "    out = flash_attn_3(q, k, v)\n", ("ROC106",))
    assert [(c, line) for c, line, _ in found] == [("ROC106", 2)]
    assert "against `kernel.min_capability`, which rocmlint cannot evaluate" in found[0][2]
    assert "(it turns on `flash_attn_3`)" in found[0][2]
    # a question, not a finding: the value is unknown and what it switches is no NVIDIA-only feature
    assert codes("import torch\nok = torch.cuda.get_device_capability() >= kernel.min_capability\n", ("ROC106",)) == []
    feature = codes("import torch\nok = torch.cuda.get_device_capability() >= (9, 0)\n", ("ROC106",))
    assert "tests an NVIDIA architecture (SM 9.0+)" in feature[0][2]


# ROC107 compute, not storage -------------------------------------------------------------
@pytest.mark.parametrize("body, reported", [
    ("w8 = w.to(torch.float8_e4m3fn)\n    return F.linear(x, w8.to(x.dtype))", False),  # cast up first
    ("cache = torch.empty(n, dtype=torch.float8_e4m3fn)\n    cache[0] = x\n    return cache[:1].float()", False),
    ("return x.to(torch.float8_e4m3fn)", True),  # handed to the caller: out of sight
    ("return torch._scaled_mm(x.to(torch.float8_e4m3fn), w, out_dtype=torch.bfloat16)", True),
    ("return quantize_kernel(x, torch.float8_e4m3fn)", True),
    ("scale = x.abs().amax() / torch.finfo(torch.float8_e4m3fn).max\n    return scale", True),
    ("w.scale = x.abs().amax() / torch.finfo(torch.float8_e4m3fn).max", False),  # kept beside the weights
])
def test_fp8_is_reported_where_it_reaches_compute(body, reported):
    code = f"import torch\nimport torch.nn.functional as F\n\n\ndef f(x, w, n):\n    {body}\n"
    assert bool(codes(code, ("ROC107",))) is reported


# ROC104 ---------------------------------------------------------------------------------
def test_max_autotune_is_accepted_where_the_same_options_turn_cuda_graphs_off():
    assert codes('import torch\nwith torch._inductor.config.patch({"max_autotune": True, '
                 '"triton.cudagraphs": False}):\n    run()\n', ("ROC104",)) == []
    assert [c for c, *_ in codes('import torch\nwith torch._inductor.config.patch({"max_autotune": True}):\n'
                                 '    run()\n', ("ROC104",))] == ["ROC104"]
    # The graphs switch itself is still reported when it is turned on beside it.
    both = codes('import torch\nm = torch.compile(m, options={"max_autotune": True, "triton.cudagraphs": True})\n',
                 ("ROC104",))
    assert len(both) == 2


def test_every_opt_in_rule_says_so_in_its_docs():
    for code, rule in all_rules().items():
        if not rule.default_enabled:
            assert "opt-in" in rule.doc().lower(), code
