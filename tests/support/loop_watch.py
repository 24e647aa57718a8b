"""The loop watch (DI_CODE_LOOP_WATCH=1): every event-loop callback of a test, in pytest and in
each di-code it starts, is timed, and one that held its loop over LIMIT (100 ms, asyncio's own
`slow_callback_duration`) is reported as "Executing ... took X seconds": a callback during
which Ctrl-C, Esc and every other task wait. The test that saw one fails, naming it.

The time counted is the time the loop's thread held the loop: running, or waiting on
something (a sleep, a blocking read or write, a lock, the GIL), but not waiting for a CPU. The
kernel's count of the thread's run-queue time (/proc/thread-self/schedstat, Linux) over the
callback is taken off its wall-clock time, so a loaded machine that does not schedule the
process (a CPU taken by others) holds no test back, and the watch can run while other work
runs. (A process stopped from outside, SIGSTOP or a debugger, is counted: it waits on no run
queue.) Where the kernel gives no such count, the wall clock is counted.

Nor is the time the garbage collector spent meanwhile counted: a collection is paid by whichever
callback trips it, for the whole heap, and in pytest that heap is mostly the harness's own (a
worker's full collection took 50-115 ms on a quiet machine, past the limit under load; one
failed CI on a task that only connected a child's pipes). The callback's own work before and
after it is counted as before.

asyncio's debug mode is on too (PYTHONASYNCIODEBUG, read by every new loop): its checks of
calls from the wrong thread, and callbacks that name where they were made. Its own report of a
slow callback, on the wall clock, is dropped.

In pytest the reports are collected here; a di-code subprocess imports
tests/support/loopwatch/sitecustomize.py (put first on its PYTHONPATH), which appends them to
the file named in DI_CODE_LOOP_WATCH_LOG. A subprocess started with an environment of its own
that drops these variables is not watched; one that keeps PYTHONASYNCIODEBUG but sets its own
PYTHONPATH writes asyncio's wall-clock warnings to its stderr instead (a test that compares
stderr whole then fails: tests/cli/test_extensions_e2e.py).

CI (.ci/run) runs the in-process agent scenarios under it; the whole set is
`DI_CODE_LOOP_WATCH=1 .venv/bin/pytest tests/agent tests/tools tests/cli tests/ui tests/acp`."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import logging
import os
import sys
import threading
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import asyncio

SWITCH = "DI_CODE_LOOP_WATCH"
LOG_VARIABLE = "DI_CODE_LOOP_WATCH_LOG"
LIMIT = 0.1
"""Seconds a callback may hold its loop: asyncio's default `slow_callback_duration`."""
SLOW_MESSAGE = "Executing %s took %.3f seconds"
"""asyncio's own message for a slow callback (asyncio.base_events), on the wall clock: dropped."""
SCHEDSTAT = "/proc/thread-self/schedstat"
"""Linux: the thread's nanoseconds on a CPU, nanoseconds waiting on a run queue, time slices."""


FIRST_USE_IMPORTS = (
    "rich.console",
    "rich.live",
    "rich.markdown",
    "prompt_toolkit.application",
    "prompt_toolkit.shortcuts",
)
"""Imported, with every module of di_code, before pytest's own loops are watched: the chat
imports these on the loop when it first draws, once per process, and in one pytest process
whichever test came first would pay for all. What di-code imports through its first-use imports
(di_code.system.first_use: the HTTP stack, jsonschema, a tool's module) is not imported ahead: it
must not hold the loop in any test. A di-code subprocess is watched with nothing imported
ahead: there its first-use imports count."""


def enabled() -> bool:
    return os.environ.get(SWITCH, "") not in ("", "0")


class SlowCallbacks(logging.Handler):
    """Keeps the callbacks that held their loop (appended to `path` when given). As asyncio's
    logger's handler, it drops asyncio's own slow-callback records (wall clock) and passes any
    other record on as logging would have without it (its last resort)."""

    def __init__(self, path: str | None = None) -> None:
        super().__init__(logging.WARNING)
        self.path = path
        self.seen: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.msg != SLOW_MESSAGE:
            last = logging.lastResort
            if last is not None and not logging.getLogger().handlers:
                last.handle(record)

    def held(self, handle: asyncio.Handle, seconds: float, wall: float) -> None:
        said = SLOW_MESSAGE % (_format_handle(handle), seconds)
        line = f"pid {os.getpid()}: {said} ({wall:.3f} s on the wall clock)"
        self.seen.append(line)
        if self.path:
            with open(self.path, "a", encoding="utf-8") as file:
                file.write(line.replace("\n", " ") + "\n")


