"""What ties an agent to its session: every message recorded, and a checkpoint before every
prompt so `/undo` and `di-code undo` can take it back."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from di_code.agent.agent import Agent
from di_code.session.git_run import Top, top_and_refs
from di_code.setup.environment import GitState
from di_code.setup.prepared import Notify

if TYPE_CHECKING:
    from di_code.session import Session


def session_recorder(
    workspace: Path, roots: Sequence[Path], notify: Notify, git: GitState | None = None
) -> Callable[[Agent, Session], None]:
    """`attach(agent, session)`, for the session opened now and any the chat switches to.
    `git`: the workspace's git state the system prompt found, whose work tree (and the
    snapshots' refs listed with it) the checkpoints take instead of asking git again (one git
    process fewer per run)."""
    from di_code.tools.common.workspace import Workspace

    files = Workspace.create(workspace, roots)

    def top_known(folder: Path) -> bool:  # a session's folder is resolved already
        return git is not None and git.found and folder == workspace

    def find_top(folder: Path, prefix: str) -> Top | None:
        if git is None or not top_known(folder):
            return top_and_refs(folder, prefix)
        refs = git.refs if git.refs_prefix == prefix else None
        return Top(git.top, refs) if git.top is not None else None

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


def snapshot_refs(session: Session) -> str:
    """The prefix of the refs the session's checkpoints keep their trees under: listed with
    the work tree at start-up (`environment.git_state`), the first checkpoint asks no more."""
    from di_code.session.snapshot_places import refs_prefix

    return refs_prefix(session)
