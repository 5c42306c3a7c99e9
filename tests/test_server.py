"""`rocmlint server` end to end: a real LSP client (pytest-lsp) drives the server over stdio.

Each test copies fixtures into its own workspace (tmp_path, a git root: one project), so the
expected findings are those `rocmlint check` reports on the same copies."""
from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import AsyncIterator, Callable

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities, make_test_lsp_client

from rocmlint.server.positions import LineMap, encode_text
from rocmlint.server.session import Session

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SERVER = [sys.executable, "-m", "rocmlint", "server"]
TIMEOUT = 30.0

# A header whose #define decides whether the AMD build compiles the includer's shuffle.
CONFIG_H = "#pragma once\n#if defined(__HIP_PLATFORM_AMD__)\n#define PORTABLE_MASKS 1\n#endif\n"
KERNEL_CU = """#include "config.h"

__global__ void add_neighbour(float* out, float v) {
#if !PORTABLE_MASKS
  v += __shfl_down_sync(0xffffffff, v, 16);
#endif
  out[threadIdx.x] = v;
}
"""
CLEAN_CU = """__global__ void scale(float* out, float v) {
  out[threadIdx.x] = v * 2.0f;
}
"""
MASK_LINE = "  v += __shfl_down_sync(0xffffffff, v, 16);\n"


def workspace(tmp_path: Path, *fixtures: str) -> Path:
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)  # a VCS root: the project is this folder
    for name in fixtures:
        shutil.copy(FIXTURES / name, root / Path(name).name)
    return root


@contextlib.asynccontextmanager
async def lsp(root: Path, options: dict | None = None, env: dict | None = None) -> AsyncIterator[LanguageClient]:
    client = make_test_lsp_client()
    await client.start_io(*SERVER, cwd=str(root), env={**os.environ, **(env or {})})
    await client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"), root_uri=root.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="ws")],
        initialization_options=options))
    try:
        yield client
    finally:
        await client.shutdown_session()
        await client.stop()


def open_file(client: LanguageClient, path: Path, text: str | None = None, language: str = "cuda-cpp") -> str:
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri, language_id=language, version=1, text=path.read_text() if text is None else text)))
    return uri


async def until(condition: Callable[[], object], what: str) -> object:
    """Poll ``condition`` until it returns something true (the server answers asynchronously)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT
    while True:
        value = condition()
        if value:
            return value
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


def codes(client: LanguageClient, uri: str) -> list[tuple[str, int]] | None:
    found = client.diagnostics.get(uri)
    return None if found is None else sorted((str(d.code), d.range.start.line + 1) for d in found)


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rocmlint", *args], cwd=cwd, capture_output=True, text=True)


def cli_findings(root: Path, name: str) -> list[tuple[str, int]]:
    out = cli("check", "--no-cache", "--output-format", "json", name, cwd=root).stdout
    return sorted((f["code"], f["line"]) for f in json.loads(out))


def apply(text: str, edits: list[types.TextEdit]) -> str:
    """What an editor does with a code action's edits (positions in UTF-16, all against ``text``)."""
    data = encode_text(text)
    lines = LineMap(data)
    spans = sorted(((lines.offset(e.range.start.line, e.range.start.character),
                     lines.offset(e.range.end.line, e.range.end.character), e.new_text) for e in edits),
                   reverse=True)
    for start, end, new in spans:
        data = data[:start] + encode_text(new) + data[end:]
    return data.decode("utf-8")


def edits_of(action: types.CodeAction) -> list[types.TextEdit]:
    assert action.edit is not None and action.edit.document_changes
    change = action.edit.document_changes[0]
    assert isinstance(change, types.TextDocumentEdit)
    return [e for e in change.edits if isinstance(e, types.TextEdit)]


@pytest.mark.asyncio
async def test_diagnostics_for_cu_and_py_match_the_command_line(tmp_path):
    root = workspace(tmp_path, "cpp/block_reduce.cu", "python/gpu_utils.py")
    async with lsp(root) as client:
        cu = open_file(client, root / "block_reduce.cu")
        py = open_file(client, root / "gpu_utils.py", language="python")
        await until(lambda: cu in client.diagnostics and py in client.diagnostics, "diagnostics")
        assert codes(client, cu) == cli_findings(root, "block_reduce.cu")
        assert codes(client, py) == cli_findings(root, "gpu_utils.py")
        assert {c for c, _ in codes(client, cu) or []} >= {"ROC203", "ROC303"}
        first = client.diagnostics[cu][0]
        assert first.source == "rocmlint" and first.severity == types.DiagnosticSeverity.Warning
        assert first.code_description is not None
        assert first.code_description.href.endswith(f"#{str(first.code).lower()}-{first.data['name']}")


