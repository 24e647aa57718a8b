"""Tiny real language servers for the LSP tests, written with pygls's server side.

    python -m tests.support.lsp_fixture_server MODE

Modes: `lines` publishes one error per line that holds `BAD` (with the document's version);
`crash` is `lines`, but exits with code 3 on the first change of a session while the file
named by $LSP_FIXTURE_CRASH_ONCE does not exist yet (it creates it: the restarted server
keeps running); `stubborn` is `lines` that lives on after its input ends (most servers exit
then; this one only dies when killed); `flood` publishes 5,000 errors on every open and
change; `silent` reads its input and never answers, not even initialize.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

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


def serve(mode: str) -> None:
    from pygls.lsp.server import LanguageServer

    server = LanguageServer("fixture", "1", text_document_sync_kind=types.TextDocumentSyncKind.Full)

    def publish(uri: str, version: int, text: str) -> None:
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
        server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
        )

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def opened(params: types.DidOpenTextDocumentParams) -> None:
        doc = params.text_document
        publish(doc.uri, doc.version, doc.text)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def changed(params: types.DidChangeTextDocumentParams) -> None:
        marker = os.environ.get("LSP_FIXTURE_CRASH_ONCE")
        if mode == "crash" and marker and not Path(marker).exists():
            Path(marker).write_text("crashed")
            os._exit(3)
        text = params.content_changes[-1].text  # full sync: the whole text
        publish(params.text_document.uri, params.text_document.version, text)

    server.start_io()
    if mode == "stubborn":
        time.sleep(3600)


if __name__ == "__main__":
    if sys.argv[1] == "silent":
        sys.stdin.buffer.read()
    else:
        serve(sys.argv[1])
