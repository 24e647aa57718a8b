"""A simulated batch: the real driver (`run_batch`: task file, bounded dispatch, results file,
resume) with each task answered by the faux provider in a worker thread instead of a
`di-code run` process. It shows what the driver itself costs at 10,000 tasks.

    python -m scripts.bench.batch_sim TASKS.jsonl RESULTS.jsonl JOBS

Prints `rss KIB DONE` to stderr every 1,000 results (the driver's resident memory as it goes).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Hashable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

from di_code.ai.providers.faux import FAUX_MODEL, FauxSuccess, create_faux_provider
from di_code.ai.types import Context, TextContent
from di_code.batch.runner import run_batch
from di_code.batch.tasks import Task, read_tasks
from di_code.batch.worker import Live, finish_record

REPORT_EVERY = 1000


def rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def answer(task: Task, live: Live) -> dict[str, Any]:
    """One faux request, streamed through the same stream code the real providers use."""
    faux = create_faux_provider([FauxSuccess([TextContent(f"answer to {task.id}")])])

    async def request() -> str:
        return (await faux.provider.stream(FAUX_MODEL, Context(None, [])).result()).text

    text = asyncio.run(request())
    live.turns = 1
    record = {"id": task.id, "status": "done", "repo": task.repo, "answer": text}
    return finish_record(record, live, error=None)


class FauxPool:
    def __init__(self, executor: ThreadPoolExecutor) -> None:
        self._executor = executor

    def submit(self, task: Task, live: Live) -> Future[dict[str, Any]]:
        return self._executor.submit(answer, task, live)

    def ready(self, handles: Sequence[Any], timeout: float) -> list[Hashable]:
        return list(wait(handles, timeout=timeout, return_when=FIRST_COMPLETED)[0])

    def result(self, handle: Any, task: Task, live: Live) -> dict[str, Any]:
        record: dict[str, Any] = handle.result()
        return record

    def cancel(self, handles: Sequence[Hashable]) -> None:
        pass


class MemoryReporter:
    def __init__(self) -> None:
        self.done = 0

    def begin(self, total: int, skipped: int) -> None:
        print(f"begin {total} {skipped} rss {rss_kib()}", file=sys.stderr, flush=True)

    def started(self, task: Task) -> None:
        pass

    def finished(self, record: dict[str, Any]) -> None:
        self.done += 1
        if self.done % REPORT_EVERY == 0:
            print(f"rss {rss_kib()} {self.done}", file=sys.stderr, flush=True)

    def tick(self, running: dict[str, Live]) -> None:
        pass

    def end(self, counts: dict[str, int], stopped_by: str | None) -> None:
        print(f"end rss {rss_kib()}", file=sys.stderr, flush=True)


def main() -> int:
    tasks_path, results_path, jobs = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    tasks = read_tasks(tasks_path)
    with ThreadPoolExecutor(jobs) as executor:
        return run_batch(tasks, results_path, FauxPool(executor), jobs, MemoryReporter(), False)


if __name__ == "__main__":
    raise SystemExit(main())