@pytest.mark.asyncio
async def test_suppression_comments_are_honoured(tmp_path):
    root = workspace(tmp_path)
    (root / "config.h").write_text("#pragma once\n")
    kernel = root / "kernel.cu"
    kernel.write_text(KERNEL_CU.replace("16);", "16);  // NOLINT(ROC203)"))
    async with lsp(root) as client:
        uri = open_file(client, kernel)
        await until(lambda: uri in client.diagnostics, "diagnostics")
        assert codes(client, uri) == []


@pytest.mark.asyncio
async def test_quick_fixes_give_the_bytes_of_check_fix(tmp_path):
    root = workspace(tmp_path, "cpp/block_reduce.cu", "cpp/row_softmax.cu")
    (root / "config.h").write_text("#pragma once\n")
    (root / "kernel.cu").write_text(KERNEL_CU)
    (root / "kernel_crlf.cu").write_bytes(KERNEL_CU.replace("\n", "\r\n").encode())
    expected = tmp_path / "expected"
    shutil.copytree(root, expected)
    assert cli("check", "--no-cache", "--fix", ".", cwd=expected).returncode in (0, 1)
    async with lsp(root) as client:
        # One safe finding: its preferred quick fix is what --fix writes.
        kernel = open_file(client, root / "kernel.cu")
        await until(lambda: codes(client, kernel), "the kernel's finding")
        [diagnostic] = client.diagnostics[kernel]
        actions = await client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=kernel), range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[diagnostic])))
        preferred = [a for a in actions if isinstance(a, types.CodeAction) and a.is_preferred]
        assert len(preferred) == 1
        assert apply(KERNEL_CU, edits_of(preferred[0])) == (expected / "kernel.cu").read_text()
        suppress = [a for a in actions if isinstance(a, types.CodeAction) and "suppress" in a.title]
        assert "// NOLINT(ROC203)" in apply(KERNEL_CU, edits_of(suppress[0])).splitlines()[4]
        crlf_text = (root / "kernel_crlf.cu").read_bytes().decode()  # the editor keeps \r\n
        crlf = open_file(client, root / "kernel_crlf.cu", crlf_text)
        await until(lambda: codes(client, crlf), "the CRLF kernel's finding")
        actions = await client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=crlf), range=client.diagnostics[crlf][0].range,
            context=types.CodeActionContext(diagnostics=list(client.diagnostics[crlf]))))
        [preferred] = [a for a in actions if isinstance(a, types.CodeAction) and a.is_preferred]
        assert apply(crlf_text, edits_of(preferred)).encode() == (expected / "kernel_crlf.cu").read_bytes()

        # Several findings: "fix all" is what --fix writes for the file.
        block = open_file(client, root / "block_reduce.cu")
        await until(lambda: codes(client, block), "block_reduce's findings")
        actions = await client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=block), range=types.Range(
                types.Position(0, 0), types.Position(0, 0)),
            context=types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.SourceFixAll])))
        [fix_all] = [a for a in actions if isinstance(a, types.CodeAction)]
        original = (root / "block_reduce.cu").read_text()
        assert apply(original, edits_of(fix_all)) == (expected / "block_reduce.cu").read_text()
        assert apply(original, edits_of(fix_all)) != original

        # Unsafe fixes are offered, never preferred.
        softmax = open_file(client, root / "row_softmax.cu")
        await until(lambda: codes(client, softmax), "row_softmax's findings")
        unsafe = [d for d in client.diagnostics[softmax] if d.data["fix"] == "unsafe"]
        assert unsafe
        actions = await client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=softmax), range=unsafe[0].range,
            context=types.CodeActionContext(diagnostics=[unsafe[0]])))
        fixes = [a for a in actions if isinstance(a, types.CodeAction) and "unsafe" in a.title]
        assert fixes and not any(a.is_preferred for a in fixes)


@pytest.mark.asyncio
async def test_unsaved_edits_are_linted(tmp_path):
    root = workspace(tmp_path)
    clean = root / "clean.cu"
    clean.write_text(CLEAN_CU)
    async with lsp(root) as client:
        uri = open_file(client, clean)
        await until(lambda: uri in client.diagnostics, "diagnostics")
        assert codes(client, uri) == []
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangePartial(
                range=types.Range(types.Position(1, 0), types.Position(1, 0)), text=MASK_LINE)]))
        assert await until(lambda: codes(client, uri), "the edit's finding") == [("ROC203", 2)]
        assert clean.read_text() == CLEAN_CU  # nothing written: the buffer was linted


