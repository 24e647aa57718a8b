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
