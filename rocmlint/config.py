"""``[tool.rocmlint]`` in pyproject.toml or rocmlint.toml, found upward from each file.

Configs cascade: the nearest one wins key by key over those above it, up to and
including the first that says ``root = true``.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
from dataclasses import asdict, dataclass, replace
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Callable


CONFIG_FILES = ("rocmlint.toml", "pyproject.toml")

DEFAULT_EXCLUDES = (
    ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", ".mypy_cache", ".ruff_cache",
    ".rocmlint_cache", "__pycache__", "node_modules", "build", "dist", "site-packages",
    ".eggs", "*.egg-info",
)
DEFAULT_ROCM_MACROS = (
    "__HIP_PLATFORM_AMD__", "__HIP_PLATFORM_HCC__", "__HIPCC__", "__HIP__", "USE_ROCM",
    "__HIP_DEVICE_COMPILE__", "__AMDGCN__",
)
# Undefined in the AMD build: nvcc's own, and HIP's NVIDIA platform (HIP-on-NVIDIA builds only).
DEFAULT_NVIDIA_MACROS = ("__CUDA_ARCH__", "__NVCC__", "USE_CUDA", "__NVCOMPILER",
                         "__HIP_PLATFORM_NVIDIA__", "__HIP_PLATFORM_NVCC__")
DEFAULT_GATE_NAMES = (
    "IS_ROCM", "is_rocm", "IS_HIP", "is_hip", "TEST_WITH_ROCM", "IS_HIP_EXTENSION",
)


class ConfigError(Exception):
    pass


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] = ("ROC",)
    ignore: tuple[str, ...] = ()
    # (pattern, codes) pairs; patterns are relative to ``config_dir``.
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] = ()
    gate: str = "auto"
    gate_macro: str = "__HIP_PLATFORM_AMD__"
    rocm_macros: tuple[str, ...] = ()
    nvidia_macros: tuple[str, ...] = ()
    rocm_gate_names: tuple[str, ...] = ()
    offload_arch: tuple[str, ...] = ()
    # The ROCm build's compile_commands.json (or its folder), relative to config_dir.
    compile_commands: str = ""
    hipify: "str | bool" = "auto"  # "auto": read from build files
    # ``extension = { inc = "cuda" }``: (suffix without the dot, language half) pairs, read
    # before the built-in extensions (ruff's ``extension``).
    extension: tuple[tuple[str, str], ...] = ()
    # Build options of the ROCm build (CMake -D / meson -D): name -> value, over what the
    # build files' branches let rocmlint infer.
    build_options: tuple[tuple[str, str], ...] = ()
    # Files or folders (absolute) to lint as a port even where the project's HIP build does not
    # compile them (``port`` in the config, relative to its folder; --port on the command line)
    port: tuple[str, ...] = ()
    config_dir: str = ""
    config_path: str = ""

    @property
    def all_rocm_macros(self) -> tuple[str, ...]:
        return DEFAULT_ROCM_MACROS + (self.gate_macro,) + self.rocm_macros

    @property
    def all_nvidia_macros(self) -> tuple[str, ...]:
        return DEFAULT_NVIDIA_MACROS + self.nvidia_macros

    @property
    def gate_names(self) -> tuple[str, ...]:
        return DEFAULT_GATE_NAMES + self.rocm_gate_names

    @cached_property
    def extensions(self) -> dict[str, str]:
        """The ``extension`` table as suffix -> language half."""
        return dict(self.extension)

    @cached_property
    def fingerprint(self) -> str:
        """Stable hash of what changes analysis results (for the cache); computed once."""
        data = asdict(self)
        data.pop("config_path")
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]

    def ignored_for(self, path: Path) -> tuple[str, ...]:
        """Codes ignored for ``path`` by per-file-ignores."""
        if not self.per_file_ignores:
            return ()
        rel = _relative(path, self.config_dir)
        codes: list[str] = []
        for pattern, pattern_codes in self.per_file_ignores:
            if _match(rel, pattern):
                codes.extend(pattern_codes)
        return tuple(codes)


def _relative(path: Path, base: str) -> str:
    try:
        return path.resolve().relative_to(Path(base).resolve()).as_posix() if base else path.as_posix()
    except ValueError:
        return path.as_posix()


def _match(rel: str, pattern: str) -> bool:
    return _excludes((pattern,)).match_file(rel) if pattern else False


# Schema: key -> (kind, validator-description)
_LIST_KEYS = {"select", "extend-select", "ignore", "exclude", "extend-exclude", "rocm-macros", "nvidia-macros",
              "rocm-gate-names", "offload-arch", "port"}
_STR_KEYS = {"gate", "gate-macro", "compile-commands"}
_KNOWN = _LIST_KEYS | _STR_KEYS | {"per-file-ignores", "root", "hipify", "extension", "build-options"}


def _validate(table: dict, origin: str, is_known_prefix: "Callable[[str], bool] | None" = None) -> dict:
    """Check a config table; rule codes only where ``is_known_prefix`` (the rule registry's
    test, passed in by the command line: the registry sits above the configuration) is given."""
    unknown = sorted(set(table) - _KNOWN)
    if unknown:
        raise ConfigError(f"{origin}: unknown key(s) {', '.join(unknown)} in [tool.rocmlint] "
                          f"(known: {', '.join(sorted(_KNOWN))})")
    for key in _LIST_KEYS & set(table):
        value = table[key]
        if isinstance(value, str) and key == "offload-arch":
            value = table[key] = [v.strip() for v in value.split(",") if v.strip()]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{origin}: '{key}' must be a list of strings, got {value!r}")
    for key in _STR_KEYS & set(table):
        if not isinstance(table[key], str):
            raise ConfigError(f"{origin}: '{key}' must be a string, got {table[key]!r}")
    if "gate" in table and table["gate"] not in ("auto", "always", "never"):
        raise ConfigError(f"{origin}: 'gate' must be one of auto, always, never; got {table['gate']!r}")
    if "hipify" in table and table["hipify"] not in ("auto", True, False):
        raise ConfigError(f"{origin}: 'hipify' must be \"auto\", true or false; got {table['hipify']!r}")
    if "root" in table and not isinstance(table["root"], bool):
        raise ConfigError(f"{origin}: 'root' must be true or false")
    for key in ("select", "extend-select", "ignore"):
        for code in table.get(key, []):
            if is_known_prefix is not None and not is_known_prefix(code):
                raise ConfigError(f"{origin}: '{key}' names unknown rule or prefix {code!r}")
    if "extension" in table:
        table["extension"] = _extension_table(table["extension"], origin)
    options = table.get("build-options", {})
    if not isinstance(options, dict) or not all(isinstance(v, (str, bool, int)) for v in options.values()):
        raise ConfigError(f"{origin}: 'build-options' must map option names to strings, booleans or numbers")
    pfi = table.get("per-file-ignores", {})
    if not isinstance(pfi, dict) or not all(
        isinstance(v, list) and all(isinstance(c, str) for c in v) for v in pfi.values()
    ):
        raise ConfigError(f"{origin}: 'per-file-ignores' must map glob patterns to lists of codes")
    for codes in pfi.values():
        for code in codes:
            if is_known_prefix is not None and not is_known_prefix(code):
                raise ConfigError(f"{origin}: 'per-file-ignores' names unknown rule or prefix {code!r}")
    return table


# The languages ``extension = { inc = "cuda" }`` may name, and the half each is read by.
CONFIG_LANGUAGES = {"python": "python", "cpp": "cpp", "c++": "cpp", "c": "cpp", "cuda": "cpp", "hip": "cpp"}


def _extension_table(value, origin: str) -> tuple[tuple[str, str], ...]:
    """``{ inc = "cuda" }`` checked and normalised to (suffix, language half) pairs."""
    known = ", ".join(sorted(CONFIG_LANGUAGES))
    if not isinstance(value, dict):
        raise ConfigError(f"{origin}: 'extension' must map file extensions to languages ({known}), "
                          f"e.g. extension = {{ inc = \"cuda\" }}; got {value!r}")
    pairs = []
    for suffix, language in value.items():
        if not isinstance(language, str) or language.lower() not in CONFIG_LANGUAGES:
            raise ConfigError(f"{origin}: 'extension': {suffix!r} maps to {language!r}; known languages: {known}")
        suffix = suffix.strip().lstrip(".").lower()
        if not suffix or "/" in suffix or os.sep in suffix:
            raise ConfigError(f"{origin}: 'extension': {suffix!r} is not a file extension")
        pairs.append((suffix, CONFIG_LANGUAGES[language.lower()]))
    return tuple(sorted(pairs))


def read_config_file(path: Path, is_known_prefix: "Callable[[str], bool] | None" = None) -> dict | None:
    """The [tool.rocmlint] table of a file (the whole file for rocmlint.toml), or None."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    if path.name == "pyproject.toml":
        table = data.get("tool", {}).get("rocmlint")
        if table is None:
            return None
    else:
        table = data.get("tool", {}).get("rocmlint", data)
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.rocmlint] must be a table")
    return _validate(dict(table), str(path), is_known_prefix)


