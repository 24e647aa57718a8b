"""The one place for what di-code imports the first time a feature is used, from async code.

Importing runs module bodies, and those of jsonschema, the MCP SDK or a tool's module take long
enough to notice (the HTTP stack comes with the first client: system/http_client.py). On the
event loop that is a pause in which Ctrl-C, Esc and every other task wait. So async code never
imports these itself: it awaits `import_off_loop(...)`, which imports them on a thread of its
own while the loop goes on, and the plain `import` that follows finds them in sys.modules.
tests/test_guarded_first_use.py fails when a module it guards is imported on a running loop."""

from __future__ import annotations

from collections.abc import Sequence
from importlib import import_module

from di_code.system.own_thread import on_own_thread

_done: set[str] = set()
"""Names imported here already: the next call for them returns without a thread."""


async def import_off_loop(*names: str) -> None:
    """Import `names` off the loop (an ImportError is raised here, as the import would)."""
    wanted = [name for name in names if name not in _done]
    if wanted:
        await on_own_thread(lambda: import_here(wanted))


def import_here(names: Sequence[str]) -> None:
    """Import `names` on the calling thread, which must not be the loop's (a helper thread
    that needs them, like the warm-ups at set-up). One after the other; a module another
    thread is importing is waited for here by the import system's own per-module lock."""
    for name in names:
        import_module(name)
        _done.add(name)
