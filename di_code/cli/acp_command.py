"""`di-code acp`: di-code as an Agent Client Protocol agent for editors (Zed, JetBrains,
Neovim), on stdin and stdout. Each editor session is set up as `chat` sets one up.

Nothing of the SDK is loaded before the editor's `initialize` is answered (acp/hello.py): the
SDK loads with the first request that needs it, the set-up (settings, providers, tools) with
the first session."""

from __future__ import annotations

from importlib.util import find_spec
from typing import TYPE_CHECKING

from di_code.setup.flags import CliOptions
from di_code.system import left_behind
from di_code.system.first_use import import_off_loop
from di_code.system.stop_signals import until_stopped

if TYPE_CHECKING:
    from di_code.acp.live import SessionRequest
    from di_code.setup.prepared import Prepared


def acp_command(options: CliOptions, log_file: str | None) -> int:
    from di_code.acp.stdio import NEEDS_SDK, serve

    if find_spec("acp") is None:  # whether it is installed, without its import's cost
        from di_code.config.settings import ConfigError

        raise ConfigError(NEEDS_SDK)

    if log_file is not None:
        from di_code.ai.log_file import log_to

        log_to(log_file)

    async def open_session(request: SessionRequest) -> Prepared:
        await import_off_loop("di_code.setup.prepare")  # the set-up's code: off the loop
        from di_code.setup.prepare import prepare

        chosen = options._replace(
            session=request.session_id, continue_session=False, no_session=False
        )
        return await prepare(
            chosen,
            workspace=request.workspace,
            editor=request.editor,
            terminals=request.terminals,
            mcp_servers=request.mcp_servers,
            notify=request.notify,
            switchable=True,  # the editor's mode menu
        )

    async def close_session(opened: Prepared) -> None:
        from di_code.setup.prepare import close_prepared

        await close_prepared(opened, opened.agent.provider)

    async def served() -> int:
        await serve(open_session, close_session)
        return 0

    return left_behind.run(until_stopped(served()))
