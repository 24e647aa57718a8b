"""Which stored session a run or chat goes on with: `--session ID`, `--continue` (`chat -c`
the newest chat, `run -c` the newest session of either), or none; with `--fork`, the one to
copy (session/fork.py), read without holding it, so a session another process is writing to
can be forked."""

from __future__ import annotations

from pathlib import Path

from di_code.config.settings import ConfigError
from di_code.session import Session, SessionStore
from di_code.setup.flags import CliOptions


def chosen_session(
    options: CliOptions, store: SessionStore, workspace: Path, origin: str
) -> Session | None:
    write = not options.fork
    if options.session is not None:
        return store.find(options.session, workspace, write=write)
    if options.continue_session:
        resumed = store.latest(workspace, origin if origin == "chat" else None, write=write)
        if resumed is None:
            raise ConfigError(f"no session to continue in {workspace}")
        return resumed
    if options.fork:
        raise ConfigError("--fork needs --continue or --session ID: the session to fork")
    return None
