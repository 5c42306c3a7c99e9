"""Requirements as packaging parses them, and what a ROCm machine makes of their markers."""
from __future__ import annotations

from typing import Any

from packaging.markers import InvalidMarker, Marker, UndefinedComparison, UndefinedEnvironmentName
from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

# pip options that name where packages come from (an index or a links page).
PIP_INDEX_OPTIONS = frozenset({"-i", "--index-url", "--extra-index-url", "-f", "--find-links"})
# ROCm machines: Linux on x86-64. Markers are evaluated for every Python still in use.
_ROCM_ENVIRONMENTS = [
    {"sys_platform": "linux", "platform_system": "Linux", "os_name": "posix", "platform_machine": "x86_64",
     "implementation_name": "cpython", "platform_python_implementation": "CPython",
     "python_version": f"3.{minor}", "python_full_version": f"3.{minor}.0", "extra": ""}
    for minor in range(9, 15)
]


def parse_requirement(text: str) -> Requirement | None:
    try:
        return Requirement(text)
    except InvalidRequirement:
        return None


def marker_reaches_rocm(marker: "Marker | str | None") -> bool:
    """False when the marker excludes every ROCm machine (Windows, macOS, a CUDA extra)."""
    if marker is None:
        return True
    try:
        parsed = Marker(marker) if isinstance(marker, str) else marker
        return any(parsed.evaluate(env) for env in _ROCM_ENVIRONMENTS)
    except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName, ValueError, TypeError):
        return True  # unknown stays unknown


def poetry_requirement(name: str, spec: Any) -> tuple[Requirement | None, bool]:
    """A Poetry dependency (``"2.1.0"``, ``"^2.1"``, ``{version=..., optional=true, markers=...}``)
    as a PEP 508 requirement, and whether it is optional. Only forms PEP 440 can say are
    kept as versions (a bare version is an exact pin in Poetry); others keep the name."""
    optional = False
    extras: list[str] = []
    marker = None
    url = None
    version = spec if isinstance(spec, str) else None
    if isinstance(spec, dict):
        version = spec.get("version") if isinstance(spec.get("version"), str) else None
        optional = bool(spec.get("optional"))
        extras = [e for e in spec.get("extras", []) if isinstance(e, str)] if isinstance(spec.get("extras"), list) else []
        marker = spec.get("markers") if isinstance(spec.get("markers"), str) else None
        url = spec.get("url") if isinstance(spec.get("url"), str) else None
    text = name + (f"[{','.join(extras)}]" if extras else "")
    if url:
        text += f" @ {url}"
    elif version:
        version = version.strip()
        if _is_version(version):
            text += f"=={version}"
        elif version[:2] in ("==", ">=", "<=", "!=", "~=") or version[:1] in "<>":
            text += version
    if marker:
        text += f" ; {marker}"
    return parse_requirement(text) or parse_requirement(name), optional


def _is_version(text: str) -> bool:
    try:
        Version(text)
    except InvalidVersion:
        return False
    return True
