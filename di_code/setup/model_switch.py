"""Switching a running session's model: the chat's `/model` and an editor's model option.
The next request goes to the new model, the old provider's connections are closed, and the
choice is written to the session at once, so resuming it later goes on with that model
(di_code.setup.model.session_model)."""

from __future__ import annotations

from contextlib import suppress
from typing import TYPE_CHECKING

from di_code.ai.stream import close_provider
from di_code.config.settings import ConfigError
from di_code.session import SessionError

if TYPE_CHECKING:
    from di_code.setup.prepared import Prepared


async def switch_model(prepared: Prepared, spec: str) -> None:
    """ConfigError (one line) when `spec` names no model that can be used."""
    if prepared.switch_model is None:
        raise ConfigError("Switching models is not available here.")
    agent = prepared.agent
    provider, model = prepared.switch_model(spec)
    old, agent.provider, agent.model = agent.provider, provider, model
    if provider is not old:
        await close_provider(old)
    session = prepared.session
    if session is not None and session.model() != (model.provider, model.id):
        with suppress(SessionError):  # not written (a full disk): the next reply's record tries
            session.append_model_change(model.provider, model.id)
