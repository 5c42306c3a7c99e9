"""Reading and writing source files without losing a byte: encoding, BOM, newlines, mode."""
from __future__ import annotations

import codecs
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Callable

from .lazy_re import lazy_compile

_CODING = lazy_compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


class SourceError(Exception):
    """The file cannot be read or decoded (reported as ROC002)."""


@dataclass
class SourceFile:
    """A file as bytes on disk and as the UTF-8 buffer the analysis sees (BOM stripped).

    Non-UTF-8 bytes in C++ files survive through ``surrogateescape``; Python files are
    decoded with their PEP 263 coding cookie.
    """

    path: Path
    raw: bytes
    bom: bytes
    encoding: str
    buffer: bytes

    @property
    def newline(self) -> str:
        return "\r\n" if self.buffer.count(b"\r\n") * 2 > self.buffer.count(b"\n") else "\n"

    def encode(self, buffer: bytes) -> bytes:
        """Bytes for disk from an edited buffer: original encoding and BOM."""
        if self.encoding == "utf-8":
            return self.bom + buffer
        text = buffer.decode("utf-8", errors="surrogateescape")
        return self.bom + text.encode(self.encoding, errors="surrogateescape")


def read_source(path: Path, language: str) -> SourceFile:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise SourceError(f"cannot read file: {exc.strerror or exc}") from None
    return decode_source(path, raw, language)


def decode_source(path: Path, raw: bytes, language: str) -> SourceFile:
    bom, encoding = b"", "utf-8"
    for candidate, name in _BOMS:
        if raw.startswith(candidate):
            bom, encoding = candidate, name
            break
    body = raw[len(bom):]
    if language == "python" and not bom:
        encoding = _python_coding(body) or "utf-8"
    try:
        if encoding in ("utf-8", "utf8"):
            encoding = "utf-8"
            if language == "python":
                body.decode("utf-8")  # Python itself rejects invalid UTF-8
            buffer = body
        else:
            buffer = body.decode(encoding).encode("utf-8", errors="surrogateescape")
    except (UnicodeDecodeError, LookupError) as exc:
        raise SourceError(f"cannot decode as {encoding}: {exc}") from None
    return SourceFile(path=path, raw=raw, bom=bom, encoding=encoding, buffer=buffer)


def _python_coding(body: bytes) -> str | None:
    for line in body.split(b"\n", 2)[:2]:
        m = _CODING.match(line)
        if m:
            name = m.group(1).decode("ascii", "replace").lower()
            try:
                return codecs.lookup(name).name
            except LookupError:
                raise SourceError(f"unknown encoding {name!r} in coding declaration") from None
        if line.strip() and not line.lstrip().startswith(b"#"):
            break
    return None


def atomic_write(path: Path, data: bytes) -> None:
    """Write via a temporary file in the same folder and rename: never a partial file.
    Keeps the file's permission bits."""

    def write(fh) -> None:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())

    write_replacing(path, write, binary=True, mode=stat.S_IMODE(os.stat(path).st_mode),
                    prefix=f".{path.name}.", suffix=".rocmlint.tmp")


def write_replacing(path: str | Path, write: Callable[[IO[Any]], Any], binary: bool = False,
                    mode: int | None = None, prefix: str | None = None, suffix: str = ".tmp") -> None:
    """Replace ``path`` by what ``write`` puts into a temporary file beside it (``mode``: its
    permission bits): processes may write at once, and an error or Ctrl-C midway leaves
    neither a half-written file nor the temporary one (the error goes to the caller)."""
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=os.path.dirname(str(path)) or ".")
    try:
        with (os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8")) as fh:
            write(fh)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
