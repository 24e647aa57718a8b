"""Tiny real language servers for the LSP tests, written with pygls's server side.

    python -m tests.support.lsp_fixture_server MODE

Modes: `lines` publishes one error per line that holds `BAD` (with the document's version);
`crash` is `lines`, but exits with code 3 on the first change of a session while the file
named by $LSP_FIXTURE_CRASH_ONCE does not exist yet (it creates it: the restarted server
keeps running); `stubborn` is `lines` that lives on after its input ends (most servers exit
then; this one only dies when killed); `flood` publishes 5,000 errors on every open and
change; `silent` reads its input and never answers, not even initialize.

More modes: `crashes` exits with code 3 on every change; `crash-then-refuse` is `crash`,
and once the marker exists answers initialize with an error (a restart that fails); `garbage`
writes malformed frames before each publication; `wedged` answers initialize but never a
hover; `points` answers definition, references and symbols with places in every file
$LSP_FIXTURE_POINTS names (`:`-separated paths), and 500 symbols whose names are
$LSP_FIXTURE_NAME_SIZE characters long; `sourced` gives each error a source
$LSP_FIXTURE_SOURCE_SIZE characters long; `surrogate` puts lone surrogates in each error's
message and source; `pulled` publishes nothing and answers textDocument/diagnostic (a pull)
with the errors of the document's current text, at once, and a line `pull` in
$LSP_FIXTURE_STARTS for each (as basedpyright does for a client that pulls: it publishes
nothing then). A server appends a line to $LSP_FIXTURE_STARTS (when set) each time it
starts (`silent` too), and `wedged` one (`hover`) when it is asked for a hover.

Hostile modes: `endless-header` sends one header line that never ends (200 MB of it, then
waits); `huge-frame` announces a 1 GiB message and trickles its body (1 KB each 10 ms, for
at most 10 minutes); `babble` is `lines` that, once a document changes, publishes diagnostics
of another file without end (for at most 10 minutes) and never those of the document;
`environ` is `lines` that first writes its environment to `~/.cache/environ`. `points` also
answers with each raw URI of $LSP_FIXTURE_URIS (one a line), as a hostile server would, and
a hover of $LSP_FIXTURE_HOVER_LINES lines of 100 characters (none when unset).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from lsprotocol import types


def _errors(text: str, word: str = "BAD") -> list[types.Diagnostic]:
    out = []
    for number, line in enumerate(text.splitlines()):
        column = line.find(word)
        if column >= 0:
            start = types.Position(line=number, character=column)
            end = types.Position(line=number, character=column + len(word))
            out.append(
                types.Diagnostic(
                    range=types.Range(start=start, end=end),
                    message=f"{word} found here",
                    severity=types.DiagnosticSeverity.Error,
                    source="fixture",
                )
            )
    return out


GARBAGE = (b"{not json", b'{"jsonrpc": "2.0", "id": []}', b'{"jsonrpc":"2.0","method":7}  ')
"""Frames whose body is not a message di-code can read (each with its right length)."""


def serve(mode: str) -> None:
    from pygls.lsp.server import LanguageServer

    server = LanguageServer("fixture", "1", text_document_sync_kind=types.TextDocumentSyncKind.Full)
    _mark("started")

    def publish(uri: str, version: int, text: str) -> None:
        if mode == "pulled":
            return
        if mode == "flood":
            point = types.Position(line=0, character=0)
            diagnostics = [
                types.Diagnostic(
                    range=types.Range(start=point, end=point), message=f"flood {n} " + "x" * 500
                )
                for n in range(5000)
            ]
        else:
            diagnostics = _errors(text)
        if mode == "surrogate":  # sent as the JSON escape \ud800: valid JSON, invalid text
            for diagnostic in diagnostics:
                diagnostic.message += " \ud800"
                diagnostic.source = "fix\udfffture"
        if mode == "sourced":
            source = "s" * int(os.environ["LSP_FIXTURE_SOURCE_SIZE"])
            for diagnostic in diagnostics:
                diagnostic.source = diagnostic.code = source
        if mode == "garbage":
            for body in GARBAGE:
                sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
            sys.stdout.buffer.flush()
        server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
        )

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def opened(params: types.DidOpenTextDocumentParams) -> None:
        doc = params.text_document
        publish(doc.uri, doc.version, doc.text)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def changed(params: types.DidChangeTextDocumentParams) -> None:
        if mode == "babble":
            await _babble(server)
        marker = os.environ.get("LSP_FIXTURE_CRASH_ONCE")
        if mode == "crash" and marker and not Path(marker).exists():
            Path(marker).write_text("crashed")
            os._exit(3)
        if mode == "crashes":
            os._exit(3)
        text = params.content_changes[-1].text  # full sync: the whole text
        publish(params.text_document.uri, params.text_document.version, text)

    if mode == "wedged":

        @server.feature(types.TEXT_DOCUMENT_HOVER)
        async def hover(params: types.HoverParams) -> None:
            _mark("hover")
            await asyncio.sleep(3600)

    if mode == "points":
        _answer_with_points(server)
    if mode == "pulled":
        _answer_pulls(server)
    if mode == "environ":
        Path.home().joinpath(".cache", "environ").write_text(json.dumps(dict(os.environ)))
    server.start_io()
    if mode == "stubborn":
        time.sleep(3600)


def _mark(word: str) -> None:
    """A line in $LSP_FIXTURE_STARTS (when set): what the tests wait for."""
    marks = os.environ.get("LSP_FIXTURE_STARTS")
    if marks:
        with open(marks, "a") as file:
            file.write(f"{word}\n")


async def _babble(server: Any) -> None:
    """Diagnostics of a file nobody edits, without end (bounded: ten minutes)."""
    point = types.Position(line=0, character=0)
    noise = [types.Diagnostic(range=types.Range(start=point, end=point), message="noise")]
    elsewhere = types.PublishDiagnosticsParams(uri="file:///elsewhere/x.txt", diagnostics=noise)
    until = time.monotonic() + 600
    while time.monotonic() < until:
        server.text_document_publish_diagnostics(elsewhere)
        await asyncio.sleep(0.001)


def _endless_header() -> None:
    """One header line that never ends (bounded: 200 MB), then wait for the input's end."""
    sys.stdin.buffer.read(1)
    sys.stdout.buffer.write(b"X-Padding: ")
    chunk = b"a" * 65536
    for _ in range(200 * 16):
        sys.stdout.buffer.write(chunk)
    sys.stdout.buffer.flush()
    sys.stdin.buffer.read()


