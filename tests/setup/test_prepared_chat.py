"""The chat runs on what `prepare` returns, as `run` and `acp` do: one set-up, nothing copied
into a second one. Its /model list and switch, its permission mode and bash's state come from
that set-up (the environment `prepare` was given, not this process's)."""

from __future__ import annotations

from pathlib import Path

from di_code.setup.flags import CliOptions
from di_code.setup.prepare import close_prepared, prepare
from tests.cli.conftest import cli_env, request_text
from tests.cli.conftest import workspace as workspace  # the fixture
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn
from tests.support.repl import chat


async def test_the_chat_runs_on_what_prepare_returns(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    llm_server.script(Turn(text="Hello from the server"))
    env = cli_env(di_code_home, llm_server)
    prepared = await prepare(
        CliOptions(no_session=True), env=env, workspace=workspace, notify=print
    )
    try:
        async with chat(prepared) as session:
            session.type("/permissions\r/model openai/other-model\rhi\r")
            await session.answered()
            session.type("/exit\r")
    finally:
        await close_prepared(prepared, prepared.agent.provider)
    listed = {choice.spec: choice.missing_key for choice in prepared.models()}  # /model's list
    assert listed["openai/gpt-5"] is None  # the key is in prepare's environment
    assert listed["anthropic/claude-sonnet-4-5"] == "ANTHROPIC_API_KEY"
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
        prepared = await prepare(given, env=env, workspace=workspace, notify=print)
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


async def test_a_key_read_into_the_conversation_is_not_sent_to_another_provider(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    """Issue 40 item 6, the key as text: the model read OpenAI's key from a file; after `/model`
    to Anthropic the conversation goes there, without that key (its own key is its own)."""
    openai_key, anthropic_key = "sk-openai-key-read-from-env-file", "sk-ant-key-of-the-other-one"
    (workspace / ".env").write_text(f"OPENAI_API_KEY={openai_key}\n")
    with LLMServer() as other:
        llm_server.script(
            Turn(tool_calls=(ToolCallSpec("read", {"path": ".env"}),)), Turn(text="read it")
        )
        other.script(Turn(text="the other one answers"))
        env = {
            **cli_env(di_code_home, llm_server),
            "OPENAI_API_KEY": openai_key,
            "ANTHROPIC_API_KEY": anthropic_key,
            "ANTHROPIC_BASE_URL": other.anthropic_base_url,
        }
        prepared = await prepare(
            CliOptions(no_session=True), env=env, workspace=workspace, notify=print
        )
        try:
            async with chat(prepared) as session:
                session.type("read .env\r")
                await session.answered()
                session.type("/model anthropic/claude-sonnet-4-5\rgo on\r")
                await session.answered()
                session.type("/exit\r")
        finally:
            await close_prepared(prepared, prepared.agent.provider)
        [sent] = other.requests
    assert sent.headers["x-api-key"] == anthropic_key
    assert "OPENAI_API_KEY=***" in request_text(sent.body)
    assert openai_key[4:16] not in request_text(sent.body)
    assert openai_key in request_text(llm_server.requests[1].body)  # its own provider: as read
