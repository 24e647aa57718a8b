"""The one manager of language servers: a server starts on the first file of its language, one
per (server, workspace root), through the launcher (its sandbox: di_code.tools.lsp.spawn);
it is restarted after a crash with back-off (1, 2, 4 … 60 s; after five crashes, a failed
restart counting as one, it stays down); a start that fails or hangs is said once and the
tools go on without it; in an untrusted project a preset that would run the project's code
waits for trust. Nothing here blocks the event loop: files are read in a thread, every wait
is bounded and ends when the turn's signal fires (`abortable`). pygls is imported on the
first start, off the loop (di_code.system.first_use).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from msgspec import Struct, field

from di_code.system.abort import AbortSignal
from di_code.system.errors import DiCodeError
from di_code.system.files.opener import read_path
from di_code.system.first_use import import_off_loop
from di_code.tools.lsp.report import Problem, problem, serious
from di_code.tools.lsp.servers import UNTRUSTED, Catalog, ServerSpec, workspace_root
from di_code.tools.lsp.spawn import ServerStarter

if TYPE_CHECKING:
    from di_code.tools.builtin.support.editor_files import EditorFiles
    from di_code.tools.lsp.connection import Connection

DIAGNOSTICS_WAIT = 2.0
"""Seconds an edit's result waits for a server's diagnostics of the new text."""
FIRST_WAIT = 10.0
"""Seconds to wait for the diagnostics of a file a server has not seen (it may be reading
the project first); without them, the file's old problems would count as new."""
MAX_FILE = 2_000_000
"""A file larger than this (bytes) is not sent to a server."""
MAX_CRASHES = 5
"""Crashes (a restart that fails is one) after which a server stays down: it is started at
most this many times."""
FIRST_RETRY = 1.0


T = TypeVar("T")


class Stopped(DiCodeError):
    """The turn's signal fired while a server was being waited for."""


async def abortable(work: Awaitable[T], signal: AbortSignal | None) -> T:
    """`work`'s result, unless the turn's signal fires first: then `work` is cancelled (a
    server's start goes on, shielded, for the next call) and Stopped raised at once. Every
    wait on a server (its start, a request, diagnostics) goes through here."""
    if signal is None:
        return await work
    task = asyncio.ensure_future(work)
    stop = asyncio.ensure_future(signal.wait())
    try:
        await asyncio.wait({task, stop}, return_when=asyncio.FIRST_COMPLETED)
    except BaseException:
        task.cancel()
        raise
    finally:
        stop.cancel()
    if not task.done():
        task.cancel()
        raise Stopped
    return task.result()


class Slot(Struct):
    spec: ServerSpec
    root: Path
    connection: Connection | None = None
    state: str = "starting"
    reason: str = ""
    crashes: int = 0
    retry_at: float = 0.0
    starting: asyncio.Task[Connection | None] | None = None
    watch: asyncio.Task[None] | None = None


