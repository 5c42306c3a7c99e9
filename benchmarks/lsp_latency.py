"""Re-lint latency of ``rocmlint server`` after one-character edits, measured by an LSP client.

Starts the server over stdio on a real tree, opens one ~1,000-line .cu file, and times each
``textDocument/didChange`` (insert a space at the start of a middle line, then delete it) to
the ``publishDiagnostics`` of that document version. The first lint (cold: it builds the
project model) and saves are timed too.

    python benchmarks/lsp_latency.py /work/scratch/anchor/ggml-org+ggml [--file src/ggml-cuda/rope.cu]

Nothing is written into the tree: the server's model cache goes to a temporary folder, and
``--copy`` edits a header of a temporary copy (the includer re-linted after the model is rebuilt).
Prints figures, asserts nothing.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

TARGET_LINES = 1000


def pick_file(tree: Path) -> Path:
    """The .cu file whose length is closest to 1,000 lines (ggml's CUDA folder first)."""
    folder = tree / "src" / "ggml-cuda"
    candidates = sorted((folder if folder.is_dir() else tree).rglob("*.cu"))
    if not candidates:
        raise SystemExit(f"no .cu file under {tree}")

    def distance(path: Path) -> int:
        with open(path, "rb") as fh:
            return abs(sum(1 for _ in fh) - TARGET_LINES)
    return min(candidates, key=distance)


class Bench:
    def __init__(self) -> None:
        self.client = LanguageClient("rocmlint-bench", "1")
        self.arrived: dict[tuple[str, int | None], float] = {}
        self.counts: dict[tuple[str, int | None], int] = {}
        self.event = asyncio.Event()

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def diagnostics(ls, params: types.PublishDiagnosticsParams) -> None:  # pygls passes the client as `ls`
            key = (params.uri, params.version)
            self.arrived.setdefault(key, time.perf_counter())
            self.counts[key] = len(params.diagnostics)
            self.event.set()

    async def wait(self, uri: str, version: int | None, timeout: float = 120.0) -> float:
        deadline = time.perf_counter() + timeout
        while (uri, version) not in self.arrived:
            self.event.clear()
            left = deadline - time.perf_counter()
            if left <= 0:
                raise SystemExit(f"no diagnostics for version {version} within {timeout} s")
            try:
                await asyncio.wait_for(self.event.wait(), left)
            except asyncio.TimeoutError:
                pass
        return self.arrived[(uri, version)]


async def forward_stderr(client: LanguageClient) -> None:
    server = getattr(client, "_server", None)
    stream = server.stderr if server is not None else None
    while stream is not None and (line := await stream.readline()):
        sys.stderr.write(line.decode("utf-8", "replace"))


def summary(label: str, samples: list[float], what: str = "edits") -> str:
    ms = sorted(s * 1000 for s in samples)
    p90 = ms[min(len(ms) - 1, int(round(0.9 * (len(ms) - 1))))]
    return (f"{label}: median {statistics.median(ms):.1f} ms, p90 {p90:.1f} ms, "
            f"min {ms[0]:.1f} ms, max {ms[-1]:.1f} ms ({len(ms)} {what})")


def included_header(file: Path) -> Path | None:
    """The first project header the file includes with quotes, found beside it."""
    for line in file.read_text(encoding="utf-8", errors="replace").splitlines():
        m = re.match(r'\s*#\s*include\s*"([^"]+)"', line)
        if m and (file.parent / m.group(1)).is_file():
            return file.parent / m.group(1)
    return None


async def run(tree: Path, file: Path, edits: int, debounce_ms: int, saves: int, copied: bool) -> None:
    bench = Bench()
    client = bench.client
    with tempfile.TemporaryDirectory(prefix="rocmlint-lsp-bench-") as cache:
        started = time.perf_counter()
        await client.start_io(sys.executable, "-m", "rocmlint", "server")
        drain = asyncio.create_task(forward_stderr(client))  # a full pipe would stall the server
        await client.initialize_async(types.InitializeParams(
            capabilities=types.ClientCapabilities(), root_uri=tree.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=tree.as_uri(), name=tree.name)],
            initialization_options={"cacheDir": cache, "debounceMs": 0}))
        client.initialized(types.InitializedParams())
        ready = time.perf_counter()
        text = file.read_text(encoding="utf-8")
        lines = len(text.splitlines())
        uri = file.as_uri()
        sent = time.perf_counter()
        client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
            uri=uri, language_id="cuda-cpp", version=1, text=text)))
        first = await bench.wait(uri, 1) - sent
        print(f"tree: {tree}")
        print(f"file: {file.relative_to(tree)} ({lines} lines, {bench.counts[(uri, 1)]} diagnostics)")
        print(f"server start + initialize: {(ready - started) * 1000:.0f} ms")
        print(f"first lint after didOpen (cold: builds the project model): {first * 1000:.0f} ms")

        line = lines // 2
        version = 1

        async def edit_round(count: int) -> list[float]:
            nonlocal version
            samples = []
            for index in range(count):
                version += 1
                start = types.Position(line, 0)
                change = types.TextDocumentContentChangePartial(
                    range=types.Range(start, start), text=" ") if index % 2 == 0 else \
                    types.TextDocumentContentChangePartial(range=types.Range(start, types.Position(line, 1)), text="")
                sent = time.perf_counter()
                client.text_document_did_change(types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                    content_changes=[change]))
                samples.append(await bench.wait(uri, version) - sent)
            return samples

        await edit_round(4)  # warm-up
        print(summary("re-lint after a one-character edit (warm, debounce 0 ms)", await edit_round(edits)))
        if debounce_ms:
            client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
                settings={"cacheDir": cache, "debounceMs": debounce_ms}))
            await edit_round(4)  # the settings change drops the model: warm it again
            print(summary(f"edit to diagnostics with the default debounce ({debounce_ms} ms pause included)",
                          await edit_round(edits)))
        save_times = []
        for _ in range(saves):
            bench.arrived.pop((uri, version), None)
            sent = time.perf_counter()
            client.text_document_did_save(types.DidSaveTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri=uri)))
            save_times.append(await bench.wait(uri, version) - sent)
        if save_times:
            print(summary("diagnostics after didSave of the unchanged file (the model and the lint are kept)", save_times, "saves"))
        header = included_header(file) if copied else None
        header_times = []
        for index in range(saves if header is not None else 0):
            assert header is not None
            with open(header, "a", encoding="utf-8") as fh:
                fh.write(f"#define ROCMLINT_BENCH_{index} 1\n")  # a new directive: the model is rebuilt
            bench.arrived.pop((uri, version), None)
            sent = time.perf_counter()
            client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
                types.FileEvent(uri=header.as_uri(), type=types.FileChangeType.Changed)]))
            header_times.append(await bench.wait(uri, version) - sent)
        if header is not None and header_times:
            print(summary(f"includer re-linted after {header.relative_to(tree)} gains a #define "
                          "(the project model rebuilt)", header_times, "header edits"))
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()
        drain.cancel()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree", type=Path, help="the project to open (e.g. a ggml checkout)")
    parser.add_argument("--file", type=Path, help="the .cu file to edit, relative to the tree "
                                                  "(default: the .cu closest to 1,000 lines)")
    parser.add_argument("--edits", type=int, default=60, help="edits timed per round (default 60)")
    parser.add_argument("--debounce-ms", type=int, default=50,
                        help="also time a round with this debounce (the server's default; 0: skip)")
    parser.add_argument("--saves", type=int, default=5, help="saves timed (default 5)")
    parser.add_argument("--copy", action="store_true",
                        help="work on a temporary copy of the tree and also time header edits on disk "
                             "(the includer re-linted after the model is rebuilt)")
    args = parser.parse_args()
    tree = args.tree.resolve()
    if not tree.is_dir():
        raise SystemExit(f"not a folder: {tree}")
    file = (tree / args.file).resolve() if args.file else pick_file(tree)
    if not file.is_file():
        raise SystemExit(f"no such file: {file}")
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    if not args.copy:
        asyncio.run(run(tree, file, args.edits, args.debounce_ms, args.saves, copied=False))
        return
    with tempfile.TemporaryDirectory(prefix="rocmlint-lsp-tree-") as folder:
        copy = Path(folder) / tree.name
        shutil.copytree(tree, copy, ignore=shutil.ignore_patterns(".git"), symlinks=True)
        (copy / ".git").mkdir()  # still its own project root
        asyncio.run(run(copy, copy / file.relative_to(tree), args.edits, args.debounce_ms, args.saves, copied=True))


if __name__ == "__main__":
    main()