@pytest.mark.asyncio
async def test_hover_and_explain_command_show_the_explain_text(tmp_path):
    root = workspace(tmp_path, "cpp/block_reduce.cu")
    async with lsp(root) as client:
        uri = open_file(client, root / "block_reduce.cu")
        await until(lambda: codes(client, uri), "diagnostics")
        mask = next(d for d in client.diagnostics[uri] if d.code == "ROC203")
        hover = await client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=mask.range.start))
        assert hover is not None and isinstance(hover.contents, types.MarkupContent)
        text = hover.contents.value
        assert "**ROC203**" in text and "AMD build compiles this line: yes" in text
        assert "#if stack" in text and "ROC203 warp-mask-literal-32bit: REPORTED" in text
        outside = await client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(1, 0)))
        assert outside is None
        explained = await client.workspace_execute_command_async(types.ExecuteCommandParams(
            command="rocmlint.explain", arguments=[uri, mask.range.start.line]))
        expected = cli("explain", "--no-cache", f"block_reduce.cu:{mask.range.start.line + 1}", cwd=root).stdout
        assert explained.splitlines()[1:] == expected.splitlines()[1:]  # the first line names the path


@pytest.mark.asyncio
async def test_a_saved_header_edit_updates_its_includer(tmp_path):
    root = workspace(tmp_path)
    header, kernel = root / "config.h", root / "kernel.cu"
    header.write_text(CONFIG_H)
    kernel.write_text(KERNEL_CU)
    async with lsp(root) as client:
        uri = open_file(client, kernel)
        await until(lambda: uri in client.diagnostics, "diagnostics")
        assert codes(client, uri) == []  # the header defines PORTABLE_MASKS for the AMD build
        header_uri = open_file(client, header)
        header.write_text("#pragma once\n")
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=header_uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text="#pragma once\n")]))
        client.text_document_did_save(types.DidSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=header_uri)))
        assert await until(lambda: codes(client, uri), "the includer's new finding") == [("ROC203", 5)]


@pytest.mark.asyncio
async def test_malformed_config_is_a_message_and_the_server_stays_up(tmp_path):
    root = workspace(tmp_path)
    (root / "config.h").write_text("#pragma once\n")
    (root / "kernel.cu").write_text(KERNEL_CU)
    pyproject = root / "pyproject.toml"
    pyproject.write_text("[tool.rocmlint\nselect = [\n")
    async with lsp(root, {"select": ["ROC2"], "ignore": ["NOPE9"]}) as client:
        await until(lambda: client.messages, "the bad settings' message")
        assert "NOPE9" in client.messages[0].message
        uri = open_file(client, root / "kernel.cu")
        await until(lambda: len(client.messages) > 1, "the config's message")
        assert "invalid TOML" in client.messages[1].message
        assert client.messages[1].type == types.MessageType.Error
        pyproject.write_text("[tool.rocmlint]\nselect = [\"ROC2\"]\n")
        client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[types.FileEvent(
            uri=pyproject.as_uri(), type=types.FileChangeType.Changed)]))
        assert await until(lambda: codes(client, uri), "diagnostics once the config reads") == [("ROC203", 5)]
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
            settings={"rocmlint": {"ignore": ["ROC203"]}}))
        await until(lambda: codes(client, uri) == [], "the ignore setting")
    assert client._server is not None and client._server.returncode == 0  # a clean exit after shutdown


@pytest.mark.asyncio
async def test_a_parse_error_in_one_file_leaves_the_others(tmp_path):
    root = workspace(tmp_path, "python/gpu_utils.py")
    broken = root / "broken.py"
    broken.write_text('import torch\nmodel = torch.compile(net, mode="reduce-overhead"\ndef (:\n')
    async with lsp(root) as client:
        bad = open_file(client, broken, language="python")
        good = open_file(client, root / "gpu_utils.py", language="python")
        await until(lambda: bad in client.diagnostics and good in client.diagnostics, "diagnostics")
        assert {c for c, _ in codes(client, bad) or []} <= {"ROC001"}
        assert codes(client, good) == cli_findings(root, "gpu_utils.py")


