"""A hostile language server that says it answers pulls (textDocument/diagnostic, LSP 3.17),
written on the raw protocol so that it can answer as no well-made server would.

    python -m tests.support.lsp_pull_server MODE WORKSPACE

It serves full-text sync and errors on each line holding `BAD` ("BAD found here"). MODE says
how it answers a pull (textDocument/diagnostic):

- `raw`: once the text holds `BAD`, with the JSON text of $LSP_PULL_ANSWER (`deep`: nested
  100,000 levels; `big`: a 23 MB report, `huge`: 100 MB), marked `answered` once written; it
  publishes the right errors 0.2 s later.
- `late-push`: at once; 0.3 s later it publishes the errors of the text before the change,
  with that version (a check of the old text that finishes late), and marks `pushed`.
- `forged-version`: 0.3 s late; as a document opens it publishes "STALE found here" for a
  version a million ahead, and for `b.txt` beside it (not opened yet) as version 1.
- `error`: the second pull with the error code $LSP_PULL_ERROR, the others rightly.
- `die`: it writes the first answer's header and 20 of its 4000 bytes, then exits.
- `push-only`: never; it publishes on open and change.
- `answer-once`: the first pull only; it publishes nothing.
- `slow`: 3 s late, with the errors of the text it had when asked.
- `elsewhere`: rightly; on each open and change it publishes an error for each of 2,000
  files never opened (new names each time), then marks `published`.

A line `pull` in $LSP_FIXTURE_STARTS (when set) marks each pull received, `started` a start.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any

_write = threading.Lock()


def send(message: dict[str, Any]) -> None:
    frame(json.dumps(message).encode())


def frame(body: bytes) -> None:
    with _write:
        sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        sys.stdout.buffer.flush()


def errors(text: str, word: str = "BAD") -> list[dict[str, Any]]:
    out = []
    for number, line in enumerate(text.splitlines()):
        column = line.find(word)
        if column >= 0:
            span = {
                "start": {"line": number, "character": column},
                "end": {"line": number, "character": column + len(word)},
            }
            out.append(
                {"range": span, "message": f"{word} found here", "severity": 1, "source": "fixture"}
            )
    return out


def publish(uri: str, version: int | None, items: list[dict[str, Any]]) -> None:
    params = {"uri": uri, "version": version, "diagnostics": items}
    send({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": params})


def later(seconds: float, then: Any) -> None:
    threading.Timer(seconds, then).start()


def mark(word: str) -> None:
    marks = os.environ.get("LSP_FIXTURE_STARTS")
    if marks:
        with open(marks, "a") as file:
            file.write(f"{word}\n")


def raw_answer(ident: Any) -> None:
    """The answer $LSP_PULL_ANSWER (or `deep`, `huge`) names, written as it is."""
    answer = os.environ["LSP_PULL_ANSWER"]
    if answer == "deep":
        depth = 100_000
        answer = '{"kind": "full", "items": [], "data": ' + "[" * depth + "]" * depth + "}"
    elif answer in ("big", "huge"):
        item = json.dumps(errors("BAD")[0])
        count = 150_000 if answer == "big" else 800_000
        answer = '{"kind": "full", "items": [' + ",".join([item] * count) + "]}"
    head = b'{"jsonrpc": "2.0", "id": %s, "result": ' % json.dumps(ident).encode()
    frame(head + answer.encode() + b"}")
    mark("answered")


class Server:
    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.texts: dict[str, str] = {}
        self.versions: dict[str, int] = {}
        self.previous: dict[str, tuple[int, str]] = {}
        self.pulls = 0

    def request(self, ident: Any, method: str, params: Any) -> None:
        if method == "initialize":
            provider = {"interFileDependencies": False, "workspaceDiagnostics": False}
            capabilities = {"textDocumentSync": 1, "diagnosticProvider": provider}
            send({"jsonrpc": "2.0", "id": ident, "result": {"capabilities": capabilities}})
        elif method == "textDocument/diagnostic":
            mark("pull")
            self.pulls += 1
            self.pulled(ident, params["textDocument"]["uri"])
        else:  # shutdown, and whatever else: nothing
            send({"jsonrpc": "2.0", "id": ident, "result": None})

    def pulled(self, ident: Any, uri: str) -> None:
        text, version = self.texts.get(uri, ""), self.versions.get(uri)
        full = {"jsonrpc": "2.0", "id": ident, "result": {"kind": "full", "items": errors(text)}}
        mode = self.mode
        if mode == "raw" and errors(text):
            raw_answer(ident)
            later(0.2, lambda: publish(uri, version, errors(text)))
        elif mode == "late-push":
            send(full)
            if uri in self.previous:
                old_version, old_text = self.previous[uri]
                later(0.3, lambda: (publish(uri, old_version, errors(old_text)), mark("pushed")))
        elif mode == "forged-version":
            later(0.3, lambda: send(full))
        elif mode == "error" and self.pulls == 2:
            error = {"code": int(os.environ["LSP_PULL_ERROR"]), "message": "not now"}
            send({"jsonrpc": "2.0", "id": ident, "error": error})
        elif mode == "die":
            with _write:
                cut = json.dumps(full)[:20].encode()
                sys.stdout.buffer.write(b"Content-Length: 4000\r\n\r\n" + cut)
                sys.stdout.buffer.flush()
            os._exit(0)
        elif mode == "slow":
            later(3.0, lambda: send(full))
        elif mode == "push-only" or (mode == "answer-once" and self.pulls > 1):
            return  # never answered
        else:
            send(full)

    def notified(self, method: str, params: Any) -> None:
        if method == "exit":
            os._exit(0)
        if method not in ("textDocument/didOpen", "textDocument/didChange"):
            return
        document = params["textDocument"]
        uri, version = document["uri"], document["version"]
        if uri in self.texts:
            self.previous[uri] = (self.versions[uri], self.texts[uri])
        text = document["text"] if "text" in document else params["contentChanges"][-1]["text"]
        self.texts[uri], self.versions[uri] = text, version
        if self.mode == "push-only":
            publish(uri, version, errors(text))
        if self.mode == "elsewhere":
            folder = uri.rsplit("/", 1)[0]
            for n in range(2000):
                publish(f"{folder}/gone/{version}-{n}.txt", None, errors("BAD"))
            mark("published")
        if self.mode == "forged-version" and method == "textDocument/didOpen":
            stale = errors("STALE\n", "STALE")
            publish(uri, version + 1_000_000, stale)
            if not uri.endswith("/b.txt"):
                publish(uri.rsplit("/", 1)[0] + "/b.txt", 1, stale)


def serve(mode: str) -> None:
    server = Server(mode)
    mark("started")
    stdin = sys.stdin.buffer
    while True:
        length = 0
        while (line := stdin.readline()) not in (b"\r\n", b"\n", b""):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        if not length:
            return
        message = json.loads(stdin.read(length))
        if "method" not in message:
            continue  # an answer to a request of ours (none are made)
        if "id" in message:
            server.request(message["id"], message["method"], message.get("params"))
        else:
            server.notified(message["method"], message.get("params"))
        time.sleep(0)


if __name__ == "__main__":
    serve(sys.argv[1])
