"""A resumed session goes on with the model it last used (`/model` records it at once), unless
the command line names one; a model that can no longer be used is said in one line and the
configured one is used instead."""

from __future__ import annotations

from pathlib import Path

from di_code.session import SessionStore
from di_code.setup.flags import CliOptions
from di_code.setup.prepare import close_prepared, prepare
from tests.cli.conftest import cli_env
from tests.cli.conftest import workspace as workspace  # the fixture
from tests.support.llm_server import LLMServer


def stored_with_model(home: Path, workspace: Path, provider: str, model_id: str) -> str:
    session = SessionStore(home).create(workspace, "chat")
    session.append_model_change(provider, model_id)
    session.release()
    return session.id


async def model_of(options: CliOptions, env: dict[str, str], workspace: Path) -> tuple[str, str]:
    said: list[str] = []
    prepared = await prepare(options, env=env, workspace=workspace, notify=said.append)
    await close_prepared(prepared, prepared.agent.provider)
    model = prepared.agent.model
    return f"{model.provider}/{model.id}", "\n".join(said)


async def test_continue_goes_on_with_the_sessions_model_unless_one_is_named(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    stored_with_model(di_code_home, workspace, "openai", "gpt-5-mini")
    env = cli_env(di_code_home, llm_server)  # configured: openai/test-model
    resumed, _ = await model_of(CliOptions(continue_session=True), env, workspace)
    assert resumed == "openai/gpt-5-mini"
    named = CliOptions(continue_session=True, model="openai/other-model")
    assert (await model_of(named, env, workspace))[0] == "openai/other-model"
    assert (await model_of(CliOptions(), env, workspace))[0] == "openai/test-model"  # a new one


async def test_a_sessions_model_without_its_key_gives_way_to_the_configured_one(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    session_id = stored_with_model(di_code_home, workspace, "anthropic", "claude-sonnet-4-5")
    env = cli_env(di_code_home, llm_server)
    model, said = await model_of(CliOptions(session=session_id), env, workspace)
    assert model == "openai/test-model"
    assert said == (
        "the session's model anthropic/claude-sonnet-4-5 is not used: no API key for "
        "anthropic: set ANTHROPIC_API_KEY (or pass --api-key)"
    )
