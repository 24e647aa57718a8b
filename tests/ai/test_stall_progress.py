"""Stalls are judged by SSE events, not bytes: a real loopback server trickles a reply one byte
at a time inside an event, or sends only keep-alive comments, over a real socket."""

from __future__ import annotations

from pathlib import Path

from di_code.ai.providers.stall import StallClock
from di_code.ai.sse import SSEDecoder
from di_code.ai.types import Context, UserMessage
from tests.support.llm_server import LLMServer, Replay
from tests.support.streams import collect, model_for, provider_for

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "openai_text_then_tool.sse"
CONTEXT = Context("be brief", [UserMessage.of("hi")])
PING = b": ping\n"


def reply_events() -> list[bytes]:
    """The recorded reply's events, each with its blank line."""
    return [event + b"\n\n" for event in FIXTURE.read_bytes().split(b"\n\n") if event.strip()]


def replay_file(tmp_path: Path, pieces: list[bytes]) -> Replay:
    """A Replay that writes `pieces` one by one, 50 ms apart."""
    path = tmp_path / "reply.sse"
    path.write_bytes(b"".join(pieces))
    offsets, total = [], 0
    for piece in pieces[:-1]:
        total += len(piece)
        offsets.append(total)
    return Replay(str(path), cuts=tuple(offsets), delay=0.05)


async def ask(server: LLMServer, stall: float, first_byte: float) -> tuple[str | None, str]:
    provider = provider_for("openai", server, stall_timeout=stall, first_byte_timeout=first_byte)
    try:
        _, message = await collect(provider.stream(model_for("openai"), CONTEXT))
    finally:
        await provider.aclose()
    return message.error_message, message.text


async def test_a_reply_trickling_inside_one_event_stalls(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    first, second, *rest = reply_events()
    trickled = [second[i : i + 1] for i in range(60)]  # 60 bytes, one every 50 ms: 3 s
    llm_server.script(replay_file(tmp_path, [first, *trickled, second[60:] + b"".join(rest)]))
    error, text = await ask(llm_server, stall=0.5, first_byte=5)
    assert error == "openai: stream stalled (no complete event for 0.5 s)"
    assert text == ""  # the first event had no text; nothing of the trickled one is made up
    assert llm_server.wait_disconnects(1)


async def test_keep_alives_wait_up_to_the_first_byte_timeout(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    events = reply_events()
    before = [PING] * 10  # 0.5 s of pings before the first event: over the stall timeout
    between = [PING] * 10  # and again after the first event
    llm_server.script(replay_file(tmp_path, [*before, events[0], *between, b"".join(events[1:])]))
    error, text = await ask(llm_server, stall=0.3, first_byte=5)
    assert error is None
    assert text.startswith("Let me ")


async def test_only_keep_alives_end_at_the_first_byte_timeout(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    events = reply_events()
    llm_server.script(replay_file(tmp_path, [*[PING] * 80, b"".join(events)]))  # 4 s of pings
    error, _ = await ask(llm_server, stall=0.3, first_byte=1)
    assert error == "openai: stream stalled (only keep-alives for 1 s)"


class Reading:
    """A decoder and its clock on a fake time: `at(t, data)` reads `data` at second `t`."""

    def __init__(self, stall: float, first_byte: float) -> None:
        self.now = 100.0
        self.decoder = SSEDecoder()
        self.clock = StallClock(first_byte, stall, lambda: self.now)

    def at(self, now: float, data: bytes) -> None:
        self.now = now
        events = self.decoder.feed(data)
        self.clock.saw(len(events), self.decoder.keepalives, self.decoder.pending)


def test_the_deadline_moves_with_events_only() -> None:
    reading = Reading(stall=5, first_byte=60)
    clock = reading.clock
    assert (clock.deadline, clock.why) == (160, "no reply")
    reading.at(101, b": ping\n")  # keep-alives before the first event: the first-byte wait
    assert (clock.deadline, clock.why, clock.seconds) == (160, "only keep-alives", 60)
    reading.at(110, b"data: {")  # part of the first event: it has the stall timeout to complete
    assert (clock.deadline, clock.why) == (115, "no complete event")
    reading.at(114, b'"a"')  # more bytes of it move nothing
    reading.at(114.5, b"}\ndata: 2\n")  # complete lines, but no blank line: still no event
    assert clock.deadline == 115
    reading.at(114.9, b"\n: ping\n")  # an event, and a keep-alive with it
    assert (clock.deadline, clock.why) == (119.9, "no data")
    reading.at(118, b": ping\n")  # a keep-alive after an event: waits on, up to the first-byte
    assert (clock.deadline, clock.why) == (123, "no data")  # timeout after that event
    for now in range(120, 190, 4):
        reading.at(now, b": ping\n")
    assert (clock.deadline, clock.why, clock.seconds) == (174.9, "only keep-alives", 60)
