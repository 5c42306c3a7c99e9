"""``rocmlint server``: the Language Server Protocol on stdio (pygls), wired to ``Session``.

The engine runs on one worker thread, in the order requests arrive, so the event loop keeps
reading messages while a file is linted (a keystroke cancels the lint it would repeat, a
shutdown is answered). Edits are linted after a short pause (``debounceMs``) so a burst of
keystrokes is linted once; opening and saving lint at once.
"""
from __future__ import annotations

import asyncio
import logging
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from .. import __version__
from ..config import CONFIG_FILES
from ..project.tree import BUILD_FILE_NAMES, C_FAMILY_EXTENSIONS
from .session import FIX_ALL_KIND, Options, OptionsError, Session

log = logging.getLogger("rocmlint.server")

EXPLAIN_COMMAND = "rocmlint.explain"
# Files whose change on disk can move a project model or the settings (watched when the client can).
_WATCHED = ("**/*.{" + ",".join(sorted(e.lstrip(".") for e in C_FAMILY_EXTENSIONS | {".py", ".cmake"})) + "}",
            "**/{" + ",".join(sorted(BUILD_FILE_NAMES | set(CONFIG_FILES) | {"compile_commands.json",
                                                                          "meson_options.txt"})) + "}")


class RocmlintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("rocmlint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.session = Session()
        self.engine = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rocmlint-engine")
        self.waiting: dict[str, asyncio.Task] = {}  # uri -> a lint still in its debounce pause
        self.loop: asyncio.AbstractEventLoop | None = None

    async def on_engine(self, function: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self.engine, function, *args)

    def tell(self, message: str, kind: types.MessageType) -> None:
        """window/showMessage, from whichever thread (the engine's runs the session)."""
        params = types.ShowMessageParams(type=kind, message=message)
        log.warning("%s", message)
        if self.loop is not None:
            self.loop.call_soon_threadsafe(self.window_show_message, params)

    def schedule(self, uri: str, delay: float) -> None:
        """Lint ``uri`` after ``delay`` seconds, replacing a lint of it still waiting."""
        waiting = self.waiting.pop(uri, None)
        if waiting is not None:
            waiting.cancel()
        self.waiting[uri] = asyncio.ensure_future(self._lint_after(uri, delay))

    async def _lint_after(self, uri: str, delay: float) -> None:
        if delay > 0:
            await asyncio.sleep(delay)
        if self.waiting.get(uri) is asyncio.current_task():
            del self.waiting[uri]
        try:
            result = await self.on_engine(self._lint, uri)
        except RuntimeError:  # the engine was shut down meanwhile
            return
        except Exception:  # noqa: BLE001 - logged; the server keeps serving
            log.exception("linting %s failed", uri)
            return
        if result is not None:
            version, diagnostics = result
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version))

    def _lint(self, uri: str) -> tuple[int | None, list[types.Diagnostic]] | None:
        doc = self.session.documents.get(uri)
        if doc is None:
            return None  # closed meanwhile
        return doc.version, self.session.lint(uri)

    def relint(self, uris: list[str]) -> None:
        for uri in uris:
            self.schedule(uri, 0)


def _path(uri: str) -> Path | None:
    """The file a document URI names; None for other schemes (an untitled buffer)."""
    if not uri.startswith("file:"):
        return None
    found = to_fs_path(uri)
    return Path(found) if found else None


def _options(ls: RocmlintServer, raw: object) -> Options | None:
    try:
        return Options.parse(raw)
    except OptionsError as exc:
        ls.tell(f"rocmlint: settings not used: {exc}", types.MessageType.Error)
        return None


