"""ROC107 by use (issue 39): each storage-only snippet is quiet, and its twin that computes
with the FP8 tensor is reported. One snippet a test: a file reports one inline use for its
repeats, so two cases in one file would hide each other."""
from __future__ import annotations

import textwrap

import pytest

from rocmlint.config import Settings
from rocmlint.engine import active_rules, analyse_buffer


def _roc107_lines(source: str, path: str = "m.py") -> list[int]:
    settings = Settings()
    findings = analyse_buffer(path, textwrap.dedent(source).encode(), "python", settings,
                              active_rules(settings, "python"))
    return [f.line for f in findings if f.code == "ROC107"]


_KERNEL_CALLER = '''
    import torch

    try:
        import {package}._fused as fused
    except ImportError:
        fused = None


    def quantize_v(v, scale):
        v8 = torch.empty(v.shape, dtype=torch.float8_e4m3fn, device=v.device)
        fused.scale_fuse_quant_cuda(v, v8, scale)
        return scale
    '''

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
    "copied into a cache the object keeps (not the caller's buffer)": ('''
        import torch


        class Fp8Cache:
            def store(self, slot, k):
                q = (k / self.scale).to(torch.float8_e4m3fn).view(-1)
                self.keys[slot].copy_(q)
        ''', '''
        import torch


        def per_token_quant(x, out, scale):
            q = (x / x.abs().amax()).to(torch.float8_e4m3fn).view(-1)
            out.copy_(q)
            scale.fill_(1.0)
        '''),
    "saved for backward, read back by index and cast up there": ("""
        import torch


        class GateStash(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, stash):
                kept = x.to(torch.float8_e4m3fn) if stash else x
                ctx.save_for_backward(kept)
                ctx.input_dtype = x.dtype
                ctx.stash = stash
                return torch.nn.functional.silu(x)

            @staticmethod
            def backward(ctx, grad):
                x = ctx.saved_tensors[0]
                x = x.to(ctx.input_dtype) if ctx.stash else x
                return grad * torch.sigmoid(x), None
        """, """
        import torch


        class GateStash(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, stash):
                kept = x.to(torch.float8_e4m3fn) if stash else x
                ctx.save_for_backward(kept)
                return torch.nn.functional.silu(x)

            @staticmethod
            def backward(ctx, grad):
                x = ctx.saved_tensors[0]
                return torch._scaled_mm(grad, x, out_dtype=torch.bfloat16), None
        """),
    # The same quantiser: its kernel module comes from an NVIDIA-only package, or from another one.
    "handed only to an NVIDIA-only package's kernels": (_KERNEL_CALLER.format(package="deep_gemm"),
                                                        _KERNEL_CALLER.format(package="my_attention")),
}


@pytest.mark.parametrize("case", sorted(STORAGE_AND_COMPUTE))
def test_storage_is_quiet_and_compute_is_reported(case):
    storage, compute = STORAGE_AND_COMPUTE[case]
    assert _roc107_lines(storage) == []
    assert len(_roc107_lines(compute)) == 1


QUANTISE = """
import torch


def quantize(w):
    return (w / w.abs().amax() * 448).to(torch.float8_e4m3fn)
"""


@pytest.mark.parametrize("path,reported", [
    ("tools/convert_hf_to_fp8.py", False), ("scripts/convert/quant/quant.py", False),
    ("scripts/conversion_utils.py", False), ("tools/fp8_quant_blockwise.py", False),
    (".dev_scripts/hf_to_fp8.py", False),
    ("tasks/mi355x_moe_2stage/driver.py", False), ("kernels/gfx950/gemm.py", False), ("kernels/gfx942/gemm.py", True),
    ("mylib/quant.py", True), ("mylib/convert.py", True), ("tasks/mi300x_moe/driver.py", True),
])
def test_a_path_that_says_converter_or_ocp_gpu(path, reported):
    assert bool(_roc107_lines(QUANTISE, path)) is reported


CPU_TEST = '''
import torch

from mylib.quant import quantize_groups


def test_quantiser_matches_reference():
    x = torch.randn(4, 256, device="{device}")
    q, scale = quantize_groups(x, fp8_dtype=torch.float8_e4m3fn)
    assert torch.equal(q, reference(x))
'''


@pytest.mark.parametrize("device,reported", [("cpu", False), ("cuda", True)])
def test_a_test_on_cpu_tensors_names_no_gpu(device, reported):
    """`device="cpu"` says the test runs on the CPU; the word "device" in it names no GPU."""
    assert bool(_roc107_lines(CPU_TEST.format(device=device), "tests/test_quant.py")) is reported


META_WEIGHTS = '''\
import torch


def converted_shapes(converter):
    # the converter is checked on {where} weights
    weight = torch.empty(256, 256, dtype=torch.float8_e4m3fn, device="{device}")
    scale = torch.empty(2, 2, dtype=torch.float32, device="{device}")
    return converter.convert(weight, scale)
'''


@pytest.mark.parametrize("device,reported", [("meta", False), ("cuda", True)])
def test_meta_tensors_hold_no_data_to_compute_with(device, reported):
    """A meta tensor has a shape and a dtype only; a library function given a GPU one may compute."""
    text = META_WEIGHTS.format(device=device, where="meta-device" if device == "meta" else "GPU")
    assert bool(_roc107_lines(text, "mylib/convert.py")) is reported