class LanguageServers(Struct):
    catalog: Catalog
    top: Path
    """The working directory: roots are looked for up to it."""
    wait: float = DIAGNOSTICS_WAIT
    first_retry: float = FIRST_RETRY
    """Seconds before the first restart after a crash (doubled per crash, up to 60)."""
    clock: Callable[[], float] = time.monotonic
    """What the back-off is measured on (a test sets its own, to check it without waiting)."""
    starter: ServerStarter = field(default_factory=ServerStarter)
    """How servers start: sandboxed, without the provider keys (di_code.tools.lsp.spawn)."""
    slots: dict[tuple[str, Path], Slot] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    """What the model has not been told yet (a server that did not start, one that crashed)."""
    warming: asyncio.Task[None] | None = None
    """The servers the workspace needs, being started before any file needs them (`warm`)."""

    def serves(self, path: Path) -> bool:
        return bool(self.catalog.for_path(path))

    async def connections(self, path: Path) -> list[Connection]:
        """The running servers for `path`, started (or restarted) as needed."""
        ready = await asyncio.gather(
            *(self._ready(spec, path) for spec in self.catalog.for_path(path))
        )
        return [c for c in ready if c is not None]

    async def _ready(self, spec: ServerSpec, path: Path) -> Connection | None:
        root = await asyncio.to_thread(workspace_root, path, spec, self.top)
        slot = self.slots.setdefault((spec.name, root), Slot(spec, root))
        if slot.connection is not None and slot.connection.alive:
            return slot.connection
        if slot.starting is None:
            if spec.untrusted == "waits" and not self.starter.trusted:
                self._waits_for_trust(slot)
                return None
            if slot.crashes >= MAX_CRASHES:
                return None  # it stays down
            if slot.state in ("failed", "crashed") and self.clock() < slot.retry_at:
                return None
            if slot.state == "failed" and slot.crashes == 0:
                return None  # a start that failed is not retried in the same session
            slot.state = "starting"
            slot.starting = asyncio.create_task(self._start(slot))
        return await asyncio.shield(slot.starting)

    def warm(self) -> None:
        """Start the servers the workspace needs in the background (a chat, once it opens),
        so the first edit does not wait for a cold one; nothing waits for this. A server
        that waits for trust is left to say so when a file needs it."""
        if self.catalog.servers and self.warming is None:
            self.warming = asyncio.create_task(self._warm_up())

    async def _warm_up(self) -> None:
        from di_code.tools.lsp.warm import first_files

        specs = [
            spec
            for spec in self.catalog.servers
            if spec.untrusted != "waits" or self.starter.trusted
        ]
        found = await asyncio.to_thread(first_files, self.top, specs)
        by_name = {spec.name: spec for spec in specs}
        starts = (self._ready(by_name[name], path) for name, path in found.items())
        await asyncio.gather(*starts, return_exceptions=True)  # a failure is said at its use

    def _waits_for_trust(self, slot: Slot) -> None:
        """A server that would run the project's programs: said once, not started."""
        if slot.state != "untrusted":
            slot.state, slot.reason = "untrusted", "starts once you trust the project"
            self.notes.append(
                f"Language server {slot.spec.name} {slot.reason} (di-code trust); "
                "going on without it."
            )

    async def _start(self, slot: Slot) -> Connection | None:
        await import_off_loop("di_code.tools.lsp.connection")
        from di_code.tools.lsp.connection import Connection, StartFailed

        # made on a thread: the first one makes the converter (di_code.tools.lsp.converter)
        connection = await asyncio.to_thread(
            Connection, slot.spec, slot.root, self.starter, self.top
        )
        connection.note = self.notes.append
        try:
            await connection.start()
        except StartFailed as exc:
            slot.state, slot.reason, slot.starting = "failed", str(exc), None
            if slot.crashes:  # a restart that fails counts as one more crash
                slot.crashes += 1
            if slot.crashes >= MAX_CRASHES:
                slot.reason = f"{exc}; crashed {slot.crashes} times; not restarted"
            slot.retry_at = self.clock() + self._backoff(slot.crashes)
            self.notes.append(
                f"Language server {slot.spec.name} {slot.reason}; going on without it."
            )
            return None
        slot.connection, slot.state, slot.reason, slot.starting = connection, "running", "", None
        slot.watch = asyncio.create_task(self._watch(slot, connection))
        return connection

    async def _watch(self, slot: Slot, connection: Connection) -> None:
        code = await connection.wait_exit()
        if slot.connection is not connection or slot.state == "stopped":
            return
        connection.kill()
        slot.connection = None
        slot.crashes += 1
        if slot.crashes >= MAX_CRASHES:
            slot.state, slot.reason = "failed", f"crashed {slot.crashes} times; not restarted"
        else:
            slot.state, slot.reason = "crashed", f"exited with code {code}; restarts when needed"
        slot.retry_at = self.clock() + self._backoff(slot.crashes)
        self.notes.append(f"Language server {slot.spec.name} {slot.reason}.")

    async def baseline(
        self, path: Path, editor: EditorFiles | None = None
    ) -> dict[Connection, list[Problem] | None]:
        """The problems each server sees in `path` now (before a change): the last ones it
        published, or, for a file it has not seen, those of the file as it is on disk (None
        when they did not come in time). The file is read only when a server has it closed."""
        connections = await self.connections(path)
        opened = all(c.has_open(path) for c in connections)
        text = None if opened else await read_text(path, editor)
        results = await asyncio.gather(*(self._current(c, path, text) for c in connections))
        return dict(zip(connections, results, strict=True))

    async def _current(
        self, connection: Connection, path: Path, text: str | None
    ) -> list[Problem] | None:
        known = connection.known(path, text)
        if known is not None:
            return _problems(connection, known)
        if text is None:
            return []
        return await self._synced(connection, path, text, max(self.wait, FIRST_WAIT))

    async def changed(
        self,
        path: Path,
        before: dict[Connection, list[Problem] | None],
        editor: EditorFiles | None = None,
    ) -> tuple[list[Problem], list[Problem], bool]:
        """(before, after, unsure) over all servers for `path` once its new text is synced
        and each server's diagnostics for it came (or the wait ran out: that server is left
        out); `unsure` when a server's problems before the change are not known, so some of
        `after` may be older than the change."""
        text = await read_text(path, editor)
        if text is None or not before:
            return [], [], False
        live = [c for c in before if c.alive]
        after = await asyncio.gather(*(self._synced(c, path, text, self.wait) for c in live))
        answered = [(c, got) for c, got in zip(live, after, strict=True) if got is not None]
        old = [p for c, _ in answered for p in before[c] or []]
        new = [p for _, got in answered for p in got]
        unsure = any(before[c] is None for c, _ in answered)
        return serious(old), serious(new), unsure

    async def _synced(
        self, connection: Connection, path: Path, text: str, wait: float
    ) -> list[Problem] | None:
        since = connection.marker(path)
        version = connection.sync(path, text)
        got = await connection.wait_diagnostics(path, version, since, wait)
        return None if got is None else _problems(connection, got)

    def _backoff(self, crashes: int) -> float:
        return float(min(60.0, self.first_retry * 2 ** max(0, crashes - 1)))

    def take_notes(self) -> list[str]:
        notes, self.notes = self.notes, []
        return notes

    def running(self) -> list[Connection]:
        return [s.connection for s in self.slots.values() if s.connection and s.connection.alive]

    async def aclose(self) -> None:
        if self.warming is not None:
            self.warming.cancel()
        for slot in self.slots.values():
            slot.state = "stopped"
            if slot.starting is not None:
                slot.starting.cancel()
        await asyncio.gather(*(c.aclose() for c in self.running()), return_exceptions=True)


