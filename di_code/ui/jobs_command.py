"""`/jobs`: the background jobs the model started, each with its state and last lines, and
`/jobs kill N` to stop one (its whole tree, as job_kill does). The chat also says when a job
ends on its own (`watch_jobs`), once, and its bottom line counts the running ones."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.text import Text

from di_code.system.safe_text import visible
from di_code.ui.command_lines import fail, say

if TYPE_CHECKING:
    from di_code.agent.agent import Agent
    from di_code.ai.types import Message
    from di_code.ui.chat_view import ChatView

SHOWN_LINES = 3


async def jobs_command(repl: ChatView, arg: str) -> bool:
    from di_code.tools.builtin.support.job_base import Job

    table = repl.setup.jobs
    jobs = [job for job in (table.jobs.values() if table else ()) if isinstance(job, Job)]
    words = arg.split()
    if not words:
        if not jobs:
            return say(repl, "No background jobs.")
        rows = []
        for job in jobs:
            rows.append(job.title())
            rows += [f"    {line}" for line in job.log.last_lines(SHOWN_LINES)]
        return say(repl, "\n".join([*rows, "(/jobs kill N stops one)"]))
    if words[0] != "kill" or len(words) != 2:
        return fail(repl, "usage: /jobs, or /jobs kill N")
    chosen = next((job for job in jobs if str(job.id) == words[1]), None)
    if chosen is None:
        return fail(repl, f"no background job {words[1]} (/jobs lists them)")
    await chosen.kill()
    repl.invalidate()
    return say(repl, chosen.title())


def watch_jobs(repl: ChatView) -> None:
    """Say each job that ends on its own once, when it ends; redraw the bottom line."""

    def heard(notice: str) -> None:
        repl.console.print(Text(visible(notice), style="dim"))
        repl.invalidate()

    if repl.setup.jobs is not None:
        repl.setup.jobs.listeners.append(heard)


def carry_jobs(repl: ChatView, old: Agent, new: Agent, messages: Sequence[Message]) -> None:
    """/clear, /resume: the new agent hears of the jobs that end, as the old one did; those a
    loaded conversation left running ended (the user is told now, the model with its next
    request)."""
    from di_code.tools.builtin.support.job_history import resume

    new.notices = old.notices
    if messages and repl.setup.jobs is not None:
        for notice in resume(repl.setup.jobs, messages):
            repl.console.print(Text(visible(notice), style="dim"))
