"""`di-code run`: one prompt, its answer in the chosen format, an exit code.

Exit codes: 0 the answer came; 1 the run ended in error (or was aborted other than by a
signal); 2 usage or configuration error (raised as ConfigError, handled by the app); 128 + the
signal's number when stopped by one: 130 Ctrl-C (SIGINT), 143 SIGTERM (a CI `timeout`), 129
SIGHUP (a closed terminal); 141 (128 + SIGPIPE, quietly) when stdout's reader is gone
(`| head`). Each aborts the agent's signal, which kills the running tool's process group,
and the aborted message is saved; the process groups bash started (background jobs) are
stopped at exit. A signal before or after the prompt, a second one within 2 s, or
one the loop does not act on within 1 s ends the process at once (di_code.system.stop_signals).
"""

from __future__ import annotations

import contextlib
import signal
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from di_code.agent.events import AgentEvent, ToolExecutionEndEvent
from di_code.agent.prompt_hooks import PromptBlocked
from di_code.ai.reply_notes import cut_reply_note
from di_code.ai.types import AssistantMessage
from di_code.cli.approval import terminal_approver
from di_code.cli.output import (
    OUTPUT_FORMATS,
    OutputFormat,
    RunTally,
    Writer,
    event_line,
    notify_stderr,
    result_line,
    sanitized,
)
from di_code.cli.prompt_input import UsageError, read_prompt
from di_code.session import CompactionError, CompactionResult, prompt_with_compaction
from di_code.setup.flags import CliOptions
from di_code.setup.prepare import close_prepared, prepare
from di_code.setup.session_events import session_ended, session_started
from di_code.system import left_behind
from di_code.system.abort import AbortController
from di_code.system.stop_signals import (
    OUTPUT_CLOSED,
    STOP_SIGNALS,
    reader_watched,
    responding,
    say,
)

if TYPE_CHECKING:
    from di_code.setup.prepared import Prepared
    from di_code.tools.policy.permissions import Approver
    from di_code.ui.render import Renderer

EXIT_OK, EXIT_ERROR = 0, 1
Finish = Callable[[AssistantMessage, RunTally, str | None, Writer], int]
"""What a command other than `run` makes of the final answer (review's findings): it writes
the output and returns the exit code."""


def run_command(
    prompt: str | None, output_format: str, options: CliOptions, images: tuple[str, ...] = ()
) -> int:
    if output_format not in OUTPUT_FORMATS:
        raise UsageError(f"--output-format must be one of {', '.join(OUTPUT_FORMATS)}")
    argument = expand_command(prompt) if prompt is not None else None
    text = read_prompt(argument, sys.stdin)
    terminal = _terminal_parts(output_format)  # before the loop: Rich's import
    return left_behind.run(_run(text, output_format, options, images, terminal))


def run_prompt(
    prompt: str, fmt: OutputFormat, options: CliOptions, finish: Finish | None = None
) -> int:
    """`run`'s path for a prompt another command made (review's), with its own end."""
    return left_behind.run(_run(prompt, fmt, options, (), _terminal_parts(fmt), finish))


def expand_command(prompt: str) -> str:
    """`/NAME args` becomes the user's command template NAME filled with args (piped stdin is
    appended after it); any other prompt, and a `/path` that names no command, is kept."""
    if not prompt.startswith("/"):
        return prompt
    from pathlib import Path

    from di_code.config.custom_commands import load_commands
    from di_code.config.settings import di_code_home

    commands = load_commands(di_code_home(), Path.cwd())
    for warning in commands.warnings:  # a skipped file may be the command meant
        notify_stderr(warning)
    expanded = commands.expand_prompt(prompt)
    return prompt if expanded is None else expanded