def _format_handle(handle: asyncio.Handle) -> str:
    """The callback as asyncio names it in its own report (a task's step: the task)."""
    from asyncio import base_events

    return str(base_events._format_handle(handle))  # type: ignore[attr-defined]


class _Schedstat:
    """A thread's schedstat, open while the thread lives (read again from its start each time)."""

    def __init__(self) -> None:
        try:
            self.fd: int | None = os.open(SCHEDSTAT, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            self.fd = None

    def __del__(self) -> None:
        if self.fd is not None:
            os.close(self.fd)

    def waited(self) -> float:
        """Seconds the thread has waited for a CPU so far (0 where the kernel does not say)."""
        if self.fd is None:
            return 0.0
        return int(os.pread(self.fd, 128, 0).split()[1]) / 1e9


_threads = threading.local()


class _Collections:
    """Seconds the garbage collector has held its thread in this process so far (any
    thread's collection: it holds the GIL throughout, so every other thread waits for it too),
    less what that thread waited for a CPU meanwhile: a collection on the loop's thread is in
    its run-queue time already, and a loaded machine would have it taken off twice."""

    def __init__(self) -> None:
        self.total = 0.0
        self._started = (0.0, 0.0)

    def __call__(self, phase: str, _info: dict[str, int]) -> None:
        if phase == "start":
            self._started = (time.monotonic(), _waited())
        else:
            started, queued = self._started
            self.total += (time.monotonic() - started) - (_waited() - queued)


_collections = _Collections()


def _waited() -> float:
    """`_Schedstat.waited` of the calling thread."""
    schedstat = getattr(_threads, "schedstat", None)
    if schedstat is None:
        schedstat = _threads.schedstat = _Schedstat()
    return float(schedstat.waited())


def _timed(run: Callable[[asyncio.Handle], None], handler: SlowCallbacks) -> Callable[..., None]:
    """`Handle._run`, reporting to `handler` a callback that held its loop over LIMIT: its
    wall-clock time less what its thread waited for a CPU and what the garbage collector ran
    meanwhile."""

    def timed_run(handle: asyncio.Handle) -> None:
        started, queued, collected = time.monotonic(), _waited(), _collections.total
        run(handle)
        wall = time.monotonic() - started
        if wall < LIMIT:
            return
        held = wall - (_waited() - queued) - (_collections.total - collected)
        if held >= LIMIT:
            handler.held(handle, held, wall)

    return timed_run


def warm() -> None:
    """Import what FIRST_USE_IMPORTS says, after writing di_code's bytecode as `pip install`
    does for a user: a machine with PYTHONDONTWRITEBYTECODE=1 (this one) never writes it for
    an editable checkout, so each di-code a test starts would compile its modules from source
    on its loop first (~100 ms in all), a cost no installed di-code has (scripts/bench does
    the same)."""
    import compileall
    import importlib
    import pkgutil

    import di_code

    for folder in di_code.__path__:
        compileall.compile_dir(folder, quiet=1)
    found = pkgutil.walk_packages(di_code.__path__, "di_code.")
    for name in [*FIRST_USE_IMPORTS, *(module.name for module in found)]:
        importlib.import_module(name)


def install(path: str | None = None) -> SlowCallbacks:
    """Time every callback of every loop of this process from now on."""
    import asyncio
    import gc

    handler = SlowCallbacks(path)
    logging.getLogger("asyncio").addHandler(handler)
    gc.callbacks.append(_collections)
    asyncio.Handle._run = _timed(asyncio.Handle._run, handler)  # type: ignore[method-assign]
    return handler


class InstallWhenImported:
    """A finder first on `sys.meta_path`: `install` once asyncio is imported, so that a process
    the watch starts loads asyncio no earlier than it would without it (`di-code --help` loads
    none)."""

    def __init__(self, path: str) -> None:
        self.path = path

    def find_spec(self, name: str, *_: object) -> importlib.machinery.ModuleSpec | None:
        if name != "asyncio":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        loader, path = spec.loader, self.path

        def exec_module(module: types.ModuleType) -> None:
            type(loader).exec_module(loader, module)
            install(path)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def watched(env: dict[str, str], log: Path) -> dict[str, str]:
    """`env` for a Python process whose loops are watched, their reports appended to `log`."""
    folder = str(Path(__file__).parent / "loopwatch")
    path = os.pathsep.join(filter(None, [folder, env.get("PYTHONPATH")]))
    return {**env, "PYTHONASYNCIODEBUG": "1", "PYTHONPATH": path, LOG_VARIABLE: str(log)}


def seen_in(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