def _apply(base: Settings, table: dict, directory: Path, path: Path) -> Settings:
    changes: dict = {}
    simple = {"select": "select", "ignore": "ignore", "rocm-macros": "rocm_macros",
              "nvidia-macros": "nvidia_macros", "rocm-gate-names": "rocm_gate_names",
              "offload-arch": "offload_arch", "gate": "gate", "gate-macro": "gate_macro",
              "compile-commands": "compile_commands", "hipify": "hipify", "extension": "extension"}
    for key, attr in simple.items():
        if key in table:
            value = table[key]
            changes[attr] = tuple(value) if isinstance(value, list) else value
    if "extend-select" in table:  # added to the selection this table or the ones above make
        changes["select"] = changes.get("select", base.select) + tuple(table["extend-select"])
    if "exclude" in table or "extend-exclude" in table:
        changes["exclude"] = base.exclude + tuple(table.get("exclude", [])) + tuple(table.get("extend-exclude", []))
    if "build-options" in table:
        changes["build_options"] = tuple(sorted(
            (k, ("ON" if v else "OFF") if isinstance(v, bool) else str(v)) for k, v in table["build-options"].items()))
    if "per-file-ignores" in table:
        changes["per_file_ignores"] = tuple((k, tuple(v)) for k, v in table["per-file-ignores"].items())
    if "port" in table:
        changes["port"] = tuple(os.path.normpath(os.path.join(str(directory), p)) for p in table["port"])
    changes["config_dir"] = str(directory)
    changes["config_path"] = str(path)
    return replace(base, **changes)


