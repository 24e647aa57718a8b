"""One running language server, spoken to with pygls's client over lsprotocol types.

Imported only when a server starts. It keeps the server's latest diagnostics per document
(pushed with textDocument/publishDiagnostics, or asked for with textDocument/diagnostic) and
lets a caller wait, bounded, for the ones that follow a change. Requests the server makes of
the client (configuration, capability registration, progress) are answered so that no server
waits on them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcMethodNotFound
from pygls.lsp.client import LanguageClient

from di_code.system.errors import DiCodeError
from di_code.tools.lsp.converter import converter
from di_code.tools.lsp.frames import read_messages
from di_code.tools.lsp.servers import ServerSpec
from di_code.tools.lsp.spawn import ServerStarter, kill_group

CLOSE_GRACE = 0.5
"""Seconds a server is given to shut down when di-code closes it."""
MAX_OPEN = 3
"""Documents kept open per server (those last changed)."""
MAX_ASKS = 3
"""Asks for diagnostics a server may leave unanswered at once: beyond, it is only listened to
until it answers one (each unanswered ask is held until the server ends, and a server that
takes the request but never answers would otherwise be one more per edit)."""
MAX_UNOPENED = 1000
"""Files never sent whose published problems are kept per server, those published last: a
server naming new files at every change would otherwise grow them for the whole session."""
logging.getLogger("pygls").addHandler(logging.NullHandler())
"""pygls logs what a server does oddly; without a handler Python would print it on stderr,
over di-code's own output."""


class StartFailed(DiCodeError):
    """The server did not start or did not answer initialize in time (a one-line reason)."""


class ServerEnded(DiCodeError):
    """The server ended (exited, or its output could not be read on) before it answered."""