@pytest.mark.asyncio
async def test_a_rule_that_raises_costs_its_file_only_and_the_server_goes_on(tmp_path):
    root = workspace(tmp_path, "cpp/block_reduce.cu", "python/gpu_utils.py")
    inject = tmp_path / "inject"
    inject.mkdir()
    (inject / "sitecustomize.py").write_text(  # in the server process only: ROC203 raises
        "from rocmlint.registry import all_rules\n\n\n"
        "def broken(self, ctx):\n    raise RuntimeError('rule bug')\n\n\n"
        "all_rules()['ROC203'].check = broken\n")
    async with lsp(root, env={"PYTHONPATH": str(inject)}) as client:
        cu = open_file(client, root / "block_reduce.cu")
        py = open_file(client, root / "gpu_utils.py", language="python")
        await until(lambda: cu in client.diagnostics and py in client.diagnostics, "diagnostics")
        [crashed] = client.diagnostics[cu]
        assert crashed.code == "ROC003" and "rule bug" in crashed.message
        assert crashed.severity == types.DiagnosticSeverity.Error
        assert codes(client, py) == cli_findings(root, "gpu_utils.py")
        hover = await client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=py), position=client.diagnostics[py][0].range.start))
        assert hover is not None  # still serving


def test_a_rule_that_raises_is_reported_for_its_file_only(tmp_path, monkeypatch):
    from rocmlint.registry import all_rules

    root = workspace(tmp_path, "cpp/block_reduce.cu", "python/gpu_utils.py")
    session = Session([root])
    rule = all_rules()["ROC203"]

    def broken(self, ctx):
        raise RuntimeError("rule bug")

    monkeypatch.setattr(rule, "check", broken)
    for name in ("block_reduce.cu", "gpu_utils.py"):
        session.open(name, root / name, (root / name).read_text())
    crashed = session.lint("block_reduce.cu")
    assert [d.code for d in crashed] == ["ROC003"] and "rule bug" in crashed[0].message
    assert sorted(d.code for d in session.lint("gpu_utils.py")) == [c for c, _ in cli_findings(root, "gpu_utils.py")]


def test_positions_count_utf16_units_and_keep_crlf():
    text = "a😀b\r\nx\ry\n"
    lines = LineMap(encode_text(text))
    assert lines.position(len("a😀".encode())) == (0, 3)
    assert lines.offset(0, 3) == len("a😀".encode())
    assert lines.position(encode_text(text).index(b"x")) == (1, 0)
    assert lines.position(encode_text(text).index(b"y")) == (2, 0)
    assert lines.offset(0, 99) == len("a😀b".encode())  # past a line's end: its end
    assert LineMap(encode_text(text), "utf-32").position(len("a😀".encode())) == (0, 2)


def test_a_save_keeps_the_model_unless_a_directive_moves(tmp_path):
    root = workspace(tmp_path)
    (root / "config.h").write_text(CONFIG_H)
    kernel = root / "kernel.cu"
    kernel.write_text(KERNEL_CU)
    session = Session([root])
    session.open("kernel", kernel, KERNEL_CU)
    assert session.lint("kernel") == []
    [project] = session.projects.values()
    assert project is not None and project.parts["cpp"].built and project.parts["cpp"].get() is not None
    kernel.write_text(KERNEL_CU.replace("v, 16)", "v, 8)"))  # code between the directives
    assert session.files_changed([kernel]) == [] and list(session.projects.values()) == [project]
    kernel.write_text("#define EXTRA 1\n" + KERNEL_CU)  # every directive moves a line down
    assert session.files_changed([kernel]) == ["kernel"] and session.projects == {}


@pytest.mark.parametrize("fixture", ["cpp/row_softmax.cu", "cpp/warp_primitives.cuh", "python/models.py",
                                     "python/embedded/sparse_rowsum.py", "python/embedded/templated_kernels.py",
                                     "manifest/requirements.txt", "manifest/trainer/pyproject.toml"])
def test_each_suppression_action_silences_its_finding_and_nothing_else(tmp_path, fixture):
    root = workspace(tmp_path)
    path = root / Path(fixture).name
    path.write_bytes((FIXTURES / fixture).read_bytes())
    session = Session([root])
    text = path.read_text()
    session.open("doc", path, text)
    before = session.lint("doc")
    assert before, f"{fixture} has no finding to suppress"
    for diagnostic in before:
        actions = session.code_actions("doc", diagnostic.range, ["quickfix"])
        [suppress] = [a for a in actions if a.title == f"rocmlint: suppress {diagnostic.code} on this line"]
        session.change("doc", apply(text, edits_of(suppress)), 2)
        after = {(d.code, d.range.start.line) for d in session.lint("doc")}
        assert (diagnostic.code, diagnostic.range.start.line) not in after
        assert "ROC001" not in {code for code, _ in after}
        session.change("doc", text, 1)


