"""ROC109's table of nvcc flags: each verdict as hipcc and clang give it today, and the matcher."""
from __future__ import annotations

import shutil
from concurrent.futures import ThreadPoolExecutor

import pytest

from rocmlint import nvcc_flags
from rocmlint.manifest import cmake_flags



@pytest.mark.skipif(not (shutil.which("hipcc") and shutil.which("clang++-19")), reason="needs hipcc and clang++-19")
def test_table_matches_a_fresh_check():
    if not nvcc_flags.baseline_compiles():
        pytest.skip("hipcc or clang++-19 does not build the plain kernel here")
    with ThreadPoolExecutor(8) as pool:
        verdicts = list(pool.map(lambda form: nvcc_flags.probe(form.written), nvcc_flags.TABLE))
    wrong = [(" ".join(form.written), (form.hipcc, form.clang), got)
             for form, got in zip(nvcc_flags.TABLE, verdicts) if got != (form.hipcc, form.clang)]
    assert not wrong, wrong


def test_every_written_form_is_matched_by_its_own_entry():
    for form in nvcc_flags.TABLE:
        assert nvcc_flags.form_of(form.written[0]) is form, form.written


def test_find_skips_values_and_accepted_forms():
    words = ["-O3", "-diag-suppress", "177", "-Xcompiler", "-t", "-lineinfo", "-t", "4", "-arch=sm_80"]
    found = [(f.index, f.count, f.form.name) for f in nvcc_flags.find(words)]
    # `-t` after -Xcompiler is that flag's value; `-lineinfo` both compilers build with.
    assert found == [(1, 2, "-diag-suppress"), (6, 2, "-t"), (8, 1, "-arch")]


def test_cmake_branches():
    text = ("if(USE_ROCM)\n  a()\nelseif(WITH_CUDA)\n  b()\nelse()\n  c()\nendif()\n"
            "if(NOT USE_ROCM)\n  d()\nelse()\n  e()\nendif()\nif(CMAKE_CUDA_COMPILER AND NOT WIN32)\n  f()\nendif()\n"
            "if(MSVC)\n  g()\nendif()\n")
    taken = {c.name: c.taken for c in cmake_flags.commands(text) if len(c.name) == 1}
    assert taken == {"a": True, "b": False, "c": False, "d": False, "e": True, "f": False, "g": None}


def test_cmake_copy_before_append_does_not_reach():
    text = ('set(CMAKE_HIP_FLAGS "${CMAKE_CUDA_FLAGS}")\nstring(APPEND CMAKE_CUDA_FLAGS " --keep")\n'
            'set(EXTRA "-rdc=true")\nset(MORE ${EXTRA})\ntarget_compile_options(k PRIVATE $<$<COMPILE_LANGUAGE:HIP>:${MORE}>)\n')
    commands = cmake_flags.commands(text)
    uses = cmake_flags.flag_uses(commands)
    by_variable = {u.variable: u for u in uses}
    append = by_variable["CMAKE_CUDA_FLAGS"]
    assert cmake_flags.reaches_hip("CMAKE_CUDA_FLAGS", None, append.command.start, uses, False) is None
    extra = by_variable["EXTRA"]
    assert cmake_flags.reaches_hip("EXTRA", None, extra.command.start, uses, False) == \
        "in `EXTRA`, copied into a HIP generator expression"
