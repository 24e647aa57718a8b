"""The cyclic garbage collector paused while a session is decoded."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Decoding a long session makes some 100,000 objects and no reference cycles; while they
    are made the cyclic collector would rescan the growing heap again and again (about a sixth
    of a resume). Paused, it looks at them once, afterwards."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