class ConfigResolver:
    """Settings for any directory, cached; or one fixed config file for everything."""

    def __init__(self, explicit: Path | None = None, overrides: dict | None = None,
                 extend_select: tuple[str, ...] = (), is_known_prefix: "Callable[[str], bool] | None" = None) -> None:
        self._is_known_prefix = is_known_prefix  # the registry's test of rule codes (None: not checked)
        self._cache: dict[str, Settings] = {}
        self._raw: dict[str, Settings] = {}
        self._overrides = overrides or {}
        self._extend_select = extend_select  # added to whatever each config selects
        self._explicit: Settings | None = None
        if explicit is not None:
            if not explicit.is_file():
                raise ConfigError(f"config file {explicit} does not exist")
            table = read_config_file(explicit, is_known_prefix)
            if table is None:
                raise ConfigError(f"{explicit}: has no [tool.rocmlint] table")
            self._explicit = self._finish(_apply(Settings(), table, explicit.parent.resolve(), explicit))

    def _finish(self, settings: Settings) -> Settings:
        if self._overrides:
            settings = replace(settings, **{k: v for k, v in self._overrides.items() if k != "port"})
        if self._overrides.get("port"):  # --port adds to the configured paths
            settings = replace(settings, port=settings.port + tuple(self._overrides["port"]))
        if self._extend_select:
            settings = replace(settings, select=settings.select + self._extend_select)
        return settings

    def for_path(self, path: Path | str) -> Settings:
        if self._explicit is not None:
            return self._explicit
        directory = os.path.realpath(path)
        if not os.path.isdir(directory):
            directory = os.path.dirname(directory)
        return self.for_directory(directory)

    def for_directory(self, directory: str) -> Settings:
        """Settings for a resolved folder path (no further resolving: the walk's hot path)."""
        if self._explicit is not None:
            return self._explicit
        cached = self._cache.get(directory)
        if cached is None:
            cached = self._cache[directory] = self._finish(self._cascade(directory))
        return cached

    def _cascade(self, directory: str) -> Settings:
        """This folder's table applied over its parent's settings, up to root = true."""
        cached = self._raw.get(directory)
        if cached is not None:
            return cached
        found = self._table_in(Path(directory))
        parent = os.path.dirname(directory)
        if found is not None and found[0].get("root"):
            base = Settings()
        elif parent != directory:
            base = self._cascade(parent)
        else:
            base = Settings()
        settings = _apply(base, *found) if found is not None else base
        self._raw[directory] = settings
        return settings

    def _table_in(self, directory: Path) -> tuple[dict, Path, Path] | None:
        for name in CONFIG_FILES:
            candidate = directory / name
            if candidate.is_file():
                table = read_config_file(candidate, self._is_known_prefix)
                if table is not None:
                    return table, directory, candidate
        return None


