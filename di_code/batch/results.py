"""RESULTS.jsonl: one line per finished task, appended, flushed and fsynced as each finishes.

A driver killed mid-write leaves at most a last line without its newline: it is not a result
(that task runs again), and the next batch on the file cuts it off before it appends, so the
file is whole JSON lines again. Resume reads only the ids
and statuses, never holds the answers or patches of earlier lines. A line holds no key: it is
written through the one redaction (di_code.ai.redaction), a patch too.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from pathlib import Path
from typing import Any

from di_code.ai.redaction import redact
from di_code.system.errors import DiCodeError

STATUSES = ("done", "failed", "timeout", "cancelled")
STOPPED = "the batch was stopped before the task finished"
"""A cancelled task's `error`."""
FINISHED = frozenset({"done", "failed", "timeout"})
"""A cancelled task (Ctrl-C) did not finish: the next run runs it again."""


def finished_statuses(path: Path) -> dict[str, str]:
    """Each task id with a result in `path`, with its latest status (later lines win)."""
    statuses: dict[str, str] = {}
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        return statuses
    with handle:
        for raw in handle:
            if not raw.endswith(b"\n"):
                break  # cut by a crash: no result
            try:
                record = json.loads(raw)
            except (ValueError, RecursionError):  # not a line of ours
                continue
            if isinstance(record, dict) and isinstance(record.get("id"), str):
                statuses[record["id"]] = str(record.get("status"))
    return statuses


class ResultsBusy(DiCodeError):
    """Another batch is writing the same results file."""

    exit_code = 2


class ResultsUnwritable(DiCodeError):
    """A result line could not be written (a full disk): the batch stops, and the tasks whose
    result is not in the file run again next time."""

    exit_code = 2


class ResultsFile:
    """Appends result lines durably; only the driver's one thread writes. The file is locked
    while the batch runs, so two batches never interleave their lines in one file (the lock
    goes with the driver, however it ends)."""

    def __init__(self, path: Path) -> None:
        self._path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self._fd)
            raise ResultsBusy(f"{path} is being written by another batch") from None
        complete = _complete_length(path)
        if complete < os.fstat(self._fd).st_size:
            os.ftruncate(self._fd, complete)  # a crash's cut line: not a result, its task reruns

    def append(self, record: dict[str, Any]) -> None:
        """One whole line, or ResultsUnwritable and the file as it was (no part of the line)."""
        data = (redact(json.dumps(record, ensure_ascii=False)) + "\n").encode()
        view = memoryview(data)
        size = os.fstat(self._fd).st_size
        try:
            while view:
                view = view[os.write(self._fd, view) :]
            os.fsync(self._fd)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, size)
            raise ResultsUnwritable(f"cannot write {self._path}: {exc.strerror or exc}") from None

    def close(self) -> None:
        os.close(self._fd)


def _complete_length(path: Path, chunk: int = 65536) -> int:
    """The file's length up to and including its last newline."""
    with path.open("rb") as handle:
        end = handle.seek(0, os.SEEK_END)
        while end > 0:
            start = max(0, end - chunk)
            handle.seek(start)
            newline = handle.read(end - start).rfind(b"\n")
            if newline >= 0:
                return start + newline + 1
            end = start
        return 0
