"""How a batch shows its progress: JSON events (`--events`), a live Rich display on a
terminal, or a plain line per finished task (a log)."""

from __future__ import annotations

import json
import sys
import time
from typing import IO, Any, TextIO

from di_code.batch.results import STATUSES
from di_code.batch.tasks import Task
from di_code.batch.worker import Live


class EventsReporter:
    """One JSON object a line on stdout: begin, start, finish (the result without its patch
    and answer: those are in RESULTS.jsonl), end."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream or sys.stdout

    def _emit(self, event: str, **fields: Any) -> None:
        self._stream.write(json.dumps({"event": event, "time": time.time(), **fields}) + "\n")
        self._stream.flush()

    def begin(self, total: int, skipped: int) -> None:
        self._emit("begin", tasks=total, skipped=skipped)

    def started(self, task: Task) -> None:
        self._emit("start", id=task.id)

    def finished(self, record: dict[str, Any]) -> None:
        shown = {k: v for k, v in record.items() if k not in ("patch", "patch_base64", "answer")}
        self._emit("finish", **shown)

    def tick(self, running: dict[str, Live]) -> None:
        pass

    def end(self, counts: dict[str, int], stopped_by: str | None) -> None:
        self._emit("end", **counts, stopped_by=stopped_by)


def finish_line(record: dict[str, Any]) -> str:
    why = f": {record['error']}" if record.get("error") else ""
    passed = record.get("passed")
    check = "" if passed is None else f", check {'passed' if passed else 'failed'}"
    return f"{record['id']} {record['status']} in {record['duration']:.1f} s{check}{why}"


class LineReporter:
    """A line per finished task on stderr: what a log or CI shows; the last line counts the
    statuses, and the checks that passed of those that ran."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        self._stream = stream or sys.stderr
        self._checks: list[bool] = []

    def _line(self, text: str) -> None:
        self._stream.write(f"di-code batch: {text}\n")
        self._stream.flush()

    def begin(self, total: int, skipped: int) -> None:
        already = f", {skipped} already have a result" if skipped else ""
        self._line(f"{total} task{'' if total == 1 else 's'} to run{already}")

    def started(self, task: Task) -> None:
        pass

    def finished(self, record: dict[str, Any]) -> None:
        self._count_check(record)
        self._line(finish_line(record))

    def _count_check(self, record: dict[str, Any]) -> None:
        if record.get("passed") is not None:
            self._checks.append(bool(record["passed"]))

    def tick(self, running: dict[str, Live]) -> None:
        pass

    def end(self, counts: dict[str, int], stopped_by: str | None) -> None:
        summary = ", ".join(f"{count} {status}" for status, count in counts.items() if count)
        stopped = f" (stopped by {stopped_by})" if stopped_by else ""
        checks = self._checks
        passed = f"; checks: {sum(checks)} of {len(checks)} passed" if checks else ""
        self._line(f"{summary or 'nothing ran'}{passed}{stopped}")


class LiveReporter(LineReporter):
    """On a terminal: the finished lines scroll above a live table of the running tasks with
    their elapsed time, turns, tokens and cost so far, and the counts."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.live import Live as RichLive

        self._console = Console(stderr=True)
        super().__init__(self._console.file)
        self._counts = dict.fromkeys(STATUSES, 0)
        self._total = 0
        self._live = RichLive(console=self._console, auto_refresh=False, transient=True)

    def begin(self, total: int, skipped: int) -> None:
        self._total = total
        super().begin(total, skipped)
        self._live.start()

    def finished(self, record: dict[str, Any]) -> None:
        self._counts[record["status"]] += 1
        self._count_check(record)
        self._console.print(finish_line(record), markup=False, highlight=False)

    def tick(self, running: dict[str, Live]) -> None:
        from rich.table import Table

        table = Table.grid(padding=(0, 2))
        finished = sum(self._counts.values())
        counts = ", ".join(f"{n} {status}" for status, n in self._counts.items() if n)
        table.add_row(f"{finished}/{self._total} finished", counts, f"{len(running)} running")
        now = time.monotonic()
        for task_id, live in sorted(running.items()):
            table.add_row(
                task_id,
                f"{now - live.started:.0f} s, {live.turns} turn{'' if live.turns == 1 else 's'}",
                f"{live.tokens} tokens, ${live.cost:.4f}",
            )
        self._live.update(table, refresh=True)

    def end(self, counts: dict[str, int], stopped_by: str | None) -> None:
        self._live.stop()
        super().end(counts, stopped_by)
