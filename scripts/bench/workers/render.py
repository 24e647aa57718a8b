"""Figure 5 worker: one streaming-Markdown renderer fed a generated reply one word at a time.

Renderers: `di_code` (di_code.ui.render.Renderer, streaming through MarkdownStream), `naive`
(a Rich Live showing Markdown of the whole text on every update) and `aider`
(aider.mdstream.MarkdownStream, run in aider's venv). Every Live here refreshes synchronously
(no refresh thread), so all the work is on the measured thread and every write to the fake
terminal is a frame.

Modes: `fast` (as fast as possible, throttles defeated by a clock that jumps 10 s per reading:
CPU per update, all updates or `samples` evenly spaced ones, each after an untimed update at
the word before) and `paced` (100 words/s on a simulated clock: virtual time runs at real speed
while a renderer works, and waits for the next word otherwise). di-code's renderer sets timers
(asyncio's `call_later` in the app) to draw when its throttle window closes; here they are
fired at their virtual time between words, as an event loop would.
"""

import heapq
import io
import itertools
import json
import random
import re
import sys
import time
from collections.abc import Callable
from itertools import pairwise
from typing import Any

Update = Callable[[str], None]


def reply(words: int) -> str:
    """Prose, lists, headings and code fences, about `words` words."""
    rng = random.Random(5)
    vocab = (
        "the",
        "agent",
        "reads",
        "files",
        "runs",
        "tools",
        "and",
        "streams",
        "answers",
        "while",
        "terminal",
        "stays",
        "responsive",
        "because",
        "finished",
        "blocks",
    )
    parts: list[str] = []
    count = 0
    while count < words:
        kind = count // 40 % 4
        if kind == 0:
            text = " ".join(rng.choice(vocab) for _ in range(35)) + "."
            parts.append(text[0].upper() + text[1:])
        elif kind == 1:
            parts.append(
                "\n".join(
                    f"- **{rng.choice(vocab)}** {' '.join(rng.sample(vocab, 6))}" for _ in range(5)
                )
            )
        elif kind == 2:
            parts.append(f"## {' '.join(rng.sample(vocab, 3)).title()}")
            parts.append(
                "```python\n"
                + "\n".join(
                    f"def {rng.choice(vocab)}_{i}(x):\n    return x + {i}" for i in range(4)
                )
                + "\n```"
            )
        else:
            parts.append(" ".join(rng.choice(vocab) for _ in range(30)) + " `inline code`.")
        count = sum(len(p.split()) for p in parts)
    return "\n\n".join(parts) + "\n"


class Sink(io.StringIO):
    """The fake terminal: remembers the (clock) time of every write, i.e. every frame."""

    def __init__(self, clock: Callable[[], float]) -> None:
        super().__init__()
        self.clock = clock
        self.frames: list[float] = []

    def write(self, text: str) -> int:
        if text:
            self.frames.append(self.clock())
        return len(text)

    def isatty(self) -> bool:
        return True


def sync_live(console: Any) -> Any:
    from rich.live import Live

    class SyncLive(Live):
        def update(self, renderable: Any, *, refresh: bool = False) -> None:
            super().update(renderable, refresh=True)

    return SyncLive(console=console, auto_refresh=False, transient=True)


class Timers:
    """The timers of a simulated event loop; `run_until` fires the due ones in order."""

    def __init__(self, clock: "SimClock") -> None:
        self.clock = clock
        self.due: list[tuple[float, int, Callable[[], None]]] = []
        self.order = itertools.count()

    def call_later(self, delay: float, callback: Callable[[], None]) -> None:
        heapq.heappush(self.due, (self.clock.now() + delay, next(self.order), callback))

    def run_until(self, moment: float) -> None:
        while self.due and self.due[0][0] <= moment:
            when, _, callback = heapq.heappop(self.due)
            self.clock.resume_at(when)
            callback()


