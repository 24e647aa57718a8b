"""Chat's built-in `/review [--base BRANCH | --commit SHA]`: one prompt in which the model
reads the diff (di_code.session.review_diff) and the files around it and reports findings
(di_code.setup.review), reading only.

For that prompt the session is in read-only mode: the model is offered only the reading
tools, and the permission gate refuses any other call it makes anyway; the mode the session
had comes back when the review ends, however it ends. A `/review` command file of
the user's own is used instead of this (di_code.ui.slash_commands).
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
from collections.abc import Iterator
from typing import TYPE_CHECKING

from rich.text import Text

from di_code.session import prompt_with_compaction
from di_code.session.review_diff import ReviewError, ReviewTarget, read_diff
from di_code.setup.review import review_prompt
from di_code.system.safe_text import visible
from di_code.tools.policy.modes import offered_tools
from di_code.ui.command_lines import fail, say

if TYPE_CHECKING:
    from di_code.system.abort import AbortController
    from di_code.ui.chat_view import ChatView

USAGE = "Usage: /review [--base BRANCH | --commit SHA]"


def parse_target(arg: str) -> ReviewTarget:
    """`--base BRANCH`, `--commit SHA` or nothing (the uncommitted changes); ValueError."""
    try:
        words = shlex.split(arg)
    except ValueError:
        raise ValueError(USAGE) from None
    match words:
        case []:
            return ReviewTarget()
        case ["--base", ref]:
            return ReviewTarget("base", ref)
        case ["--commit", ref]:
            return ReviewTarget("commit", ref)
    raise ValueError(USAGE)


async def review_command(repl: ChatView, arg: str) -> bool:
    target = parse_target(arg)
    try:  # git, off the loop: Esc and the screen stay live
        diff = await asyncio.to_thread(read_diff, repl.setup.workspace, target)
    except ReviewError as exc:
        return fail(repl, f"/review: {exc}")
    if diff.empty:
        return say(repl, f"Nothing to review: {diff.target.nothing()}.")
    if diff.left_out:
        repl.console.print(Text(f"! {visible(diff.left_out)}", style="yellow"), soft_wrap=True)
    prompt = review_prompt(diff)
    repl.renderer.echo_next = f"review {diff.target.describe()}"

    async def work(controller: AbortController) -> None:
        with reading_only(repl):
            await prompt_with_compaction(
                repl.agent, prompt, repl.setup.session, signal=controller.signal
            )

    repl.start(work)
    return True


@contextlib.contextmanager
def reading_only(repl: ChatView) -> Iterator[None]:
    """The session in read-only mode for a while: each request offers only the reading tools
    (the agent's `offer`), and the gate refuses any other call; then the mode it had."""
    agent, gate = repl.agent, repl.setup.gate
    offer, mode = agent.offer, gate.mode if gate is not None else None
    agent.offer = lambda tools: offered_tools(tools, "read-only")
    if gate is not None:
        gate.mode = "read-only"
    repl.invalidate()
    try:
        yield
    finally:
        agent.offer = offer
        if gate is not None and mode is not None:
            gate.mode = mode
        repl.invalidate()
