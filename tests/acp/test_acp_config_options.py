"""The model and the permission mode as ACP config options, driven by the SDK's own client."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

acp = pytest.importorskip("acp", reason="the ACP SDK (di-code[acp]) is not installed")

from acp import RequestError  # noqa: E402
from acp.schema import ConfigOptionUpdate, CurrentModeUpdate  # noqa: E402

from tests.support.acp_editor import RecordingClient, prompt  # noqa: E402
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn  # noqa: E402


def current(options: list[Any]) -> dict[str, str]:
    return {option.id: option.current_value for option in options}


async def test_a_session_offers_the_model_and_the_mode_as_selects(
    agent: Any, workspace: Path
) -> None:
    conn = await agent(RecordingClient(), "--permission-mode", "accept-edits")
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    model, mode = session.config_options
    assert (model.id, model.category, model.type) == ("model", "model", "select")
    assert model.current_value == "openai/test-model"
    assert model.options[0].value == "openai/test-model"
    known = {o.value: o.description for o in model.options[1:]}
    assert known["openai/gpt-4o"] is None  # the known models follow the current one
    assert any(d and d.startswith("needs ") for d in known.values())  # a missing key named
    assert (mode.id, mode.category, mode.current_value) == ("mode", "mode", "accept-edits")
    assert [o.value for o in mode.options] == ["ask", "accept-edits", "auto", "read-only", "plan"]


async def test_the_model_option_switches_the_next_request(
    agent: Any, llm_server: LLMServer, workspace: Path
) -> None:
    llm_server.script(Turn(text="from the other model"))
    conn = await agent(RecordingClient())
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    reply = await conn.set_config_option(
        config_id="model", session_id=session.session_id, value="openai/other-model"
    )
    assert current(reply.config_options)["model"] == "openai/other-model"
    await prompt(conn, session.session_id, "hello")
    assert llm_server.requests[-1].body["model"] == "other-model"
    for config_id, value in (("model", "no-such-provider/x"), ("colour", "red"), ("mode", "x")):
        with pytest.raises(RequestError) as refused:
            await conn.set_config_option(
                config_id=config_id, session_id=session.session_id, value=value
            )
        assert refused.value.code == -32602


async def test_the_model_chosen_is_the_one_a_later_load_goes_on_with(
    agent: Any, llm_server: LLMServer, workspace: Path
) -> None:
    """Written to the session at once, before any prompt: as the chat's `/model` is."""
    conn = await agent(RecordingClient())
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    await conn.set_config_option(
        config_id="model", session_id=session.session_id, value="openai/other-model"
    )
    await conn.close_session(session_id=session.session_id)
    loaded = await conn.load_session(
        cwd=str(workspace), session_id=session.session_id, mcp_servers=[]
    )
    assert current(loaded.config_options)["model"] == "openai/other-model"


async def test_the_mode_option_and_the_session_modes_are_one_value(
    agent: Any, llm_server: LLMServer, workspace: Path
) -> None:
    client = RecordingClient()
    conn = await agent(client, "--permission-mode", "ask", "--sandbox", "off")
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    reply = await conn.set_config_option(
        config_id="mode", session_id=session.session_id, value="auto"
    )
    assert current(reply.config_options)["mode"] == "auto"
    assert [u.current_mode_id for u in client.of(CurrentModeUpdate)] == ["auto"]
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("bash", {"command": "echo ran"}),)), Turn(text="done")
    )
    await prompt(conn, session.session_id, "run it")
    assert client.asked == []  # auto: nothing asked
    await conn.set_session_mode(session_id=session.session_id, mode_id="read-only")
    [update] = client.of(ConfigOptionUpdate)
    assert current(update.config_options)["mode"] == "read-only"


async def test_the_model_cannot_change_under_a_running_prompt(
    agent: Any, llm_server: LLMServer, workspace: Path
) -> None:
    bash = ToolCallSpec("bash", {"command": "sleep 20"})
    llm_server.script(Turn(tool_calls=(bash,)))
    client = RecordingClient()
    conn = await agent(client, "--permission-mode", "auto", "--sandbox", "off")
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    running = asyncio.create_task(prompt(conn, session.session_id, "sleep"))
    await client.tool_started()
    with pytest.raises(RequestError) as refused:
        await conn.set_config_option(
            config_id="model", session_id=session.session_id, value="openai/other-model"
        )
    assert refused.value.code == -32600
    await conn.cancel(session_id=session.session_id)
    assert (await running).stop_reason == "cancelled"


async def test_the_sessions_own_commands_change_the_options_and_announce_it(
    agent: Any, llm_server: LLMServer, workspace: Path
) -> None:
    client = RecordingClient()
    conn = await agent(client, "--permission-mode", "ask")
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    assert {"model", "permissions"} <= {c.name for c in await client.offered()}
    await prompt(conn, session.session_id, "/model openai/other-model")
    await prompt(conn, session.session_id, "/permissions read-only")
    await prompt(conn, session.session_id, "/model no-such-provider/x")
    first, second = client.of(ConfigOptionUpdate)
    assert current(first.config_options) == {"model": "openai/other-model", "mode": "ask"}
    assert current(second.config_options)["mode"] == "read-only"
    assert [u.current_mode_id for u in client.of(CurrentModeUpdate)] == ["read-only"]
    said = client.said()
    assert "Model: openai/other-model" in said and "Mode: read-only" in said
    assert "Not switched: " in said and "Traceback" not in said
    llm_server.script(Turn(text="hi"))
    await prompt(conn, session.session_id, "hello")
    assert llm_server.requests[-1].body["model"] == "other-model"