def make(
    renderer: str, console: Any, clock: Callable[[], float], timers: Timers | None = None
) -> tuple[Update, Update]:
    """(update(text so far), finish(full text)) for one renderer."""
    if renderer == "naive":
        from rich.markdown import Markdown

        live = sync_live(console)
        live.start()

        def done(text: str) -> None:
            live.update(Markdown(text))
            live.stop()

        return lambda text: live.update(Markdown(text)), done
    if renderer == "aider":
        import types

        from aider import mdstream

        mdstream.time = types.SimpleNamespace(time=clock)
        mdstream.Live = lambda renderable, refresh_per_second: sync_live(console)
        aider_stream = mdstream.MarkdownStream()
        return aider_stream.update, lambda text: aider_stream.update(text, final=True)
    from di_code.agent.events import MessageEndEvent, MessageStartEvent, MessageUpdateEvent
    from di_code.ai.events import TextDeltaEvent, TextEndEvent, TextStartEvent
    from di_code.ai.types import AssistantMessage, TextContent
    from di_code.ui.render import Renderer

    class Area:
        live: Any = None

        def show(self, renderable: Any) -> None:
            if renderable is None:
                if self.live is not None:
                    self.live.stop()
                    self.live = None
                return
            if self.live is None:
                self.live = sync_live(console)
                self.live.start()
            self.live.update(renderable)

    # The whole Renderer, frames and status line included, as `chat` draws a reply.
    if timers is None:
        renderer = Renderer(console, live=Area(), clock=clock)
    else:
        renderer = Renderer(console, live=Area(), clock=clock, schedule=timers.call_later)
    seen = [0]

    def message(text: str) -> AssistantMessage:
        return AssistantMessage([TextContent(text)] if text else [], "bench", "bench")

    renderer.handle(MessageStartEvent(message("")))
    renderer.handle(MessageUpdateEvent(TextStartEvent(0)))

    def update(text: str) -> None:
        delta, seen[0] = text[seen[0] :], len(text)
        renderer.handle(MessageUpdateEvent(TextDeltaEvent(0, delta)))

    def finish(text: str) -> None:
        update(text)
        renderer.handle(MessageUpdateEvent(TextEndEvent(0, text)))
        renderer.handle(MessageEndEvent(message(text)))

    return update, finish


def console_for(sink: Sink) -> Any:
    from rich.console import Console

    return Console(file=sink, force_terminal=True, width=100, height=40, color_system="truecolor")


def fast(renderer: str, words: int, samples: int) -> dict[str, Any]:
    moment = [0.0]

    def jumping() -> float:
        moment[0] += 10.0
        return moment[0]

    text = reply(words)
    ends = [m.end() for m in re.finditer(r"\S+\s*", text)]
    update, finish = make(renderer, console_for(Sink(jumping)), jumping)
    costs: list[float] = []
    if samples:
        picks = sorted({max(1, round(len(ends) * (j + 1) / samples)) - 1 for j in range(samples)})
    else:
        picks = list(range(len(ends)))
    for index in picks:
        if samples and index and renderer != "naive":
            update(text[: ends[index - 1]])
        start = time.process_time()
        update(text[: ends[index]])
        costs.append((time.process_time() - start) * 1000)
    finish(text)
    return {"per_update_ms": costs, "words": len(ends)}


class SimClock:
    """Virtual seconds: real time flows while the renderer works, then jumps to the next word."""

    def __init__(self) -> None:
        self.base = 0.0
        self.real = time.perf_counter()

    def now(self) -> float:
        return self.base + time.perf_counter() - self.real

    def resume_at(self, moment: float) -> None:
        self.base = max(moment, self.now())
        self.real = time.perf_counter()


def paced(renderer: str, words: int, rate: float) -> dict[str, Any]:
    clock = SimClock()
    sink = Sink(clock.now)
    text = reply(words)
    ends = [m.end() for m in re.finditer(r"\S+\s*", text)]
    timers = Timers(clock)
    update, finish = make(renderer, console_for(sink), clock.now, timers)
    cpu = time.process_time()
    for index, end in enumerate(ends):
        timers.run_until(index / rate)
        clock.resume_at(index / rate)
        update(text[:end])
    last_token = clock.base
    finish(text)
    cpu = time.process_time() - cpu
    frames = sink.frames
    gaps = [b - a for a, b in pairwise(frames)]
    duration = len(ends) / rate
    return {
        "cpu_share": cpu / duration,
        "max_gap_ms": max(gaps, default=0) * 1000,
        "final_latency_ms": (frames[-1] - last_token) * 1000,
        "frames": len(frames),
        "words": len(ends),
    }


if __name__ == "__main__":
    p = json.loads(sys.argv[1])
    if p["mode"] == "fast":
        print(json.dumps(fast(p["renderer"], p["words"], p["samples"])))
    else:
        print(json.dumps(paced(p["renderer"], p["words"], p["rate"])))
