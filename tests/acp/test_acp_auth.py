"""The key variables as ACP auth methods, seen by the SDK's own client."""

from __future__ import annotations

import asyncio
import json

import pytest

acp = pytest.importorskip("acp", reason="the ACP SDK (di-code[acp]) is not installed")

from acp import PROTOCOL_VERSION, RequestError  # noqa: E402
from acp.stdio import spawn_agent_process  # noqa: E402

from tests.cli.conftest import API_KEY, DI_CODE  # noqa: E402
from tests.support.acp_editor import TIMEOUT, RecordingClient  # noqa: E402


async def test_the_key_variables_are_auth_methods_and_authenticate_says_which_is_set(
    editor_env: dict[str, str],
) -> None:
    async with spawn_agent_process(RecordingClient(), DI_CODE, "acp", env=editor_env) as (
        conn,
        _process,
    ):
        reply = await asyncio.wait_for(conn.initialize(protocol_version=PROTOCOL_VERSION), 30)
        methods = {method.id: method for method in reply.auth_methods}
        openai = methods["openai-api-key"]
        assert openai.type == "env_var" and openai.name == "Use OPENAI_API_KEY"
        assert [(v.name, v.secret) for v in openai.vars] == [("OPENAI_API_KEY", True)]
        assert {"anthropic-api-key", "gemini-api-key", "openrouter-api-key"} <= set(methods)
        await asyncio.wait_for(conn.authenticate(method_id="openai-api-key"), TIMEOUT)
        with pytest.raises(RequestError) as unset:
            await conn.authenticate(method_id="anthropic-api-key")
        assert unset.value.code == -32000
        assert "ANTHROPIC_API_KEY is not set" in json.dumps(unset.value.data)
        with pytest.raises(RequestError) as unknown:
            await conn.authenticate(method_id="nope")
        assert unknown.value.code == -32602
        assert API_KEY not in reply.model_dump_json()
