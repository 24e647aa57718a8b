"""`di-code run`: one prompt, its answer in the chosen format, an exit code (SPEC §5).

Exit codes: 0 the answer came; 1 the run ended in error (or was aborted other than by
Ctrl-C); 2 usage or configuration error (raised as ConfigError, handled by the app);
130 interrupted by Ctrl-C. Ctrl-C aborts the agent's signal, which kills the running tool's
process group; a second Ctrl-C ends the process at once.
"""

from __future__ import annotations

import asyncio
import signal
import sys

from di_code.agent.events import AgentEvent
from di_code.ai.abort import AbortController
from di_code.ai.reply_notes import cut_reply_note
from di_code.ai.types import AssistantMessage
from di_code.cli.approval import terminal_approver
from di_code.cli.options import CliOptions
from di_code.cli.output import (
    OUTPUT_FORMATS,
    OutputFormat,
    RunTally,
    Writer,
    event_line,
    result_line,
)
from di_code.cli.prompt_input import UsageError, read_prompt
from di_code.cli.setup import Prepared, close_provider, notify_stderr, prepare
from di_code.session import CompactionError, CompactionResult, prompt_with_compaction

EXIT_OK, EXIT_ERROR, EXIT_INTERRUPTED = 0, 1, 130


def run_command(prompt: str | None, output_format: str, options: CliOptions) -> int:
    if output_format not in OUTPUT_FORMATS:
        raise UsageError(f"--output-format must be one of {', '.join(OUTPUT_FORMATS)}")
    text = read_prompt(prompt, sys.stdin)
    return asyncio.run(_run(text, output_format, options))


async def _run(prompt: str, fmt: OutputFormat, options: CliOptions) -> int:
    approver = terminal_approver() if fmt == "text" else None
    prepared = await prepare(options, approver=approver)
    out = Writer(sys.stdout, prepared.secrets)
    tally = RunTally()
    prepared.agent.subscribe(tally)
    _attach_progress(prepared, fmt, out)
    controller = AbortController()
    interrupted = _on_sigint(controller)
    try:
        final = await prompt_with_compaction(
            prepared.agent,
            prompt,
            prepared.session,
            signal=controller.signal,
            on_compaction=_report_compaction,
        )
    finally:
        asyncio.get_running_loop().remove_signal_handler(signal.SIGINT)
        await close_provider(prepared.agent.provider)
    session_id = prepared.session.id if prepared.session else None
    if interrupted.is_set() and fmt == "text":
        notify_stderr("interrupted")
    elif fmt == "text":
        _print_text(final, out, Writer(sys.stderr, prepared.secrets))
    else:
        out.line(result_line(final, tally, session_id))
    if interrupted.is_set():
        return EXIT_INTERRUPTED
    return EXIT_ERROR if final.stop_reason in ("error", "aborted") else EXIT_OK


def _report_compaction(outcome: CompactionResult | CompactionError) -> None:
    if isinstance(outcome, CompactionError):
        notify_stderr(f"compaction failed: {outcome}")
    else:
        notify_stderr(f"compacted the conversation ({outcome.tokens_before} tokens before)")


def _attach_progress(prepared: Prepared, fmt: OutputFormat, out: Writer) -> None:
    if fmt == "stream-json":

        def stream(event: AgentEvent) -> None:
            out.line(event_line(event))

        prepared.agent.subscribe(stream)
    elif fmt == "text" and sys.stderr.isatty():
        from rich.console import Console

        from di_code.ui.render import Renderer

        renderer = Renderer(Console(stderr=True), compact=True, model=prepared.model)
        prepared.agent.subscribe(renderer.handle)


def _print_text(final: AssistantMessage, out: Writer, err: Writer) -> None:
    """The answer on stdout; a failure, an empty or a cut answer said in one line on stderr."""
    if final.stop_reason in ("error", "aborted"):
        first = (final.error_message or final.stop_reason).strip().splitlines() or ["failed"]
        err.line(f"di-code: {first[0]}")
        return
    if final.text:
        out.line(final.text)
    else:
        err.line("di-code: the model ended its turn without any answer text")
    if final.stop_reason == "length":
        err.line(f"di-code: {cut_reply_note(final)}")


def _on_sigint(controller: AbortController) -> asyncio.Event:
    """First Ctrl-C: abort the run. Second: the default handler ends the process."""
    interrupted = asyncio.Event()
    loop = asyncio.get_running_loop()

    def handle() -> None:
        interrupted.set()
        controller.abort("interrupted")
        loop.remove_signal_handler(signal.SIGINT)
        signal.signal(signal.SIGINT, signal.SIG_DFL)

    loop.add_signal_handler(signal.SIGINT, handle)
    return interrupted