class Connection:
    """A started, initialized server for one workspace root."""

    def __init__(
        self, spec: ServerSpec, root: Path, starter: ServerStarter, workspace: Path
    ) -> None:
        self.spec, self.root, self._starter, self._workspace = spec, root, starter, workspace
        self.client = LanguageClient("di-code", "0.1.0", converter_factory=converter)
        self.capabilities: types.ServerCapabilities | None = None
        self.diagnostics: dict[str, tuple[int | None, list[types.Diagnostic]]] = {}
        self.versions: dict[str, int] = {}
        self.texts: dict[str, str] = {}
        """The text last sent of each document."""
        self.open: dict[str, None] = {}
        """The open documents, the least recently changed first."""
        self.closed: dict[str, list[types.Diagnostic]] = {}
        """The last diagnostics of documents closed since."""
        self.unopened: dict[str, None] = {}
        """Files with diagnostics that were never sent, the least recently published first."""
        self._published = asyncio.Condition()
        self._waking: set[asyncio.Task[None]] = set()
        """Wake-ups of those waiting for diagnostics, kept until they run."""
        self._stop = threading.Event()
        self._process: asyncio.subprocess.Process | None = None
        self._tasks: list[asyncio.Task[Any]] = []
        self._reading: asyncio.Task[None] | None = None
        """The reading of the server's output (frames.read_messages): done when it ended."""
        self.note: Callable[[str], None] = lambda text: None
        """Where what the model should hear once is said (the manager's notes)."""
        self._said_unreadable = False
        self.pulls = True
        """Whether to ask for a changed document's diagnostics (until the server answers that
        it has no such method: then it is only listened to)."""
        self._pulling: set[asyncio.Task[None]] = set()
        """Asks not answered yet: left to end (an answer to a cancelled request would reach
        pygls as one it cannot take), cancelled when the server is killed."""
        self._answer_server_requests()

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.returncode is None

    async def start(self) -> None:
        """Start the program and initialize it; StartFailed (and nothing left running) when
        it cannot start or does not answer within the spec's startup timeout."""
        try:
            self._process = await self._starter.start(
                self.spec.name, self.spec.command, self.root, self._workspace
            )
        except OSError as exc:
            raise StartFailed(f"cannot start {self.spec.command[0]}: {exc.strerror}") from None
        assert self._process.stdin is not None and self._process.stdout is not None
        self.client.protocol.set_writer(self._process.stdin)
        reading = read_messages(
            self._process.stdout, self.client.protocol, self._stop, self._unreadable
        )
        self._reading = asyncio.create_task(self._read(reading))
        self._tasks.append(self._reading)
        try:
            result = await self._answer(
                self.client.initialize_async(self._initialize_params()),
                self.spec.startup_timeout,
            )
        except ServerEnded:
            self.kill()
            raise StartFailed("ended before it answered initialize") from None
        except TimeoutError:
            self.kill()
            timeout = f"{self.spec.startup_timeout:g}"
            raise StartFailed(f"did not answer initialize within {timeout} s") from None
        except Exception as exc:
            self.kill()
            raise StartFailed(f"failed to initialize: {one_line(exc)}") from None
        except BaseException:  # cancelled (di-code stopping): nothing is left running
            self.kill()
            raise
        self.capabilities = result.capabilities
        self.client.initialized(types.InitializedParams())

    async def _read(self, reading: Awaitable[None]) -> None:
        """The reading of its messages; a stream it cannot go on reading (a frame cut short,
        over MAX_FRAME, a header line past the reader's limit) ends the server, said once."""
        try:
            await reading
        except Exception as exc:
            self._unreadable(exc)
            self.kill()

    def _unreadable(self, exc: Exception, *_: Any) -> None:
        """A message the server sent that cannot be read: one note, the first time."""
        if not self._said_unreadable:
            self._said_unreadable = True
            self.note(
                f"Language server {self.spec.name} sent a message di-code cannot read "
                f"({one_line(exc)}); it was ignored."
            )

    def _initialize_params(self) -> types.InitializeParams:
        uri = self.root.as_uri()
        text = types.TextDocumentClientCapabilities(
            synchronization=types.TextDocumentSyncClientCapabilities(did_save=True),
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True),
            diagnostic=types.DiagnosticClientCapabilities(dynamic_registration=True),
            definition=types.DefinitionClientCapabilities(link_support=False),
            hover=types.HoverClientCapabilities(
                content_format=[types.MarkupKind.PlainText, types.MarkupKind.Markdown]
            ),
            document_symbol=types.DocumentSymbolClientCapabilities(
                hierarchical_document_symbol_support=True
            ),
        )
        return types.InitializeParams(
            capabilities=types.ClientCapabilities(
                text_document=text,
                workspace=types.WorkspaceClientCapabilities(configuration=True),
            ),
            process_id=None,
            root_uri=uri,
            workspace_folders=[types.WorkspaceFolder(uri=uri, name=self.root.name)],
            initialization_options=dict(self.spec.initialization_options) or None,
        )

    def _answer_server_requests(self) -> None:
        feature: Any = self.client.feature  # pygls's decorator is untyped

        def published(params: types.PublishDiagnosticsParams) -> None:
            """Not a coroutine: pygls keeps the task of each coroutine handler of a
            notification for as long as the server runs (one more per publication)."""
            if params.uri in self.closed:
                return  # a server clears a closed file's list; di-code keeps the last one
            if not self._current(params.uri, params.version):
                return
            self._keep(params.uri, params.version, list(params.diagnostics))
            waking = asyncio.ensure_future(self._wake())
            self._waking.add(waking)
            waking.add_done_callback(self._waking.discard)

        def accepted(params: Any) -> None:
            """Capability registration, progress, log messages: nothing to do."""

        feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)(published)
        feature(types.WORKSPACE_CONFIGURATION)(_answer_settings(self._starter.settings(self.spec)))
        feature(types.CLIENT_REGISTER_CAPABILITY)(accepted)
        feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)(accepted)
        feature(types.WORKSPACE_DIAGNOSTIC_REFRESH)(accepted)
        for method in (types.WINDOW_LOG_MESSAGE, types.WINDOW_SHOW_MESSAGE, types.PROGRESS):
            feature(method)(accepted)

    def _current(self, uri: str, version: int | None) -> bool:
        """Whether a publication for `version` of `uri` may replace what is kept: not one for
        a version di-code never sent (ahead of the last, or of a document it has not opened:
        taken, it would pass for the diagnostics of the next text sent), nor one older than
        those kept (a check of an old text that finished late, after the answer to an ask
        for the new one). A publication without a version is taken as it comes."""
        if version is None:
            return True
        kept = self.diagnostics.get(uri, (None, []))[0]
        return version <= self.versions.get(uri, 0) and (kept is None or version >= kept)

    def _keep(self, uri: str, version: int | None, found: list[types.Diagnostic]) -> None:
        """A publication's problems kept; of files never sent, the MAX_UNOPENED last ones."""
        self.diagnostics[uri] = (version, found)
        if uri in self.versions:
            return
        self.unopened.pop(uri, None)
        self.unopened[uri] = None
        while len(self.unopened) > MAX_UNOPENED:
            oldest = next(iter(self.unopened))
            del self.unopened[oldest]
            del self.diagnostics[oldest]

    def sync(self, path: Path, text: str) -> int:
        """Send the document's whole new text (open it first if needed); its version."""
        uri = path.as_uri()
        version = self.versions.get(uri, 0) + 1
        if uri not in self.open:
            self.closed.pop(uri, None)
            self.unopened.pop(uri, None)
            item = types.TextDocumentItem(
                uri=uri, language_id=self.spec.language_id(path), version=version, text=text
            )
            self.client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))
        else:
            del self.open[uri]  # to the end: the most recently changed
            document = types.VersionedTextDocumentIdentifier(version=version, uri=uri)
            change = types.TextDocumentContentChangeWholeDocument(text=text)
            self.client.text_document_did_change(
                types.DidChangeTextDocumentParams(text_document=document, content_changes=[change])
            )
        self.versions[uri], self.texts[uri] = version, text
        self.open[uri] = None
        while len(self.open) > MAX_OPEN:
            self._close(next(iter(self.open)))
        return version

    def _close(self, uri: str) -> None:
        """Close a document: the server stops checking it again on every change elsewhere
        (with many files open an edit's diagnostics took 3x as long); its last diagnostics
        stay, good as long as the file still holds the text last sent."""
        del self.open[uri]
        self.closed[uri] = self.diagnostics.pop(uri, (None, []))[1]
        document = types.TextDocumentIdentifier(uri=uri)
        self.client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=document)
        )

    def has_open(self, path: Path) -> bool:
        return path.as_uri() in self.open

    def known(self, path: Path, text: str | None) -> list[types.Diagnostic] | None:
        """The document's diagnostics without asking: the last published if it is open, those
        it had when closed if `text` is still the text last sent; else None."""
        uri = path.as_uri()
        if uri in self.open:
            return self.diagnostics.get(uri, (None, []))[1]
        if uri in self.closed and text == self.texts.get(uri):
            return self.closed[uri]
        return None

    async def wait_diagnostics(
        self, path: Path, version: int, since: object, timeout: float
    ) -> list[types.Diagnostic] | None:
        """The diagnostics of `version` of the document, asked for (`_pull`) or published,
        whichever comes first (or, from a server that sends no version, the first published
        after `since`); None when none came in time."""
        uri = path.as_uri()
        if self.pulls and len(self._pulling) < MAX_ASKS:
            pulling = asyncio.create_task(self._pull(uri, version))
            self._pulling.add(pulling)
            pulling.add_done_callback(self._pulling.discard)

        def arrived() -> bool:
            entry = self.diagnostics.get(uri)
            if entry is None or not self.alive:
                return not self.alive
            got, _ = entry
            return (got is not None and got >= version) or (got is None and entry is not since)

        async with self._published:
            try:
                await asyncio.wait_for(self._published.wait_for(arrived), timeout)
            except TimeoutError:
                return None
        entry = self.diagnostics.get(uri)
        return None if entry is None or not self.alive else entry[1]

    async def _pull(self, uri: str, version: int) -> None:
        """Ask for the document's diagnostics (textDocument/diagnostic, LSP 3.17); the answer
        counts as their publication for `version`, the text last sent. A server that would
        publish them only after a pause answers at once (basedpyright waits 250 ms after
        each change before it checks on its own: docs/benchmarks.md)."""
        document = types.TextDocumentIdentifier(uri=uri)
        try:
            report = await self.client.text_document_diagnostic_async(
                types.DocumentDiagnosticParams(text_document=document)
            )
        except JsonRpcMethodNotFound:  # it does not take the request: it publishes
            self.pulls = False
            return
        except JsonRpcException:  # not this time: its publication may still come
            return
        items = getattr(report, "items", None)  # none in an "unchanged" report (never asked)
        if items is None or uri not in self.open or self.versions.get(uri) != version:
            return
        self.diagnostics[uri] = (version, list(items))
        await self._wake()

    def marker(self, path: Path) -> object:
        """What `wait_diagnostics` compares with to see a fresh publication."""
        return self.diagnostics.get(path.as_uri())

    async def request(self, method: str, params: Any, timeout: float = 10.0) -> Any:
        """A request's result; TimeoutError after `timeout` s, ServerEnded as soon as the
        server ends, the server's error raised."""
        return await self._answer(self.client.protocol.send_request_async(method, params), timeout)

    async def _answer(self, reply: Awaitable[Any], timeout: float) -> Any:
        """What `reply` gives, unless the server's output ends first (it exited, or sent what
        cannot be read on: nothing will answer) or `timeout` s pass."""
        assert self._reading is not None  # started
        answer = asyncio.ensure_future(reply)
        try:
            await asyncio.wait(
                (answer, self._reading), timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            if not answer.done():
                answer.cancel()
        if answer.done() and not answer.cancelled():
            return answer.result()
        if self._reading.done():
            raise ServerEnded
        raise TimeoutError

    async def _wake(self) -> None:
        """Whoever waits for diagnostics looks again."""
        async with self._published:
            self._published.notify_all()

    async def wait_exit(self) -> int | None:
        """The server's exit code, once it exits; whoever waits for diagnostics is woken."""
        assert self._process is not None
        code = await self._process.wait()
        await self._wake()
        return code

    async def aclose(self) -> None:
        """shutdown and exit, within CLOSE_GRACE in all; then the group is killed whatever
        it did (a wedged server never holds di-code's exit)."""
        if self.alive:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._goodbye(), CLOSE_GRACE)
        self.kill()

    async def _goodbye(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.wait_exit()

    def kill(self) -> None:
        self._stop.set()
        if self._process is not None:
            kill_group(self._process.pid)
        for task in [*self._tasks, *self._pulling]:
            task.cancel()


def _answer_settings(
    settings: Mapping[str, Any],
) -> Callable[[types.ConfigurationParams], list[Any]]:
    """workspace/configuration: `settings` by section (an untrusted project's pins), nothing
    else beyond the initialization options."""

    def answer(params: types.ConfigurationParams) -> list[Any]:
        return [settings.get(item.section or "") for item in params.items]

    return answer


def one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__
