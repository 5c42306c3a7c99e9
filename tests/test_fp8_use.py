"""ROC107 by use (issue 39): each storage-only snippet is quiet, and its twin that computes
with the FP8 tensor is reported. One snippet a test: a file reports one inline use for its
repeats, so two cases in one file would hide each other."""
from __future__ import annotations

import textwrap

import pytest

from rocmlint.config import Settings
from rocmlint.engine import active_rules, analyse_buffer


def _roc107_lines(source: str) -> list[int]:
    settings = Settings()
    findings = analyse_buffer("m.py", textwrap.dedent(source).encode(), "python", settings,
                              active_rules(settings, "python"))
    return [f.line for f in findings if f.code == "ROC107"]


STORAGE_AND_COMPUTE = {
    "a view kept by `.contiguous()` and never used": ('''
        import torch


        def fake_indexer(kv, n):
            keys = kv[..., :n].view(torch.float8_e4m3fn).contiguous()
            return torch.empty(n)
        ''', '''
        import torch


        def indexer(kv, n, w):
            keys = kv[..., :n].view(torch.float8_e4m3fn).contiguous()
            return torch._scaled_mm(keys, w)
        '''),
    "a weight-only quantiser's dtype": ('''
        import torch


        def configs(Float8WeightOnlyConfig):
            return [Float8WeightOnlyConfig(weight_dtype=torch.float8_e4m3fn)]
        ''', '''
        import torch


        def configs(Float8DynamicActivationConfig):
            return [Float8DynamicActivationConfig(weight_dtype=torch.float8_e4m3fn)]
        '''),
    "a local function's `storage_dtype` parameter": ('''
        import torch


        def footprint_test(make):
            def footprint(storage_dtype, compute_dtype):
                model = make().to(compute_dtype)
                model.enable_layerwise_casting(storage_dtype=storage_dtype, compute_dtype=compute_dtype)
                return model.footprint()

            return footprint(torch.float8_e4m3fn, torch.bfloat16)
        ''', '''
        import torch


        def matmul_test(make):
            def run(quant_dtype, out_dtype):
                a = make().to(quant_dtype)
                return torch._scaled_mm(a, a.t(), out_dtype=out_dtype)

            return run(torch.float8_e4m3fn, torch.bfloat16)
        '''),
    "a tensor saved for backward and cast up there": ('''
        import torch


        class Stash(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x.to(torch.float8_e4m3fn))
                ctx.dtype_in = x.dtype
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                (x,) = ctx.saved_tensors
                x = x.to(ctx.dtype_in)
                return grad * x
        ''', '''
        import torch


        class Stash(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, w):
                ctx.save_for_backward(x.to(torch.float8_e4m3fn), w)
                return x @ w

            @staticmethod
            def backward(ctx, grad):
                x, w = ctx.saved_tensors
                return torch._scaled_mm(x, w), None
        '''),
}


@pytest.mark.parametrize("case", sorted(STORAGE_AND_COMPUTE))
def test_storage_is_quiet_and_compute_is_reported(case):
    storage, compute = STORAGE_AND_COMPUTE[case]
    assert _roc107_lines(storage) == []
    assert len(_roc107_lines(compute)) == 1
