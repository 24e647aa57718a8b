"""What the chat's pickers are tested with: a model known to think, and saved sessions to list."""

from __future__ import annotations

from pathlib import Path

from di_code.ai.types import AssistantMessage, TextContent, UserMessage
from di_code.session import SessionStore

THINKING_MODEL = "openai/gpt-5-mini"
"""A model known to think: at a URL other than OpenAI's it speaks chat completions, where the
level goes as `reasoning_effort`."""


def saved(store: SessionStore, workspace: Path, prompt: str) -> Path:
    session = store.create(workspace, "chat")
    session.append_message(UserMessage([TextContent(prompt)]))
    session.append_message(AssistantMessage([TextContent("ok")], "openai", "test-model"))
    session.release()
    return session.path
