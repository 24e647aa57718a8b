"""Where sessions live: `<home>/sessions/<workspace-slug>/<time>_<id>.jsonl`.

The slug is the workspace path made file-name safe plus a short hash of it, so two folders
whose paths differ only in punctuation never share a folder. File names start with the UTC
creation time, so they sort by age; "latest" means the most recently written.
"""

from __future__ import annotations

import builtins
import hashlib
import json
import os
import re
import stat
import uuid
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

import msgspec

from di_code.ai.codec import message_from_dict
from di_code.ai.types import Clock, TextContent, UserMessage, now_ms
from di_code.session import jsonl
from di_code.session.format import SessionError, SessionHeader, header_from_dict, migrate
from di_code.session.holder import SessionHold
from di_code.session.session import Session

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_MESSAGE_LINE = b'{"type":"message"'
"""How every message entry line starts, as `jsonl.encode` writes it."""
NUMBERED = 10
"""How many of a folder's newest readable sessions `/resume N` and `export N` number."""


class SessionSummary(msgspec.Struct, frozen=True):
    """One line of a session list (`/resume`)."""

    id: str
    path: Path
    cwd: str
    """The folder the session works in."""
    first_prompt: str
    modified: float
    """Seconds since the epoch (the file's mtime)."""
    size: int
    """Bytes."""
    message_count: int


def workspace_slug(cwd: Path) -> str:
    resolved = str(cwd.resolve())
    readable = _UNSAFE.sub("-", resolved).strip("-")[-60:] or "root"
    digest = hashlib.sha256(os.fsencode(resolved)).hexdigest()[:8]  # a name not UTF-8 too
    return f"{readable}-{digest}"


class SessionStore:
    def __init__(self, home: Path, *, now: Clock = now_ms) -> None:
        self.root = home / "sessions"
        self._now = now

    def directory(self, cwd: Path) -> Path:
        return self.root / workspace_slug(cwd)

    def create(self, cwd: Path, origin: str | None = None) -> Session:
        """A new session; its file appears with the first entry. `origin` names the command
        that started it."""
        timestamp = self._now()
        session_id = uuid.uuid4().hex
        stamp = datetime.fromtimestamp(timestamp / 1000, UTC).strftime("%Y-%m-%dT%H-%M-%S-%f")
        path = self.directory(cwd) / f"{stamp}Z_{session_id}.jsonl"
        header = SessionHeader(session_id, str(cwd.resolve()), timestamp, origin=origin)
        return Session(path, header, now=self._now)

    def open(self, path: Path, cwd: Path, *, write: bool = True) -> Session:
        """The stored session at `path`, to go on with in the folder `cwd`.

        The one way to a stored session: the tools work in `cwd`, its checkpoints and undo
        in the folder it records, so one of another folder is refused (the two would split:
        an undo would rewrite files in one project and leave the other's changes). To write
        (`write`), this process holds it first: a session another process (or this one)
        holds is refused with one line (SessionBusy, see holder.py)."""
        check_folder(path, cwd)
        held = _held(path) if write else None
        try:
            session = Session.load(path, now=self._now, held=held)
            check_folder(path, cwd, session.cwd)
            _named(session)
        except BaseException:
            if held is not None:
                held.release()
            raise
        return session

    def latest(self, cwd: Path, origin: str | None = None, *, write: bool = True) -> Session | None:
        """The most recently written session of this workspace (`--continue`); with `origin`,
        the newest one not started by another command (older files name none)."""
        for path in self._files(self.directory(cwd)):
            if origin is None or _origin(path) in (origin, None):
                return self.open(path, cwd, write=write)
        return None

    def find(self, id_or_prefix: str, cwd: Path, *, write: bool = True) -> Session:
        """A session of this workspace by id or unambiguous id prefix."""
        return self.open(self.locate(id_or_prefix, cwd), cwd, write=write)

    def locate(self, id_or_prefix: str, cwd: Path) -> Path:
        """The file of a session by id or unambiguous id prefix, read no further than its
        name: this workspace first, then any (so that `open` can say where it belongs)."""
        wanted = id_or_prefix.strip().lower()
        if not wanted:
            raise SessionError("No session id given.")
        for files in (self._files(self.directory(cwd)), self._all_files()):
            matches = [path for path in files if session_id_of(path).startswith(wanted)]
            exact = [path for path in matches if session_id_of(path) == wanted]
            if exact or len(matches) == 1:
                return (exact or matches)[0]
            if matches:
                shown = ", ".join(session_id_of(path)[:12] for path in matches[:5])
                raise SessionError(
                    f'Session id "{id_or_prefix}" is ambiguous: it matches {len(matches)} '
                    f"sessions ({shown}). Give more characters."
                )
        raise SessionError(f'No session matches "{id_or_prefix}".')

    def list(self, cwd: Path, limit: int = 20) -> list[SessionSummary]:
        """The newest sessions of this workspace; unreadable files are left out."""
        return summaries(self._files(self.directory(cwd)), limit)

    def newest(self, cwd: Path | None) -> builtins.list[tuple[int, Path]]:
        """The session files of one workspace, or of all (None), the most recently written
        first, each with its time of writing (ns)."""
        if cwd is not None:
            return self._stamped(self.directory(cwd))
        folders = [p for p in self.root.iterdir() if p.is_dir()] if self.root.is_dir() else []
        stamped = (item for folder in folders for item in self._stamped(folder))
        return sorted(stamped, key=_newest_first, reverse=True)

    def _all_files(self) -> builtins.list[Path]:
        if not self.root.is_dir():
            return []
        return sorted(path for path in self.root.glob("*/*.jsonl") if _regular(path))

    @classmethod
    def _files(cls, directory: Path) -> builtins.list[Path]:
        """Session files, the most recently written first."""
        return [path for _, path in cls._stamped(directory)]

    @staticmethod
    def _stamped(directory: Path) -> builtins.list[tuple[int, Path]]:
        if not directory.is_dir():
            return []
        stamped = []
        for path in directory.glob("*.jsonl"):
            try:
                status = path.stat()
            except OSError:
                continue
            if stat.S_ISREG(status.st_mode):
                stamped.append((status.st_mtime_ns, path))
        return sorted(stamped, key=_newest_first, reverse=True)


