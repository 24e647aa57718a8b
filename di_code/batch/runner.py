"""The batch driver: a bounded number of tasks in flight, each result written as it finishes.

The same loop drives local worker threads and a Ray cluster (a `Pool` each). Tasks are handed
out only as slots free up, and a result is written and dropped at once: the driver's memory
does not grow with the batch. SIGINT (Ctrl-C) and SIGTERM stop every running task (their
records say `cancelled`; the next run runs them again) and start no new one; the exit code is
then 128 + the signal's number. A task that finds its machine without the model's key
(KeyMissing), a results file that cannot take a line (ResultsUnwritable, a full disk) or
progress nobody reads any more (OutputClosed: `--events | head`) stops the batch the same way,
and run_batch raises it once at the end.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Hashable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from di_code.batch.key_check import KeyMissing
from di_code.batch.results import (
    FINISHED,
    STATUSES,
    ResultsFile,
    ResultsUnwritable,
    finished_statuses,
)
from di_code.batch.tasks import Task
from di_code.batch.worker import Live, RunSettings, finish_record, run_task, task_record
from di_code.system.errors import DiCodeError
from di_code.system.stop_signals import responding

TICK_SECONDS = 0.25
RETRYABLE = frozenset({"failed", "timeout"})


class Reporter(Protocol):
    """Where the batch's progress goes (a live display, JSON events, plain lines)."""

    def begin(self, total: int, skipped: int) -> None: ...
    def started(self, task: Task) -> None: ...
    def finished(self, record: dict[str, Any]) -> None: ...
    def tick(self, running: dict[str, Live]) -> None: ...
    def end(self, counts: dict[str, int], stopped_by: str | None) -> None: ...


class Pool(Protocol):
    """Where tasks run: `submit` starts one, `ready` says which have ended (waiting at most
    `timeout` seconds), `result` is an ended task's record, `cancel` stops the running ones."""

    def submit(self, task: Task, live: Live) -> Hashable: ...
    def ready(self, handles: Sequence[Hashable], timeout: float) -> list[Hashable]: ...
    def result(self, handle: Hashable, task: Task, live: Live) -> dict[str, Any]: ...
    def cancel(self, handles: Sequence[Hashable]) -> None: ...


class OutputClosed(DiCodeError):
    """The batch's progress could not be written (its reader is gone: `--events | head`)."""


@dataclass(slots=True)
class Stop:
    """Set by a stop signal, or by a failure every task would meet (a missing key, results or
    progress that cannot be written); the workers' processes end when it is set."""

    event: threading.Event = field(default_factory=threading.Event)
    signal_number: int | None = None
    failure: Exception | None = None
    """Raised once the batch has ended, when no signal stopped it."""
    failed_by: str | None = None
    """The `end` event's `stopped_by` for the failure."""

    def __call__(self, number: int, _frame: object = None) -> None:
        self.signal_number = self.signal_number or number
        self.event.set()

    def fail(self, error: Exception, by: str) -> None:
        if self.failure is None:
            self.failure, self.failed_by = error, by
        self.event.set()


def tasks_to_run(tasks: Sequence[Task], results: Path, retry_failed: bool) -> list[Task]:
    """The tasks without a result (and with `--retry failed` the failed and timed-out ones)."""
    statuses = finished_statuses(results)
    rerun = RETRYABLE if retry_failed else frozenset()
    return [t for t in tasks if statuses.get(t.id) not in FINISHED - rerun]


def run_local(
    tasks: Sequence[Task],
    results: Path,
    settings: RunSettings,
    jobs: int,
    reporter: Reporter,
    retry_failed: bool = False,
) -> int:
    """The batch on `jobs` worker threads, each running one task's process at a time."""
    stop = Stop()
    with ThreadPoolExecutor(max(1, jobs), thread_name_prefix="batch-task") as executor:
        pool = LocalPool(executor, settings, stop.event)
        return run_batch(tasks, results, pool, max(1, jobs), reporter, retry_failed, stop)


