"""Which gfx targets to build for, and which AMD GPUs are present to run on."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass

from ..lazy_re import lazy_compile

DEFAULT_TARGETS = ("gfx90a", "gfx942", "gfx1030", "gfx1100", "gfx1151", "gfx1201")
PROBE_TIMEOUT_S = 30
_TARGET = lazy_compile(r"^gfx[0-9a-f]{3,4}(:[a-z0-9+-:]+)?$")
_AGENT_NAME = lazy_compile(r"^\s*Name:\s+(gfx[0-9a-f]+)\b", re.MULTILINE)
_AGENT_LINE = lazy_compile(r"\b(gfx[0-9a-f]+)\b")


@dataclass(frozen=True)
class GpuProbe:
    """AMD GPU agents found by rocminfo; ``reason`` says why there are none."""
    agents: tuple[str, ...]
    reason: str | None = None


def parse_arch_list(text: str) -> list[str]:
    return list(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))


def invalid_targets(targets: list[str]) -> list[str]:
    return [target for target in targets if not _TARGET.match(target)]


def _tool(name: str, rocm_roots: list[str]) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    for root in rocm_roots:
        candidate = os.path.join(root, "bin", name)
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def _run(tool: str) -> tuple[int, str] | None:
    try:
        done = subprocess.run([tool], capture_output=True, text=True, timeout=PROBE_TIMEOUT_S,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.returncode, done.stdout


def probe_gpus(rocm_roots: list[str]) -> GpuProbe:
    """GPU agents listed by rocminfo (a gfx ``Name:`` line per agent)."""
    tool = _tool("rocminfo", rocm_roots)
    if tool is None:
        return GpuProbe((), "no AMD GPU: rocminfo not found")
    result = _run(tool)
    if result is None:
        return GpuProbe((), f"no AMD GPU: {tool} did not run")
    agents = tuple(dict.fromkeys(name for name in _AGENT_NAME.findall(result[1]) if name != "gfx000"))
    if not agents:
        return GpuProbe((), "no AMD GPU: rocminfo reports no gfx agent")
    return GpuProbe(agents)


def enumerate_agent_targets(rocm_roots: list[str]) -> list[str]:
    """gfx targets of the local GPUs (rocm_agent_enumerator, else rocminfo), or []."""
    tool = _tool("rocm_agent_enumerator", rocm_roots)
    result = _run(tool) if tool else None
    if result and result[0] == 0:
        names = [name for name in _AGENT_LINE.findall(result[1]) if name != "gfx000"]
        if names:
            return list(dict.fromkeys(names))
    return list(probe_gpus(rocm_roots).agents)


def resolve_targets(cli_value: str | None, configured: tuple[str, ...],
                    rocm_roots: list[str]) -> tuple[list[str], str]:
    """Targets and where they came from: --offload-arch, config, local GPUs, defaults."""
    if cli_value:
        return parse_arch_list(cli_value), "--offload-arch"
    if configured:
        return list(configured), "config offload-arch"
    local = enumerate_agent_targets(rocm_roots)
    if local:
        return local, "local GPUs"
    return list(DEFAULT_TARGETS), "defaults"
