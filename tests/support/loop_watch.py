"""The loop watch (DI_CODE_LOOP_WATCH=1): every event loop of a test, in pytest and in each
di-code it starts, runs in asyncio's debug mode, where a callback that holds the loop longer
than `slow_callback_duration` (100 ms, asyncio's default) is logged as "Executing ... took
X seconds". Such a callback is one during which Ctrl-C, Esc and every other task wait; the
test that saw one fails, naming it.

In pytest the records are collected here; a di-code subprocess imports
tests/support/loopwatch/sitecustomize.py (put first on its PYTHONPATH), which appends them to
the file named in DI_CODE_LOOP_WATCH_LOG. Debug mode itself is asyncio's own switch,
PYTHONASYNCIODEBUG, read by every new loop. A subprocess started with an environment of its
own that drops these variables is not watched; one that keeps PYTHONASYNCIODEBUG but sets its
own PYTHONPATH writes asyncio's warnings to its stderr instead (a test that compares stderr
whole then fails: tests/cli/test_extensions_e2e.py).

CI (.ci/run) runs the in-process agent scenarios under it; the whole set is
`DI_CODE_LOOP_WATCH=1 .venv/bin/pytest tests/agent tests/tools tests/cli tests/ui tests/acp`."""

from __future__ import annotations

import logging
import os
from pathlib import Path

SWITCH = "DI_CODE_LOOP_WATCH"
LOG_VARIABLE = "DI_CODE_LOOP_WATCH_LOG"
SLOW_MESSAGE = "Executing %s took %.3f seconds"
"""asyncio's own message for a slow callback (asyncio.base_events)."""


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
    """Keeps asyncio's slow-callback records (appended to `path` when given); passes any
    other record on as logging would have without this handler (its last resort)."""

    def __init__(self, path: str | None = None) -> None:
        super().__init__(logging.WARNING)
        self.path = path
        self.seen: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.msg != SLOW_MESSAGE:
            last = logging.lastResort
            if last is not None and not logging.getLogger().handlers:
                last.handle(record)
            return
        line = f"pid {os.getpid()}: {record.getMessage()}"
        self.seen.append(line)
        if self.path:
            with open(self.path, "a", encoding="utf-8") as file:
                file.write(line.replace("\n", " ") + "\n")


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
    handler = SlowCallbacks(path)
    logging.getLogger("asyncio").addHandler(handler)
    return handler


def uninstall(handler: SlowCallbacks) -> None:
    logging.getLogger("asyncio").removeHandler(handler)


def seen_in(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
