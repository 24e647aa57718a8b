"""Chat's first-run trust question, and `/trust`: trusting the project applied to the chat.

A yes trusts the files exactly as the question listed them (their SHA-256 as read for the
list): a file rewritten while the question was open (a `git pull`, a watcher) is not trusted
unseen; the chat says so and asks again with what the files hold now.
"""

from __future__ import annotations

from collections.abc import Mapping

from rich.text import Text

from di_code.config.settings import di_code_home
from di_code.config.toml_file import ConfigError
from di_code.config.trusting import FilesChanged, TrustOffer, trust_offer, trust_project
from di_code.ui.approval import YesNo
from di_code.ui.chat_view import ChatView
from di_code.ui.command_lines import fail, say

QUESTION = "Trust this project's settings (all listed above)? y/N"
NOT_TRUSTED = "The project's settings stay not trusted (/trust trusts them later)."


async def ask_trust(repl: ChatView, offer: TrustOffer | None) -> None:
    """Ask until the user says no or a yes trusts the files as they were shown."""
    while offer is not None:
        if not await repl.approver.confirm(YesNo(QUESTION, offer.text)):
            repl.console.print(Text(NOT_TRUSTED, "dim"))
            return
        try:
            await trust_now(repl, dict(offer.shown))
            return
        except FilesChanged as exc:
            fail(repl, f"{exc}; asking again with what they hold now.")
        except ConfigError as exc:
            fail(repl, str(exc))
            return
        offer = trust_offer(di_code_home(), repl.setup.workspace)
    repl.console.print(Text("Nothing in the project's files waits for trust now.", "dim"))


async def trust_now(repl: ChatView, shown: Mapping[str, str] | None = None) -> None:
    """Trust the project's files (with `shown`, only as they were shown) and apply them to
    the running chat, saying what changed."""
    line = trust_project(di_code_home(), repl.setup.workspace, shown)
    if repl.setup.apply_trust is None:
        say(repl, f"{line} (from the next start of di-code)")
        return
    applied = await repl.setup.apply_trust()
    say(repl, "\n".join([line, *applied]))
