"""Session files with branches, written the way chat writes them or by hand (the tree's tests)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from di_code.agent import Agent
from di_code.ai.providers.faux import create_faux_provider
from di_code.ai.types import AssistantMessage, TextContent, UserMessage
from di_code.session import Session, SessionStore
from di_code.setup.prepared import Prepared
from di_code.ui.tree_view import CURSOR


def answer(text: str) -> AssistantMessage:
    return AssistantMessage([TextContent(text)], "p", "m")


def prompt(text: str) -> UserMessage:
    return UserMessage([TextContent(text)])


def two_branches(tmp_path: Path) -> Session:
    """one → first answer, then two branches: "two" (the old one) and "other" (current)."""
    session = SessionStore(tmp_path / "home").create(tmp_path)
    session.append_message(prompt("one"))
    point = session.append_message(answer("first answer"))
    session.append_message(prompt("two\nsecond line"))
    session.append_message(answer("old branch"))
    session.append_message(answer("old branch again"))
    session.branch_from(point.id)
    session.append_checkpoint(2, "rewind", "files", "")
    session.append_message(prompt("other"))
    session.append_message(answer("new branch"))
    return session


def setup_with(session: Session | None, tmp_path: Path) -> Prepared:
    """A chat set up on `session` (None: unsaved) with a model that is never asked."""
    faux = create_faux_provider([])
    agent = Agent(faux.provider, faux.model, messages=session.context() if session else [])
    store = SessionStore(tmp_path / "home")
    return Prepared(agent, session=session, store=store, workspace=tmp_path)


def write_session(path: Path, entries: list[dict]) -> Path:
    lines = [{"type": "session", "version": 1, "id": "s1", "cwd": "/w", "timestamp": 1}, *entries]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def user_entry(entry_id: str, parent: str | None, text: str) -> dict:
    message = {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}
    return {
        "type": "message",
        "id": entry_id,
        "parent_id": parent,
        "timestamp": 5,
        "message": message,
    }


def cursor_on(text: str) -> Callable[[list[str]], bool]:
    """Whether the line the cursor is on names `text` (for a screen's lines)."""
    return lambda lines: any(line.startswith(CURSOR) and text in line for line in lines)