async def _run(
    prompt: str,
    fmt: OutputFormat,
    options: CliOptions,
    images: tuple[str, ...],
    terminal: tuple[Approver | None, Renderer | None],
    finish: Finish | None = None,
) -> int:
    from di_code.tools.builtin.support.attachments import prompt_content

    approver, progress = terminal
    prepared = await prepare(options, approver=approver, notify=notify_stderr)
    out = Writer(sys.stdout)
    tally = RunTally(prepared.agent.budget)
    prepared.agent.subscribe(tally)
    _attach_progress(prepared, fmt, out, progress)
    controller = AbortController()
    stopped_by: list[int] = []

    def stop(number: int) -> None:
        stopped_by.append(number)
        controller.abort(STOP_SIGNALS.get(signal.Signals(number), "output closed"))

    try:
        with responding(stop), reader_watched():
            await session_started(prepared, options.session_source)
            final = await prompt_with_compaction(
                prepared.agent,
                prompt_content(prompt, prepared.workspace, prepared.agent.model, images),
                prepared.session,
                signal=controller.signal,
                on_compaction=_report_compaction,
            )
    except PromptBlocked as exc:  # a UserPromptSubmit hook: nothing was sent
        notify_stderr(str(exc))
        return EXIT_ERROR
    finally:
        await session_ended(prepared, "other")
        await close_prepared(prepared, prepared.agent.provider, notify_stderr)
    session_id = prepared.session.id if prepared.session else None
    plan = prepared.gate.presented if prepared.gate and prepared.gate.mode == "plan" else None
    if stopped_by[0:1] == [OUTPUT_CLOSED]:  # nothing to say, and nowhere to write the result
        return 128 + OUTPUT_CLOSED
    if stopped_by:
        with contextlib.suppress(OSError):  # after SIGHUP the terminal may be gone
            if fmt == "text":
                say(stopped_by[0])
            else:
                out.line(result_line(final, tally, session_id))
        return 128 + stopped_by[0]
    code = (finish or _answer_printer(fmt, plan))(final, tally, session_id, out)
    unsaved = prepared.session is not None and prepared.session.write_error is not None
    return EXIT_ERROR if unsaved else code


def _answer_printer(fmt: OutputFormat, plan: str | None) -> Finish:
    """`run`'s own end: the answer as text, or the result object (with plan mode's plan)."""

    def finish(
        final: AssistantMessage, tally: RunTally, session_id: str | None, out: Writer
    ) -> int:
        if fmt == "text":
            _print_text(final, out, Writer(sys.stderr), plan)
        else:
            out.line(result_line(final, tally, session_id, plan))
        return EXIT_ERROR if final.stop_reason in ("error", "aborted") else EXIT_OK

    return finish


def _report_compaction(outcome: CompactionResult | CompactionError) -> None:
    if isinstance(outcome, CompactionError):
        notify_stderr(f"compaction failed: {outcome}")
    else:
        notify_stderr(f"compacted the conversation ({outcome.tokens_before} tokens before)")


def _terminal_parts(fmt: OutputFormat) -> tuple[Approver | None, Renderer | None]:
    """The text format's question on the terminal (when there is one to ask on) and its
    compact progress on stderr (when stderr is a terminal), made before the event loop runs:
    the progress imports Rich and the renderer, which on the loop would hold it."""
    if fmt != "text":
        return None, None
    approver = terminal_approver()
    if not sys.stderr.isatty():
        return approver, None
    progress = _progress_renderer()
    return (progress.pausing(approver) if approver is not None else None), progress


def _progress_renderer() -> Renderer:
    """The compact progress on stderr (a terminal): one line per tool call, spinners live."""
    from rich.console import Console

    from di_code.ui.render import Renderer

    return Renderer(Console(stderr=True), compact=True)


def _attach_progress(
    prepared: Prepared, fmt: OutputFormat, out: Writer, progress: Renderer | None
) -> None:
    if fmt == "stream-json":

        def stream(event: AgentEvent) -> None:
            out.line(event_line(event))

        prepared.agent.subscribe(stream)
    elif progress is not None:
        progress.model = prepared.agent.model
        prepared.agent.subscribe(progress.handle)
    elif fmt == "text":
        prepared.agent.subscribe(_plan_printer(Writer(sys.stderr)))


def _plan_printer(err: Writer) -> Callable[[AgentEvent], None]:
    """Without the progress panels (stderr is not a terminal), the model's plan is still
    printed on stderr each time it changes: a CI log shows where the work stands."""

    def show(event: AgentEvent) -> None:
        if isinstance(event, ToolExecutionEndEvent) and event.tool_name == "todo":
            result = event.result
            if not result.is_error and result.content:
                err.line(getattr(result.content[0], "text", ""))

    return show


def _print_text(final: AssistantMessage, out: Writer, err: Writer, plan: str | None = None) -> None:
    """The answer on stdout (as it is, unless stdout is a terminal: `Writer`), in plan mode
    the plan presented; a failure, an empty or a cut answer said in one line on stderr."""
    if final.stop_reason in ("error", "aborted"):
        first = (final.error_message or final.stop_reason).strip().splitlines() or ["failed"]
        err.line(f"di-code: {sanitized(first[0])}")  # a server's error body: from outside
        return
    if plan:
        out.line(plan)
        return
    if final.text:
        out.line(final.text)
    else:
        err.line("di-code: the model ended its turn without any answer text")
    if final.stop_reason == "length":
        err.line(f"di-code: {cut_reply_note(final)}")