def build_server() -> RocmlintServer:
    server = RocmlintServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: RocmlintServer, params: types.InitializeParams) -> None:
        ls.loop = asyncio.get_running_loop()
        folders = [p for p in (_path(f.uri) for f in params.workspace_folders or []) if p is not None]
        if not folders and params.root_uri:
            root = _path(params.root_uri)
            folders = [root] if root is not None else []
        elif not folders and params.root_path:
            folders = [Path(params.root_path)]
        options = _options(ls, params.initialization_options) or Options()
        chosen = ls.workspace.position_encoding or types.PositionEncodingKind.Utf16
        encoding = str(getattr(chosen, "value", chosen))  # utf-16 unless the client offered utf-8/utf-32
        ls.session = Session(folders, options, ls.tell, encoding)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: RocmlintServer, params: types.InitializedParams) -> None:
        watched = ls.client_capabilities.workspace and ls.client_capabilities.workspace.did_change_watched_files
        if not (watched and watched.dynamic_registration):
            return
        options = types.DidChangeWatchedFilesRegistrationOptions(
            watchers=[types.FileSystemWatcher(glob_pattern=g) for g in _WATCHED])
        try:
            await ls.client_register_capability_async(types.RegistrationParams(registrations=[types.Registration(
                id="rocmlint-watched-files", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                register_options=options)]))
        except Exception:  # noqa: BLE001 - saves still refresh the model
            log.warning("the client did not register the file watchers")

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: RocmlintServer, params: types.DidOpenTextDocumentParams) -> None:
        item = params.text_document
        path = _path(item.uri)
        if path is None:
            return  # not a file (an untitled buffer)
        await ls.on_engine(ls.session.open, item.uri, path, item.text, item.version, item.language_id)
        ls.schedule(item.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: RocmlintServer, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        doc = ls.workspace.get_text_document(uri)
        await ls.on_engine(ls.session.change, uri, doc.source, params.text_document.version)
        ls.schedule(uri, ls.session.options.debounce_ms / 1000)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: RocmlintServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        path = _path(uri)
        others = await ls.on_engine(ls.session.files_changed, [path] if path is not None else [])
        ls.relint(sorted(set(others) | {uri}))

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    async def did_close(ls: RocmlintServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        waiting = ls.waiting.pop(uri, None)
        if waiting is not None:
            waiting.cancel()
        await ls.on_engine(ls.session.close, uri)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    async def watched_files(ls: RocmlintServer, params: types.DidChangeWatchedFilesParams) -> None:
        paths = [p for p in (_path(change.uri) for change in params.changes) if p is not None]
        ls.relint(await ls.on_engine(ls.session.files_changed, paths))

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def configuration(ls: RocmlintServer, params: types.DidChangeConfigurationParams) -> None:
        if not Options.concerns(params.settings):
            return  # another tool's settings, or none (a client that expects them pulled)
        options = _options(ls, params.settings)
        if options is None:
            return
        await ls.on_engine(ls.session.set_options, options)
        ls.relint(list(ls.session.documents))

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND]))
    async def code_action(ls: RocmlintServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        only = [str(k) for k in params.context.only] if params.context.only else None
        return await ls.on_engine(ls.session.code_actions, params.text_document.uri, params.range, only)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: RocmlintServer, params: types.HoverParams) -> types.Hover | None:
        text = await ls.on_engine(ls.session.hover, params.text_document.uri, params.position)
        if text is None:
            return None
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text))

    @server.command(EXPLAIN_COMMAND)
    async def explain(ls: RocmlintServer, *args: Any) -> str:
        """Arguments: a document URI and a 0-based line (or one object with ``uri`` and ``line``)."""
        if len(args) == 1 and isinstance(args[0], (list, tuple)):
            args = tuple(args[0])
        if len(args) == 1 and isinstance(args[0], dict):
            args = (args[0].get("uri"), args[0].get("line"))
        if len(args) != 2 or not isinstance(args[0], str) or not isinstance(args[1], int):
            return f"{EXPLAIN_COMMAND}: expected a document URI and a 0-based line, got {list(args)!r}"
        return await ls.on_engine(ls.session.explain, args[0], args[1])

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: RocmlintServer, params: None) -> None:
        for task in ls.waiting.values():
            task.cancel()
        ls.waiting.clear()
        ls.engine.shutdown(wait=False, cancel_futures=True)

    return server


def serve() -> int:
    """Serve on stdin/stdout until the client says exit. Anything else the process would
    print goes to standard error: standard output carries only the protocol."""
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="rocmlint server: %(levelname)s: %(message)s")
    logging.getLogger("pygls").setLevel(logging.WARNING)
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr
    build_server().start_io(stdin, stdout)
    return 0