def _held(path: Path) -> SessionHold:
    """The hold on the session at `path`, taken before it is read: what is loaded is then
    what no one else appends to."""
    if not path.is_file():
        raise SessionError(f"{path.name}: no such session file")
    return SessionHold(session_id_of(path)).take(path)


def _named(session: Session) -> None:
    """Give the session the id its file name says, as finding, holding, listing and deleting
    it do: a file copied by hand under a new name (a fork) keeps the original's id in its
    header, and would otherwise be loaded, and keep its undo refs, as the original."""
    named = session_id_of(session.path)
    if named and named != session.header.id:
        session.header = msgspec.structs.replace(session.header, id=named)


def _regular(path: Path) -> bool:
    """Whether `path` is a regular file: only those are sessions (reading a FIFO named like one
    would wait forever for a writer)."""
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except OSError:
        return False


def _newest_first(item: tuple[int, Path]) -> tuple[int, str]:
    return item[0], item[1].name


def summaries(paths: Iterable[Path], limit: int) -> list[SessionSummary]:
    """The first `limit` of these sessions that can be read; unreadable files are left out."""
    out: list[SessionSummary] = []
    for path in paths:
        if len(out) >= limit:
            break
        try:
            out.append(_summarize(path))
        except (SessionError, OSError, ValueError, IndexError):
            continue
    return out


def session_id_of(path: Path) -> str:
    """The id of the session a file holds, as its name says."""
    return path.stem.partition("_")[2].lower()


def check_folder(path: Path, cwd: Path, folder: str | None = None) -> None:
    """Raise SessionError unless the session at `path` (or its loaded header's `folder`)
    belongs to the folder `cwd`."""
    folder = folder if folder is not None else _header_field(path, "cwd")
    if folder is not None and folder != str(cwd.resolve()):
        raise SessionError(
            f"Session {session_id_of(path)[:12]} belongs to {folder}, not {cwd}: "
            "go on with it from that folder."
        )


def _origin(path: Path) -> str | None:
    """The command that started a session, read from its header line alone."""
    return _header_field(path, "origin")


def _header_field(path: Path, name: str) -> str | None:
    """A field of a session's header, read from its first line alone (None if unreadable:
    the full load then says what is wrong)."""
    try:
        with path.open("rb") as file:
            header = header_from_dict(migrate(json.loads(file.readline(1 << 20)), [])[0])
    except (OSError, ValueError, AttributeError, SessionError, IndexError, RecursionError):
        return None
    value = getattr(header, name)
    return value if isinstance(value, str) else None


def _summarize(path: Path) -> SessionSummary:
    """Read cheaply: count message lines, decode only the header and the first user message."""
    stat = path.stat()
    lines = jsonl.read_lines(path)
    raw = json.loads(lines[0])
    if not isinstance(raw, dict):
        raise SessionError("not a di-code session file")
    header = header_from_dict(migrate(raw, [])[0])
    messages = [line for line in lines[1:] if line.startswith(_MESSAGE_LINE)]
    return SessionSummary(
        id=session_id_of(path) or header.id,
        path=path,
        cwd=header.cwd,
        first_prompt=_first_prompt(messages),
        modified=stat.st_mtime,
        size=stat.st_size,
        message_count=len(messages),
    )


def _first_prompt(lines: builtins.list[bytes]) -> str:
    for line in lines:
        try:
            message = message_from_dict(json.loads(line)["message"])
        except (ValueError, KeyError, TypeError, RecursionError):
            continue
        if isinstance(message, UserMessage):
            text = " ".join(b.text for b in message.content if isinstance(b, TextContent))
            return " ".join(text.split())[:200]
    return ""
