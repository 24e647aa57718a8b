"""A session's settings as ACP config options: the model and the permission mode, each a select
the editor shows and changes with `session/set_config_option`.

The mode option and ACP's session modes are one value, the permission gate's mode: a change
through either is announced through the other (`config_option_update`, `current_mode_update`).
"""

from __future__ import annotations

from acp import RequestError, helpers
from acp.schema import (
    ConfigOptionUpdate,
    SessionConfigOptionBoolean,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
)

from di_code.acp.live import MODES, LiveSession
from di_code.config.settings import ConfigError
from di_code.setup.model_switch import switch_model

MODEL = "model"
MODE = "mode"
SETTING_COMMANDS = {"model": MODEL, "permissions": MODE}
"""The session's own commands for its options (the chat's `/model` and `/permissions`)."""


def config_options(
    live: LiveSession,
) -> list[SessionConfigOptionSelect | SessionConfigOptionBoolean]:
    """The model (the current one, then the configured and known models) and the mode."""
    model = live.opened.agent.model
    current = f"{model.provider}/{model.id}"
    choices = [SessionConfigSelectOption(value=current, name=current)]
    for choice in live.opened.models():
        if choice.spec != current:
            needs = f"needs {choice.missing_key}" if choice.missing_key else None
            choices.append(
                SessionConfigSelectOption(value=choice.spec, name=choice.spec, description=needs)
            )
    modes = [SessionConfigSelectOption(value=m, name=n, description=d) for m, n, d in MODES]
    return [
        SessionConfigOptionSelect(
            id=MODEL, name="Model", category="model", type="select",
            current_value=current, options=choices,
        ),
        SessionConfigOptionSelect(
            id=MODE, name="Permission mode", category="mode", type="select",
            current_value=live.gate.mode, options=modes,
        ),
    ]  # fmt: skip


def options_update(live: LiveSession) -> ConfigOptionUpdate:
    return ConfigOptionUpdate(
        session_update="config_option_update", config_options=config_options(live)
    )


def switch_mode(live: LiveSession, mode_id: str) -> None:
    """The gate's mode, from the mode option or a session mode (the one check of the id)."""
    for mode, _, _ in MODES:
        if mode == mode_id:
            live.gate.switch(mode)
            live.mode_said = mode  # the editor chose it: its answer and updates say so
            return
    raise RequestError.invalid_params({"value": f"unknown mode {mode_id!r}"})


def mode_updates(live: LiveSession) -> list[object]:
    """The mode the session switched to itself (a plan approved in a build mode), announced
    as a switch through the editor is; nothing when the editor knows the mode."""
    if live.gate.mode == live.mode_said:
        return []
    live.mode_said = live.gate.mode
    return [helpers.update_current_mode(live.gate.mode), options_update(live)]


async def set_option(live: LiveSession, config_id: str, value: str | bool) -> list[object]:
    """Apply one option; the updates to announce besides the answer (which lists them all)."""
    if not isinstance(value, str):
        raise RequestError.invalid_params({"value": f"{config_id!r} takes one of its values"})
    if config_id == MODE:
        switch_mode(live, value)
        return [helpers.update_current_mode(value)]
    if config_id != MODEL:
        raise RequestError.invalid_params({"configId": f"unknown option {config_id!r}"})
    await _switch_model(live, value)
    return []


async def _switch_model(live: LiveSession, spec: str) -> None:
    """As the chat's `/model PROVIDER/ID`: the next request goes to that model."""
    if live.controller is not None:
        raise RequestError.invalid_request({"configId": "a prompt is running: change it after"})
    if live.opened.switch_model is None:
        raise RequestError.invalid_params({"configId": "the model cannot be changed here"})
    try:
        await switch_model(live.opened, spec)
    except ConfigError as exc:
        raise RequestError.invalid_params({"value": str(exc)}) from None


async def setting_command(live: LiveSession, name: str, arg: str) -> tuple[str, list[object]]:
    """`/model [PROVIDER/ID]` or `/permissions [MODE]` typed in the editor: what to say, and
    the updates that announce the change (`config_option_update`, and the mode's own)."""
    option = SETTING_COMMANDS[name]
    if not arg:
        [now] = [o.current_value for o in config_options(live) if o.id == option]
        wanted = "PROVIDER/ID" if option == MODEL else "|".join(m for m, _, _ in MODES)
        return f"{option.capitalize()}: {now} (/{name} {wanted} switches)", []
    try:
        updates = await set_option(live, option, arg)
    except RequestError as exc:
        reason = exc.data if isinstance(exc.data, dict) else {}
        return f"Not switched: {' '.join(map(str, reason.values())) or exc}", []
    return f"{option.capitalize()}: {arg}", [*updates, options_update(live)]