def run_batch(
    tasks: Sequence[Task],
    results: Path,
    pool: Pool,
    jobs: int,
    reporter: Reporter,
    retry_failed: bool,
    stop: Stop | None = None,
) -> int:
    """Run the tasks that need running; 0 when all of them are done, 1 when one failed or
    timed out, 128 + N when signal N stopped the batch; else the failure that stopped it."""
    stop = stop or Stop()
    out = ResultsFile(results)  # locked first: what is done is read under the lock
    pending = tasks_to_run(tasks, results, retry_failed)
    say = _Saying(reporter, stop)
    say(reporter.begin, len(pending), len(tasks) - len(pending))
    counts = dict.fromkeys(STATUSES, 0)
    try:
        with responding(stop):
            _drive(iter(pending), pool, jobs, stop, say, out, counts)
    finally:
        out.close()
    stopped = signal.Signals(stop.signal_number).name if stop.signal_number else stop.failed_by
    say(reporter.end, counts, stopped)
    if stop.signal_number:
        return 128 + stop.signal_number
    if stop.failure is not None:
        raise stop.failure
    return 1 if counts["failed"] or counts["timeout"] else 0


class _Saying:
    """Calls the reporter; progress that cannot be written (a closed stdout) stops the batch
    as Ctrl-C does, and nothing more is said there."""

    def __init__(self, reporter: Reporter, stop: Stop) -> None:
        self.reporter, self._stop, self._closed = reporter, stop, False

    def __call__(self, report: Callable[..., None], *args: Any) -> None:
        if self._closed:
            return
        try:
            report(*args)
        except OSError as exc:
            self._closed = True
            closed = OutputClosed(f"cannot write the batch's progress: {exc.strerror or exc}")
            self._stop.fail(closed, "output closed")


def _drive(
    pending: Iterator[Task],
    pool: Pool,
    jobs: int,
    stop: Stop,
    say: _Saying,
    out: ResultsFile,
    counts: dict[str, int],
) -> None:
    running: dict[Hashable, tuple[Task, Live]] = {}
    cancelled = False
    while True:
        while len(running) < jobs and not stop.event.is_set():
            task = next(pending, None)
            if task is None:
                break
            live = Live()
            running[pool.submit(task, live)] = (task, live)
            say(say.reporter.started, task)
        if stop.event.is_set() and not cancelled:
            pool.cancel(list(running))
            cancelled = True
        if not running:
            return
        for handle in pool.ready(list(running), TICK_SECONDS):
            task, live = running.pop(handle)
            try:
                record = pool.result(handle, task, live)
            except KeyMissing as exc:  # it runs again on the next run, once there is a key
                record = finish_record(task_record(task, "cancelled"), live, error=str(exc))
                stop.fail(exc, "missing key")
            try:
                out.append(record)
            except ResultsUnwritable as exc:  # not recorded: the task runs again next time
                stop.fail(exc, "results not written")
                continue
            counts[record["status"]] += 1
            say(say.reporter.finished, record)
        say(say.reporter.tick, {task.id: live for task, live in running.values()})


class LocalPool:
    """Worker threads of this process; each task's own process is started by its thread."""

    def __init__(
        self, executor: ThreadPoolExecutor, settings: RunSettings, stop: threading.Event
    ) -> None:
        self._executor, self._settings, self._stop = executor, settings, stop

    def submit(self, task: Task, live: Live) -> Future[dict[str, Any]]:
        return self._executor.submit(run_task, task, self._settings, self._stop, live)

    def ready(self, handles: Sequence[Any], timeout: float) -> list[Hashable]:
        done, _ = wait(handles, timeout=timeout, return_when=FIRST_COMPLETED)
        return list(done)

    def result(self, handle: Any, task: Task, live: Live) -> dict[str, Any]:
        try:
            record: dict[str, Any] = handle.result()
        except KeyMissing:
            raise
        except Exception as exc:  # a bug in one task's handling: the batch goes on
            failed = task_record(task, "failed")
            return finish_record(failed, live, error=f"internal error: {exc!r}")
        return record

    def cancel(self, handles: Sequence[Hashable]) -> None:
        """Nothing more to do: each worker sees the stop event and ends its task."""
