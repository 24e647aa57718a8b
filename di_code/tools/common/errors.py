"""The one exception the tools raise, and the abort check every tool starts with.

The agent loop turns a raised exception into `Tool "<name>" failed: <message>`, so messages are
one line, written for the model, and never carry a traceback.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from di_code.system.errors import DiCodeError

if TYPE_CHECKING:
    from di_code.system.abort import AbortSignal


ABORTED_TEXT = "Operation aborted"


class ToolError(DiCodeError):
    """A failure the model should read and act on (bad path, no match, binary file)."""


def check_aborted(signal: AbortSignal) -> None:
    """Refuse to start (or go on) once the user has aborted."""
    if signal.aborted:
        raise ToolError(ABORTED_TEXT)