def test_severity_setting_and_bad_settings():
    from rocmlint.server.session import Options, OptionsError

    options = Options.parse({"rocmlint": {"severity": {"roc2": "error"}, "select": "ROC2, ROC3"}})
    assert options.severity == (("ROC2", "error"),) and options.select == ("ROC2", "ROC3")
    for bad in ({"severity": {"ROC2": "fatal"}}, {"select": ["ROC999"]}, {"debounceMs": -1}, {"colour": 1},
                {"configPath": "/no/such/rocmlint.toml"}):
        with pytest.raises(OptionsError):
            Options.parse(bad)
    assert not Options.concerns({"python": {}}) and Options.concerns({"rocmlint": {}})


def test_severity_comes_from_the_settings(tmp_path):
    from rocmlint.server.session import Options

    root = workspace(tmp_path)
    (root / "config.h").write_text("#pragma once\n")
    kernel = root / "kernel.cu"
    kernel.write_text(KERNEL_CU)
    session = Session([root], Options.parse({"severity": {"ROC2": "error", "ROC203": "hint"}}))
    session.open("kernel", kernel, KERNEL_CU)
    [diagnostic] = session.lint("kernel")
    assert diagnostic.code == "ROC203" and diagnostic.severity == types.DiagnosticSeverity.Hint  # longest prefix


def test_positions_follow_the_agreed_encoding(tmp_path):
    root = workspace(tmp_path)
    (root / "config.h").write_text("#pragma once\n")
    kernel = root / "kernel.cu"
    text = KERNEL_CU.replace("  v += __shfl", "  /* é😀 */ v += __shfl")
    kernel.write_text(text)
    column = text.splitlines()[4].index("0xffffffff")  # code points
    for encoding, expected in (("utf-16", column + 1), ("utf-8", column + 4), ("utf-32", column)):
        session = Session([root], encoding=encoding)
        session.open("kernel", kernel, text)
        [diagnostic] = session.lint("kernel")
        assert (diagnostic.range.start.line, diagnostic.range.start.character) == (4, expected)


def test_a_compile_database_that_cannot_be_used_is_a_message(tmp_path):
    from rocmlint.server.session import Options

    root = workspace(tmp_path)
    (root / "config.h").write_text("#pragma once\n")
    kernel = root / "kernel.cu"
    kernel.write_text(KERNEL_CU)
    told: list[str] = []
    session = Session([root], Options.parse({"compileCommands": str(root / "no-build")}),
                      notify=lambda message, kind: told.append(message))
    session.open("kernel", kernel, KERNEL_CU)
    assert [d.code for d in session.lint("kernel")] == ["ROC203"]  # judged without the model
    assert len(told) == 1 and "no-build" in told[0]


def test_server_without_pygls_is_a_clear_error(monkeypatch, capsys):
    from rocmlint import cli

    monkeypatch.setitem(sys.modules, "pygls", None)  # import fails
    assert cli.main(["server"]) == 2
    assert "pip install 'rocmlint[server]'" in capsys.readouterr().err


@pytest.mark.asyncio
async def test_a_burst_of_edits_is_linted_once(tmp_path):
    from pygls.lsp.client import LanguageClient as PlainClient  # records every publish, with its version

    root = workspace(tmp_path)
    clean = root / "clean.cu"
    clean.write_text(CLEAN_CU)
    client = PlainClient("debounce-test", "1")
    published: list[int | None] = []

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def diagnostics(ls, params: types.PublishDiagnosticsParams) -> None:
        published.append(params.version)

    await client.start_io(*SERVER, cwd=str(root))
    try:
        await client.initialize_async(types.InitializeParams(
            capabilities=types.ClientCapabilities(), root_uri=root.as_uri(),
            initialization_options={"debounceMs": 800}))  # far longer than the burst
        client.initialized(types.InitializedParams())
        uri = clean.as_uri()
        client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
            uri=uri, language_id="cuda-cpp", version=1, text=CLEAN_CU)))
        await until(lambda: published == [1], "the open's diagnostics")
        for version in range(2, 7):  # five keystrokes well within the pause
            client.text_document_did_change(types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangePartial(
                    range=types.Range(types.Position(1, 0), types.Position(1, 0)), text=" ")]))
        await until(lambda: 6 in published, "the last edit's diagnostics")
        await asyncio.sleep(0.4)
        assert published == [1, 6]
        await client.shutdown_async(None)
        client.exit(None)
    finally:
        await client.stop()
