"""What ties an agent to its session: every message recorded, and a checkpoint before every
prompt so `/undo` and `di-code undo` can take it back."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from di_code.agent.agent import Agent
from di_code.session.git_run import work_tree_top
from di_code.setup.environment import GitState
from di_code.setup.prepared import Notify

if TYPE_CHECKING:
    from di_code.session import Session


def session_recorder(
    workspace: Path, roots: Sequence[Path], notify: Notify, git: GitState | None = None
) -> Callable[[Agent, Session], None]:
    """`attach(agent, session)`, for the session opened now and any the chat switches to.
    `git`: the workspace's git state the system prompt found, whose work tree the
    checkpoints take instead of asking git again (one git process fewer per run)."""
    from di_code.tools.common.workspace import Workspace

    files = Workspace.create(workspace, roots)

    def top_known(folder: Path) -> bool:  # a session's folder is resolved already
        return git is not None and git.found and folder == workspace

    def find_top(folder: Path) -> Path | None:
        return git.top if git is not None and top_known(folder) else work_tree_top(folder)

    def attach(agent: Agent, session: Session) -> None:
        from di_code.session.checkpoints import Checkpointer

        session.record(agent, on_error=lambda exc: notify(str(exc)))
        checkpoints = Checkpointer(
            session, lambda raw: files.locate(raw)[0], on_warning=notify,
            prompt_stopped=lambda: agent.signal is not None and agent.signal.aborted,
            find_top=find_top, top_known=top_known,
        )  # fmt: skip
        agent.subscribe(checkpoints.on_event)

    return attach
