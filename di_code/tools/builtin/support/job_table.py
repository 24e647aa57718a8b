"""A session's background jobs, by id: what the job tools, `/jobs`, the chat's bottom line and
the model's next request read. Kept apart from the code that runs jobs (`jobs.py`) so that the
bash policy holds one from start-up without loading the process machinery.

A job that ends on its own (not by job_kill, /jobs or di-code's exit) leaves one notice: the
model is told at its next request (`take_notices`, drained once) and each listener (the chat)
hears it once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Protocol


class TableJob(Protocol):
    """What the table needs of a job (`jobs.Job`; named so, the table does not import it)."""

    id: int

    @property
    def running(self) -> bool: ...

    async def kill(self, reason: Any = "killed") -> None: ...


NOTICE_START = "[Background job "
"""How every notice begins: the chat knows them (shown when they happen, not again when they
are sent), and a resumed conversation's jobs that ended are found by it."""
MAX_RUNNING = 32
"""Jobs running at once; one more is refused (the model is told to stop one)."""


class JobTable:
    def __init__(self) -> None:
        self.jobs: dict[int, TableJob] = {}
        self._next = 1
        self._notices: list[tuple[int, str]] = []
        self.listeners: list[Callable[[str], None]] = []
        """Told each notice as it comes (the chat shows it)."""

    def new_id(self) -> int:
        taken, self._next = self._next, self._next + 1
        return taken

    def add(self, job: TableJob) -> None:
        self.jobs[job.id] = job

    def running(self) -> list[TableJob]:
        return [job for job in self.jobs.values() if job.running]

    def continue_after(self, job_id: int) -> None:
        """Number new jobs after `job_id` (a resumed conversation's last)."""
        self._next = max(self._next, job_id + 1)

    def tell(self, notice: str, job_id: int = 0) -> None:
        """A notice (of job `job_id`'s end) for the model's next request and for every
        listener, once."""
        self._notices.append((job_id, notice))
        for listener in list(self.listeners):
            listener(notice)

    def seen_end(self, job_id: int) -> None:
        """The model has read how job `job_id` ended (job_output): no notice needs to say it."""
        self._notices = [(job, text) for job, text in self._notices if job != job_id]

    def take_notices(self) -> list[str]:
        """The notices not yet sent to the model, each given once."""
        taken, self._notices = self._notices, []
        return [text for _, text in taken]

    def status(self) -> str | None:
        """The chat's bottom line part: `jobs: 2 running`, or None without running jobs."""
        count = len(self.running())
        return f"jobs: {count} running" if count else None

    async def stop_all(self) -> None:
        """End every running job's whole tree (the end of `run`, of a chat, of an editor's
        session), all at once: a job that ignores TERM holds the end for its KILL_AFTER, not
        each in turn. di-code's exit does it too (di_code.system.children); this is the orderly
        way."""
        await asyncio.gather(*(job.kill(reason="stopped") for job in self.running()))


def is_job_notice(text: str) -> bool:
    return text.startswith(NOTICE_START)
