"""conda environment files (PyYAML's composer keeps each value's position)."""
from __future__ import annotations

from ..lazy_re import lazy_compile
from ..model import ParseFailure
from .model import Dependency, Manifest, PackageIndex
from .requirement import parse_requirement
from .requirements_file import pip_line
from .text import Located

# A conda spec: `[channel::]name[ version[ build]]` or `name=version=build`.
_CONDA_SPEC = lazy_compile(r"^(?:(?P<channel>[\w.-]+)::)?(?P<name>[A-Za-z0-9_.-]+)\s*(?P<rest>.*)$")


def read(located: Located) -> Manifest:
    import yaml  # type: ignore[import-untyped]

    manifest = Manifest([], [])
    try:
        root = yaml.compose(located.text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        raise ParseFailure(f"invalid YAML: {exc}".splitlines()[0]) from None
    if not isinstance(root, yaml.MappingNode):
        return manifest
    for key, value in root.value:
        if key.value == "channels" and isinstance(value, yaml.SequenceNode):
            for item in value.value:
                if isinstance(item, yaml.ScalarNode):
                    manifest.indexes.append(PackageIndex(f"conda:{item.value}", _span(located, item), False,
                                                         "channels"))
        if key.value != "dependencies" or not isinstance(value, yaml.SequenceNode):
            continue
        for item in value.value:
            if isinstance(item, yaml.ScalarNode) and isinstance(item.value, str):
                m = _CONDA_SPEC.match(item.value.strip())
                requirement = parse_requirement(m.group("name")) if m else None
                if requirement is not None:
                    manifest.dependencies.append(Dependency(requirement, _span(located, item), False, "dependencies",
                                                            conda_spec=item.value.strip()))
            elif isinstance(item, yaml.MappingNode):
                for pip_key, pip_list in item.value:
                    if pip_key.value != "pip" or not isinstance(pip_list, yaml.SequenceNode):
                        continue
                    for pip_item in pip_list.value:
                        if isinstance(pip_item, yaml.ScalarNode):
                            _pip_line(located, manifest, pip_item)
    return manifest


def _span(located: Located, node):
    return located.span(*_span_chars(located, node))


def _span_chars(located: Located, node) -> tuple[int, int]:
    """Char offsets of a scalar's text (inside its quotes)."""
    start, end = node.start_mark.index, node.end_mark.index
    if located.text[start:start + 1] in "\"'":
        start, end = start + 1, end - 1
    return start, end


def _pip_line(located: Located, manifest: Manifest, node) -> None:
    """An item of a `pip:` list is a line of a requirement file (options, several requirements)."""
    start, end = _span_chars(located, node)
    text = located.text[start:end]
    stripped = text.strip()
    if stripped and not stripped.startswith("#"):
        pip_line(located, manifest, start + len(text) - len(text.lstrip()), stripped, "dependencies: pip")
