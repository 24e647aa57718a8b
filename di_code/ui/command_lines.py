"""How a slash command answers: one plain line (or block), or one red line for a failure;
either may quote a file, a server or the model, so it goes through the sanitizer."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from di_code.system.safe_text import visible

if TYPE_CHECKING:
    from di_code.ui.chat_view import ChatView


def fail(repl: ChatView, text: str) -> bool:
    """A failure, in red; True: the REPL goes on."""
    repl.console.print(Text(f"✗ {visible(text)}", style="red"))
    return True


def say(repl: ChatView, text: str) -> bool:
    """An answer, printed as it is (no markup); True: the REPL goes on."""
    repl.console.print(Text(visible(text)), markup=False, highlight=False)
    return True
