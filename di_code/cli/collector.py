"""The cyclic garbage collector is off while `run` or `chat` starts.

Start-up makes ~35,000 lasting objects (modules, classes, functions, the set-up) and frees
almost none, yet its allocations set off some thirty collections that walk them (~5 ms of the
~0.2 s to the first request here). `pause` turns it off as the command begins;
`resume`, once the set-up is done (`cli.setup.prepare`), moves everything made so far to the
permanent generation (`gc.freeze`: it lives as long as the process, and no later collection
walks it again) and turns the collector back on for what the session itself leaves behind.
"""

from __future__ import annotations

import gc


def pause() -> None:
    gc.disable()


def resume() -> None:
    """Only after a `pause`: a process that never paused (the tests) keeps its collector."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()