def _problems(connection: Connection, diagnostics: list[Any]) -> list[Problem]:
    return [problem(d, connection.spec.name) for d in diagnostics]


async def read_text(path: Path, editor: EditorFiles | None = None) -> str | None:
    """The file's text as the tools see it (the editor's buffer under `di-code acp`, else
    the disk, read in a thread); None when it is missing, too big or not text."""
    if editor is None:
        return await asyncio.to_thread(_read, path)
    try:
        text = await editor.read_text(path)
    except OSError:
        return None
    return text if len(text) <= MAX_FILE else None


def _read(path: Path) -> str | None:
    """The file's text, or None when it is missing, too big or not text."""
    try:
        return read_path(path, MAX_FILE).decode("utf-8")
    except (OSError, UnicodeDecodeError):  # FileTooLarge and NotRegularFile are OSErrors
        return None


def status_lines(servers: LanguageServers) -> list[str]:
    """`di-code lsp` and `/lsp`: each server, what it serves, its state per workspace root,
    and each preset whose program is missing with the command that installs it."""
    lines = []
    for spec in servers.catalog.servers:
        serves = " ".join([*spec.extensions, *spec.globs])
        lines.append(f"{spec.name}: {' '.join(spec.command)} ({serves})")
        if not servers.starter.trusted and spec.untrusted != "runs":
            lines.append(f"  in this untrusted project: {UNTRUSTED[spec.untrusted]}")
        slots = [s for s in servers.slots.values() if s.spec.name == spec.name]
        for slot in slots:
            reason = f": {slot.reason}" if slot.reason else ""
            lines.append(f"  {slot.root}: {slot.state}{reason}")
        if not slots:
            lines.append("  not started (starts on the first file it serves)")
    for spec in servers.catalog.missing:
        lines.append(f"{spec.name}: not installed ({spec.command[0]} not on PATH); {spec.install}")
    lines += list(servers.catalog.warnings)
    return lines or ["No language servers configured."]
