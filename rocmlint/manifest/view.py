"""The NVIDIA view of a manifest: what `pip install .[cuda]` installs, plus the rest of the
file. Moving a requirement from the dependencies into the `cuda` extra leaves it unchanged."""
from __future__ import annotations

import json
import os
import sys

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def nvidia_view(source: bytes, path: str) -> bytes:
    if os.path.basename(path) != "pyproject.toml":
        return source
    try:
        data = tomllib.loads(source.decode("utf-8", errors="surrogateescape"))
    except (tomllib.TOMLDecodeError, ValueError):
        return b"<unparsable>\n" + source
    project = data.get("project")
    if isinstance(project, dict):
        extras = project.get("optional-dependencies")
        cuda = extras.pop("cuda", []) if isinstance(extras, dict) else []
        if isinstance(extras, dict) and not extras:
            project.pop("optional-dependencies")
        required = project.get("dependencies", [])
        if isinstance(required, list) and isinstance(cuda, list):
            project["dependencies"] = sorted(map(str, required + cuda))
    return json.dumps(data, sort_keys=True, default=str).encode()
