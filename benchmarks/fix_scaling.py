"""Fix mode must scale like check mode: time both on one generated file with many hazards.

    python benchmarks/fix_scaling.py [--hazards 8000] [--kind cu|hip]

Generates a ~1 MB CUDA file of small kernels, each with wave-size hazards (lane
arithmetic on 32, a 32-bit ballot mask), then times ``analyse_buffer`` (check) against
``fix_buffer`` with unsafe fixes (fix) in this process, and prints both and their ratio.
Shared files get gated fixes: the blocks of hazards on adjacent lines merge in the round
that makes them, so fixing costs two analyses plus the NVIDIA-view proof.
"""
from __future__ import annotations

import argparse
import time

from rocmlint.config import Settings
from rocmlint.engine import active_rules, analyse_buffer
from rocmlint.runner import fix_buffer

KERNEL = """
__global__ void lanes_{i}(const float* in, float* out, int n) {{
  int gid = blockIdx.x * blockDim.x + threadIdx.x;
  float v = gid < n ? in[gid] : 0.f;
  int lane = threadIdx.x % 32;
  int warp = threadIdx.x / 32;
  v = v * 0.5f + static_cast<float>(lane) + static_cast<float>(warp) * {i}.0f;
  if (gid < n) out[gid] = v;
}}
"""


def generate(hazards: int, kind: str) -> tuple[str, bytes]:
    head = "#include <hip/hip_runtime.h>\n" if kind == "hip" else "#include <cstdio>\n"
    body = "".join(KERNEL.format(i=i) for i in range(hazards // 2))
    return f"scaling.{kind}", (head + body).encode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hazards", type=int, default=8000)
    parser.add_argument("--kind", choices=("cu", "hip"), default="cu")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    path, buffer = generate(args.hazards, args.kind)
    settings = Settings()
    rules = active_rules(settings, "cpp")
    check = fix = float("inf")
    for _ in range(args.repeat):  # best of N in CPU time: the machine is shared
        start = time.process_time()
        findings = analyse_buffer(path, buffer, "cpp", settings, rules)
        check = min(check, time.process_time() - start)
        start = time.process_time()
        outcome = fix_buffer(buffer, "\n", path, "cpp", settings, rules, unsafe=True)
        fix = min(fix, time.process_time() - start)
    print(f"{path}: {len(buffer) / 1e6:.2f} MB, {len(findings)} findings, {outcome.fixed} fixed, "
          f"{len(outcome.findings)} left")
    print(f"check {check:.2f} s   fix {fix:.2f} s   fix/check {fix / check:.1f}x  (CPU time, best of {args.repeat})")

if __name__ == "__main__":
    main()