def resolver_for(config: Path | None, select: "list[str] | None", ignore: "list[str] | None",
                 extend_select: "list[str] | tuple[str, ...]" = (),
                 is_known_prefix: "Callable[[str], bool] | None" = None,
                 port: "list[str] | tuple[str, ...]" = ()) -> ConfigResolver:
    """The settings of every file, from the configuration files (or one ``config`` file) with a
    command line's or an editor's ``select``/``ignore`` over them (None: as configured);
    ``extend_select`` adds to the selection; ``port`` (paths, relative to the working folder)
    to the configured ``port`` paths."""
    overrides: dict = {}
    if port:
        overrides["port"] = tuple(os.path.abspath(p) for p in port)
    if select is not None:
        overrides["select"] = tuple(select) + tuple(extend_select)
    if ignore is not None:
        overrides["ignore"] = tuple(ignore)
    extend = tuple(extend_select) if select is None else ()  # else joined to select above
    return ConfigResolver(config, overrides, extend, is_known_prefix)


_DEFAULT_EXCLUDED_DIRS = frozenset(p for p in DEFAULT_EXCLUDES if "*" not in p)


def is_excluded(path: str, is_dir: bool, settings: Settings, top: str) -> bool:
    """Default and configured excludes, matched gitignore-style; ``path`` is resolved."""
    if is_dir:
        name = os.path.basename(path)
        if name in _DEFAULT_EXCLUDED_DIRS or name.endswith(".egg-info"):
            return True
    if not settings.exclude:
        return False
    base = settings.config_dir or top
    if path.startswith(base + os.sep):
        rel = path[len(base) + 1 :]
    elif path.startswith(top + os.sep):
        rel = path[len(top) + 1 :]
    else:
        rel = os.path.basename(path)
    return _excludes(settings.exclude).match_file(rel + "/" if is_dir else rel)


@lru_cache(maxsize=64)
def _excludes(patterns: tuple[str, ...]):
    from pathspec import GitIgnoreSpec

    return GitIgnoreSpec.from_lines(list(patterns))