def _huge_frame() -> None:
    """A 1 GiB message announced, its body trickled (bounded: ten minutes)."""
    sys.stdin.buffer.read(1)
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % (1 << 30))
    until = time.monotonic() + 600
    while time.monotonic() < until:
        sys.stdout.buffer.write(b" " * 1024)
        sys.stdout.buffer.flush()
        time.sleep(0.01)


def _refuse_initialize() -> None:
    """Answer the first request (initialize) with an error, then wait for the input's end."""
    length = 0
    while (header := sys.stdin.buffer.readline().strip()) or not length:
        if header.lower().startswith(b"content-length:"):
            length = int(header.split(b":")[1])
    request = json.loads(sys.stdin.buffer.read(length))
    error = {"code": -32603, "message": "refused"}
    body = json.dumps({"jsonrpc": "2.0", "id": request["id"], "error": error}).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    sys.stdout.buffer.flush()
    sys.stdin.buffer.read()


def _answer_pulls(server: Any) -> None:
    """textDocument/diagnostic: the errors of the document as the server has it now."""
    options = types.DiagnosticOptions(inter_file_dependencies=False, workspace_diagnostics=False)

    def pulled(params: types.DocumentDiagnosticParams) -> types.FullDocumentDiagnosticReport:
        _mark("pull")
        document = server.workspace.get_text_document(params.text_document.uri)
        return types.FullDocumentDiagnosticReport(items=_errors(document.source))

    server.feature(types.TEXT_DOCUMENT_DIAGNOSTIC, options)(pulled)


def _answer_with_points(server: Any) -> None:
    """definition, references and symbols: a place in each file $LSP_FIXTURE_POINTS names."""
    targets = [Path(p) for p in os.environ.get("LSP_FIXTURE_POINTS", "").split(":") if p]
    size = int(os.environ.get("LSP_FIXTURE_NAME_SIZE", "5"))
    start = types.Position(line=0, character=0)
    span = types.Range(start=start, end=start)

    uris = [target.as_uri() for target in targets]
    uris += [u for u in os.environ.get("LSP_FIXTURE_URIS", "").splitlines() if u]

    def places(params: Any) -> list[types.Location]:
        return [types.Location(uri=uri, range=span) for uri in uris]

    def named(uri: str) -> list[types.SymbolInformation]:
        return [
            types.SymbolInformation(
                name=f"{n}" + "n" * size, kind=types.SymbolKind.Function,
                location=types.Location(uri=uri, range=span),
            )
            for n in range(500)
        ]  # fmt: skip

    def document_symbols(params: types.DocumentSymbolParams) -> list[types.SymbolInformation]:
        return named(params.text_document.uri)

    def workspace_symbols(params: types.WorkspaceSymbolParams) -> list[types.SymbolInformation]:
        return [s for target in targets for s in named(target.as_uri())]

    def hover(params: types.HoverParams) -> types.Hover | None:
        lines = int(os.environ.get("LSP_FIXTURE_HOVER_LINES", "0"))
        return (
            types.Hover(contents="h" * 99 + "\n")
            if not lines
            else types.Hover(contents="".join(f"{n:08d}" + "h" * 91 + "\n" for n in range(lines)))
        )

    server.feature(types.TEXT_DOCUMENT_HOVER)(hover)
    server.feature(types.TEXT_DOCUMENT_DEFINITION)(places)
    server.feature(types.TEXT_DOCUMENT_REFERENCES)(places)
    server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)(document_symbols)
    server.feature(types.WORKSPACE_SYMBOL)(workspace_symbols)


if __name__ == "__main__":
    marker = os.environ.get("LSP_FIXTURE_CRASH_ONCE")
    if sys.argv[1] == "crash-then-refuse":
        sys.argv[1] = "refuse" if marker and Path(marker).exists() else "crash"
    if sys.argv[1] == "refuse":
        _mark("started")
        _refuse_initialize()
    elif sys.argv[1] in ("endless-header", "huge-frame"):
        _mark("started")
        _endless_header() if sys.argv[1] == "endless-header" else _huge_frame()
    elif sys.argv[1] == "silent":
        _mark("started")
        sys.stdin.buffer.read()
    else:
        serve(sys.argv[1])
