"""Discovery by what a file is: a file a checked C-family file #includes is C-family
whatever its name; the configuration's ``extension`` table; a named file rocmlint will not
read is said to be unread, never passed over with "All checks passed!"."""
from __future__ import annotations

import json

import pytest

from rocmlint.config import ConfigError, ConfigResolver
from rocmlint.discovery import discover

from test_cli import run_cli

REDUCE = ("__device__ inline float warp_sum(float x) {\n"
          "  for (int m = 1; m < 64; m <<= 1) x += __shfl_xor_sync(0xffffffff, x, m);\n"
          "  return x;\n}\n")
KERNEL = ('#include "reduce_helpers.inc"\n'
          "__global__ void norm(float* y, const float* x) { y[threadIdx.x] = warp_sum(x[threadIdx.x]); }\n")


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.rocmlint]\nroot = true\n")
    src = tmp_path / "src"
    (src / "detail").mkdir(parents=True)
    (src / "kernels.cu").write_text(KERNEL + '#include "detail/shuffle_impl"\n')
    (src / "reduce_helpers.inc").write_text(REDUCE + '#include "more_helpers.inc"\n')
    (src / "more_helpers.inc").write_text(REDUCE.replace("warp_sum", "warp_sum2"))
    (src / "detail" / "shuffle_impl").write_text(REDUCE.replace("warp_sum", "warp_sum3"))
    # included by nobody: not C-family, never read
    (src / "notes.inc").write_text("__shfl_xor_sync(0xffffffff, x, 1)\n")
    (src / "detail" / "unrelated").write_text("__shfl_xor_sync(0xffffffff, x, 1)\n")
    return tmp_path


def reported(out: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for item in json.loads(out):
        counts[item["path"]] = counts.get(item["path"], 0) + 1
    return counts


def test_included_files_are_checked_whatever_their_name(tree, capsys):
    code, out, err = run_cli(["--no-cache", "--select", "ROC203", "--output-format", "json", "src"], tree, capsys)
    assert code == 1, err
    assert reported(out) == {"src/reduce_helpers.inc": 1, "src/more_helpers.inc": 1,  # transitively
                             "src/detail/shuffle_impl": 1}
    assert "warning" not in err


def test_cached_run_remembers_what_a_file_includes(tree, capsys):
    args = ["--select", "ROC203", "--output-format", "json", "src"]
    first = run_cli(args, tree, capsys)
    assert (tree / ".rocmlint_cache").is_dir()
    second = run_cli(args, tree, capsys)  # every result from the cache: includes come from it too
    assert reported(second[1]) == reported(first[1]) and len(reported(first[1])) == 3
    (tree / "src" / "kernels.cu").write_text(KERNEL)  # no longer includes detail/shuffle_impl
    third = run_cli(args, tree, capsys)
    assert "src/detail/shuffle_impl" not in reported(third[1])
    assert "src/more_helpers.inc" in reported(third[1])


def test_a_named_file_that_is_not_read_gets_a_warning(tree, capsys):
    code, out, err = run_cli(["--no-cache", "src/notes.inc"], tree, capsys)
    assert code == 0
    assert "All checks passed" not in out and "No file checked." in out
    lines = [line for line in err.splitlines() if line]
    assert len(lines) == 1
    assert "src/notes.inc: not checked" in lines[0] and 'extension = { inc = "cuda" }' in lines[0]


def test_a_named_file_included_by_another_named_file_is_read(tree, capsys):
    code, out, err = run_cli(["--no-cache", "--output-format", "json", "--select", "ROC203",
                              "src/kernels.cu", "src/reduce_helpers.inc", "src/notes.inc"], tree, capsys)
    assert code == 1
    # named files are the scope: what they include beyond it is not read
    assert set(reported(out)) == {"src/reduce_helpers.inc"}
    assert "src/notes.inc: not checked" in err and "reduce_helpers.inc" not in err


def test_extension_table_reads_files_by_suffix(tree, capsys):
    (tree / "pyproject.toml").write_text('[tool.rocmlint]\nroot = true\nextension = { ".INC" = "cuda" }\n')
    code, out, err = run_cli(["--no-cache", "--output-format", "json", "--select", "ROC203", "src/notes.inc"],
                             tree, capsys)
    assert code == 1 and reported(out) == {"src/notes.inc": 1} and err == ""


def test_extension_table_errors_are_clear(tree, capsys):
    (tree / "pyproject.toml").write_text('[tool.rocmlint]\nroot = true\nextension = { inc = "fortran" }\n')
    code, _out, err = run_cli(["--no-cache", "src"], tree, capsys)
    assert code == 2 and "'extension'" in err and "fortran" in err and "Traceback" not in err
    with pytest.raises(ConfigError, match="must map file extensions"):
        (tree / "pyproject.toml").write_text('[tool.rocmlint]\nextension = ["inc"]\n')
        ConfigResolver().for_path(tree / "src")


def test_python_only_selection_keeps_nothing_aside(tree):
    found = discover([str(tree / "src")], ConfigResolver(None, {"select": ("ROC1",)}))
    assert list(found) == [] and found.unclaimed == {}
