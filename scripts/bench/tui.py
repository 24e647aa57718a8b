"""An interactive agent driven in a real pseudo-terminal, as a user at a terminal would.

The child gets a 100x30 pty (pexpect); its output is fed to a pyte screen, so "the prompt is
drawn" means the screen a user sees shows it, whatever escape codes drew it. The terminal
queries a TUI sends at start-up (cursor position, device attributes, colours) are answered as a
terminal would answer them: Codex's TUI, for one, waits for them. Once the prompt is ready, a
prompt and Enter are typed (as a person types: see KEYS), and the loopback server notes when
the request arrives.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pexpect
import pyte

from scripts.bench.loopback import LoopbackServer
from scripts.bench.measure import ChildFailed, end_group

COLUMNS, LINES = 100, 30
TIMEOUT_S = 30.0
ANSWERS: tuple[tuple[bytes, bytes], ...] = (
    (b"\x1b[6n", b"\x1b[1;1R"),
    (b"\x1b[c", b"\x1b[?62;c"),
    (b"\x1b]10;?", b"\x1b]10;rgb:ffff/ffff/ffff\x1b\\"),
    (b"\x1b]11;?", b"\x1b]11;rgb:0000/0000/0000\x1b\\"),
)
"""A terminal's answers to the queries TUIs send (a dark background, white text)."""

KEYS = (b"h", b"i", b"\r")
KEY_GAP_S = 0.06
"""Keys are typed one by one, 60 ms apart, for every agent alike (0.18 s of each first-request
figure): Codex takes keys that come faster as a paste, in which Enter adds a line."""

Ready = Callable[[str], bool]
"""Whether the screen's text shows a prompt that takes input."""


@dataclass(frozen=True, slots=True)
class Times:
    prompt_s: float
    """Spawn to the first screen on which the prompt is ready."""
    request_s: float
    """Spawn to the first byte of the model request (the prompt typed once it was ready)."""


def shows(*needles: str, unless: str = "") -> Ready:
    """Ready when every needle is on the screen (and `unless`, if given, is not)."""
    return lambda text: all(n in text for n in needles) and not (unless and unless in text)


def drive(
    argv: Sequence[str | Path],
    env: dict[str, str],
    cwd: Path,
    ready: Ready,
    server: LoopbackServer,
    timeout: float = TIMEOUT_S,
) -> Times:
    """Start `argv` in a pty, wait for `ready`, type "hi" and Enter, wait for the request."""
    index = len(server.arrivals)
    screen = pyte.Screen(COLUMNS, LINES)
    stream = pyte.ByteStream(screen)
    started = time.monotonic()
    child = pexpect.spawn(
        str(argv[0]),
        [str(a) for a in argv[1:]],
        env=env,
        cwd=str(cwd),
        dimensions=(LINES, COLUMNS),
    )
    try:
        prompt = _until(child, stream, screen, lambda: ready(_text(screen)), "no prompt", timeout)
        for key in KEYS:
            time.sleep(KEY_GAP_S)
            child.send(key)
        prompt_s = prompt - started

        def arrived() -> bool:
            return len(server.arrivals) > index

        _until(child, stream, screen, arrived, "no request", timeout)
        return Times(prompt_s, server.arrivals[index].at - started)
    finally:
        end_group(child.pid)
        with contextlib.suppress(Exception):
            child.close(force=True)


def _until(
    child: pexpect.spawn,  # type: ignore[type-arg]
    stream: pyte.ByteStream,
    screen: pyte.Screen,
    done: Callable[[], bool],
    failure: str,
    timeout: float,
) -> float:
    """Read and answer the child's output until `done`; the time.monotonic() it became so."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if done():
            return time.monotonic()
        try:
            data: bytes = child.read_nonblocking(65536, timeout=0.01)
        except pexpect.TIMEOUT:
            continue
        except pexpect.EOF:
            if done():  # it came true while the child was ending (a request, then its exit)
                return time.monotonic()
            raise ChildFailed(f"{failure}: exited; screen: {_last(screen)}") from None
        for query, answer in ANSWERS:
            if query in data:
                child.send(answer)
        stream.feed(data)
    raise ChildFailed(f"{failure} within {timeout:g} s; screen: {_last(screen)}")


def _text(screen: pyte.Screen) -> str:
    return "\n".join(screen.display)


def _last(screen: pyte.Screen) -> str:
    lines = [re.sub(r"\s+", " ", line).strip() for line in screen.display]
    return " | ".join(line for line in lines if line)[-300:]
