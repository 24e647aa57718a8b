"""What a resumed conversation says of its background jobs: those it started and never saw
end were running when its di-code stopped, and ended with it (a job never outlives di-code).
The model and the user are told so, never that they run; new jobs are numbered after them."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from di_code.ai.types import Message, TextContent, ToolResultMessage, UserMessage
from di_code.tools.builtin.support.job_table import NOTICE_START, JobTable

_ENDED_NOTICE = re.compile(re.escape(NOTICE_START) + r"(\d+) ")


def left_running(messages: Sequence[Message]) -> tuple[dict[int, str], int]:
    """The jobs (id: command) `messages` started and never saw end, and the highest job id."""
    running: dict[int, str] = {}
    highest = 0
    for message in messages:
        if isinstance(message, ToolResultMessage) and isinstance(message.details, dict):
            job_id, details = message.details.get("job_id"), message.details
            if not isinstance(job_id, int) or isinstance(job_id, bool):
                continue
            highest = max(highest, job_id)
            if message.tool_name == "bash":
                running[job_id] = str(details.get("command", ""))
            elif details.get("running") is False:
                running.pop(job_id, None)
        elif isinstance(message, UserMessage):
            for block in message.content:
                if isinstance(block, TextContent):
                    for ended in _ENDED_NOTICE.finditer(block.text):
                        running.pop(int(ended.group(1)), None)
    return running, highest


def resume(table: JobTable, messages: Sequence[Message]) -> list[str]:
    """Tell `table` (so the model's next request) of the jobs left running; the notices."""
    running, highest = left_running(messages)
    table.continue_after(highest)
    notices = [
        f"{NOTICE_START}{job_id} (`{' '.join(command.split())[:80]}`) was running when the "
        "session stopped; it ended with that di-code. Start it again if it is needed.]"
        for job_id, command in running.items()
    ]
    for notice in notices:
        table.tell(notice)
    return notices


def job_notices(
    jobs: JobTable,
    history: Sequence[Message],
    notify: Callable[[str], None],
    as_they_end: bool = False,
) -> Callable[[], list[UserMessage]]:
    """The agent's notices: the background jobs that ended since the last request, and, once,
    those a resumed conversation left running (the user hears of these now). `as_they_end`:
    the user hears of each job that ends through `notify` too (run's stderr, an editor's
    messages; the chat says it itself)."""
    for notice in resume(jobs, history):
        notify(notice)
    if as_they_end:
        jobs.listeners.append(notify)
    return lambda: [UserMessage.of(text) for text in jobs.take_notices()]
