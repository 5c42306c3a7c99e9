"""ROC211's limits in the summary (issue 41 item 3): "No findings" is a claim, so an array sized
from 32 with a lane index whose range rocmlint could not bound is named under it; arrays it
judged, and arrays not sized from 32, are not."""
from __future__ import annotations

from pathlib import Path

import pytest

from test_project_fixtures import run_cli

KERNEL = """#include <hip/hip_runtime.h>
__global__ void gather(const float* in, float* out, int stride) {{
  __shared__ float partial[{extent}];
  int lane = threadIdx.x % warpSize;
  partial[{index}] = in[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = partial[0];
}}
"""


def summary(tmp_path: Path, capsys, monkeypatch, extent: str, index: str, *flags: str) -> tuple[int, str]:
    (tmp_path / "gather.hip").write_text(KERNEL.format(extent=extent, index=index))
    return run_cli(["check", "--no-cache", *flags, "gather.hip"], tmp_path, capsys, monkeypatch)


def test_an_unbounded_lane_index_into_32_slots_is_named_under_no_findings(tmp_path, capsys, monkeypatch):
    code, out = summary(tmp_path, capsys, monkeypatch, "32", "lane * stride")
    assert code == 0
    assert out.splitlines() == [
        "No findings.",
        "1 array sized from 32 with lane index ranges rocmlint could not bound (ROC211 did not judge it): "
        "gather.hip:3 `partial`.",
    ]


@pytest.mark.parametrize("extent, index", [
    ("32", "lane"),                # bounded: below 32 at 32 lanes, reported (a finding) at 64
    ("32", "stride"),              # unbounded, but not a lane: the wave size does not move it
    ("256", "lane * stride"),      # not sized from 32
    ("64", "threadIdx.x % 64"),    # bounded at both sizes
])
def test_judged_or_unrelated_arrays_add_no_line(tmp_path, capsys, monkeypatch, extent, index):
    _code, out = summary(tmp_path, capsys, monkeypatch, extent, index)
    assert "could not bound" not in out


def test_the_line_survives_the_cache(tmp_path, capsys, monkeypatch):
    (tmp_path / "gather.hip").write_text(KERNEL.format(extent="2 * 32", index="lane + stride"))
    first = run_cli(["check", "gather.hip"], tmp_path, capsys, monkeypatch)[1]
    second = run_cli(["check", "gather.hip"], tmp_path, capsys, monkeypatch)[1]
    assert "could not bound" in first and first == second
