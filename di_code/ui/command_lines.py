"""How a slash command answers: one plain line (or block), or one red line for a failure."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

if TYPE_CHECKING:
    from di_code.ui.repl import Repl


def fail(repl: Repl, text: str) -> bool:
    """A failure, in red; True: the REPL goes on."""
    repl.console.print(Text(f"✗ {text}", style="red"))
    return True


def say(repl: Repl, text: str) -> bool:
    """An answer, printed as it is (no markup); True: the REPL goes on."""
    repl.console.print(Text(text), markup=False, highlight=False)
    return True
