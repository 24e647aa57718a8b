"""The chat runs on what `prepare` returns, as `run` and `acp` do: one set-up, nothing copied
into a second one. Its /model list and switch, its permission mode and bash's state come from
that set-up (the environment `prepare` was given, not this process's)."""

from __future__ import annotations

from pathlib import Path

from di_code.cli.flags import CliOptions
from di_code.cli.setup import close_prepared, prepare
from tests.cli.conftest import cli_env
from tests.support.llm_server import LLMServer, Turn
from tests.ui.test_repl import chat


async def test_the_chat_runs_on_what_prepare_returns(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    llm_server.script(Turn(text="Hello from the server"))
    env = cli_env(di_code_home, llm_server)
    prepared = await prepare(CliOptions(no_session=True), env=env, workspace=workspace)
    try:
        async with chat(prepared) as session:
            session.type("/model\r/permissions\r/model openai/other-model\rhi\r")
            await session.answered()
            session.type("/exit\r")
    finally:
        await close_prepared(prepared, prepared.agent.provider)
    listed = session.output.split("Models (", 1)[1]
    assert "\n   openai/gpt-5\n" in listed  # the key is in prepare's environment
    assert "   anthropic/claude-sonnet-4-5        (set ANTHROPIC_API_KEY)\n" in listed
    assert "Permission mode: ask\nBash runs unsandboxed\n" in session.output
    assert "Hello from the server" in session.output
    assert [request.body["model"] for request in llm_server.requests] == ["other-model"]


async def test_the_chats_model_switch_keeps_the_given_url_and_key(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    """Issue 40 item 6: `/model` of the provider `--base-url` and `--api-key` were given for
    (the same model again, or another) goes to that URL with that key; the URL the environment
    names for the provider (a second loopback server) is never asked."""
    with LLMServer() as public:
        llm_server.script(Turn(text="one"), Turn(text="two"))
        env = {**cli_env(di_code_home, public), "OPENAI_API_KEY": "sk-the-environments-key"}
        given = CliOptions(
            no_session=True,
            model="openai/test-model",
            base_url=llm_server.openai_base_url,
            api_key="sk-given-for-server-a-0001",
        )
        prepared = await prepare(given, env=env, workspace=workspace)
        try:
            async with chat(prepared) as session:
                session.type("/model openai/test-model\rhi\r")
                await session.answered()
                session.type("/model openai/other-model\rhi again\r")
                await session.answered()
                session.type("/exit\r")
        finally:
            await close_prepared(prepared, prepared.agent.provider)
        assert public.requests == []
    assert [r.body["model"] for r in llm_server.requests] == ["test-model", "other-model"]
    keys = {r.headers["authorization"] for r in llm_server.requests}
    assert keys == {"Bearer sk-given-for-server-a-0001"}
