"""`di-code acp`'s connection: protocol messages on the real stdout, nothing else.

The process's fd 1 is pointed at stderr before anything runs, so a stray print, a library's
warning or a child process that writes to its stdout can never corrupt the stream the editor
parses; the protocol writes to a private copy of the original stdout. Every message goes
through the one redaction (di_code.ai.redaction) on its way out: the editor is shown no key
(only a file the model writes and a command it runs are sent as they are: `ACTIONS`).
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
import sys
from typing import TYPE_CHECKING, Any, cast

from di_code.acp.hello import INITIALIZE, EditorOffers, answer_initialize
from di_code.acp.jsonrpc_lines import checked
from di_code.acp.own_methods import answer, own_request
from di_code.ai.redaction import redact_bytes
from di_code.system.first_use import import_off_loop

if TYPE_CHECKING:
    from di_code.acp.live import CloseSession, OpenSession

STDIO_LIMIT = 50 * 1024 * 1024
"""Largest message line read: an editor may send a whole file or an image in one."""
CHECKED_ON_LOOP = 64 * 1024
"""A longer line is parsed for its check in a thread, not on the event loop."""
NEEDS_SDK = "di-code acp needs the Agent Client Protocol SDK: pip install 'di-code[acp]'"
INPUT_NOT_A_PIPE = "di-code acp reads an editor's messages from a pipe: its input is not one"


async def serve(open_session: OpenSession, close_session: CloseSession) -> None:
    """Answer the editor until it closes stdin; then stop every session's work.

    `initialize` is answered as it comes (`hello.py`); the SDK is imported, and its
    connection started, with the first message that needs it (an editor that only asks
    `initialize` never pays for it)."""
    _check_input()
    protocol_fd = os.dup(1)
    os.dup2(2, 1)
    loop = asyncio.get_running_loop()
    stdin = asyncio.StreamReader(limit=STDIO_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdin), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(protocol_fd, "wb", buffering=0)
    )
    writer = RedactingWriter(transport, protocol, None, loop)
    messages = asyncio.StreamReader(limit=STDIO_LIMIT)
    offers = EditorOffers()
    wanted = asyncio.Event()
    agent: asyncio.Future[Any] = loop.create_future()
    checking = asyncio.create_task(_pass_json_lines(stdin, messages, writer, offers, wanted, agent))
    waiting = asyncio.create_task(wanted.wait())
    try:
        await asyncio.wait({checking, waiting}, return_when=asyncio.FIRST_COMPLETED)
        if wanted.is_set() and await _sdk_imported_before_eof(checking):
            from acp import Agent, run_agent

            from di_code.acp.server import DiCodeAcpAgent

            agent.set_result(DiCodeAcpAgent(open_session, close_session, offers))
            # the SDK routes only the methods an agent has: the others answer "method not
            # found"; its "unstable" methods include session/resume and session/close, which
            # ACP v1 has
            served = cast(Agent, agent.result())
            await run_agent(served, writer, messages, use_unstable_protocol=True)
    finally:
        checking.cancel()
        waiting.cancel()
        if agent.done() and not agent.cancelled():
            await agent.result().close()
        agent.cancel()


def _check_input() -> None:
    """An editor's messages come through a pipe (a socket, or a terminal for a person trying
    it, do too); the loop cannot wait on a file or on /dev/null, so that is one line, not an
    internal error and a traceback."""
    try:
        mode = os.fstat(0).st_mode
    except OSError:
        mode = 0
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or (mode and os.isatty(0))):
        from di_code.config.settings import ConfigError

        raise ConfigError(INPUT_NOT_A_PIPE)


async def _sdk_imported_before_eof(reading: asyncio.Task[None]) -> bool:
    """Whether the SDK was imported before the editor closed stdin (`reading` ended): closing
    stdin ends the process, and a stop never waits for work, here an import that may take
    long or never end (a hung network file system); the answers it would have given have
    nobody to read them."""
    importing = asyncio.create_task(_sdk_imported())
    await asyncio.wait({importing, reading}, return_when=asyncio.FIRST_COMPLETED)
    if not importing.done():
        importing.cancel()
        return False
    importing.result()  # a broken SDK: its one line
    return True


async def _sdk_imported() -> None:
    """The SDK and the agent it serves, imported off the loop; an SDK that cannot be imported
    is said in one line (acp_command checked only that it is installed)."""
    try:
        await import_off_loop("di_code.acp.server")
    except ImportError:
        from di_code.config.settings import ConfigError

        raise ConfigError(NEEDS_SDK) from None


ACTIONS = frozenset({"fs/write_text_file", "terminal/create"})
"""Requests that do what the model asked (write this text to this file, run this command):
their text is the action itself and is sent as it is, as bash runs a command as written and
the write tool writes a file as given (an edit of a file that holds a key must not turn it
into `***`). What the editor shows of them (the tool call's updates) is redacted."""


class RedactingWriter(asyncio.StreamWriter):
    """The protocol's stream: each write is one whole message (the SDK's and ours), redacted
    unless it is one of the ACTIONS."""

    def write(self, data: bytes | bytearray | memoryview) -> None:
        line = bytes(data)
        shown = redact_bytes(line)
        if shown != line and _method(line) in ACTIONS:
            shown = line
        super().write(shown)


def _method(line: bytes) -> object:
    """The method a message line requests (None for a response or a line that is not JSON)."""
    try:
        message = json.loads(line)
    except ValueError:
        return None
    return message.get("method") if isinstance(message, dict) else None


async def _pass_json_lines(
    stdin: asyncio.StreamReader,
    messages: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    offers: EditorOffers,
    wanted: asyncio.Event,
    agent: asyncio.Future[Any],
) -> None:
    """The editor's lines on to the SDK, each a JSON-RPC message; any other line is answered
    with JSON-RPC's error for it (`jsonrpc_lines`) and the agent goes on. `initialize` is
    answered here (`hello`), a method the SDK does not route beside it (`own_methods`); any
    other message sets `wanted`, for the SDK's agent."""
    answering: set[asyncio.Task[None]] = set()
    try:
        while line := await stdin.readline():
            small = len(line) <= CHECKED_ON_LOOP
            error, message, line = (
                checked(line) if small else await asyncio.to_thread(checked, line)
            )
            if error is not None:
                writer.write(error)
            elif isinstance(message, dict) and message.get("method") == INITIALIZE:
                if "id" in message:  # as a notification it asks for no answer
                    writer.write(answer_initialize(message, offers))
            elif message is not None:
                wanted.set()
                if (request := own_request(message)) is not None:
                    task = asyncio.create_task(answer(request, agent, writer))
                    answering.add(task)
                    task.add_done_callback(answering.discard)
                else:
                    messages.feed_data(line)
    except ValueError:  # a line over the limit: where the next message starts is unknown
        too_long = f"di-code acp: a message over {STDIO_LIMIT >> 20} MB; stopped reading"
        print(too_long, file=sys.stderr)
    finally:
        messages.feed_eof()
