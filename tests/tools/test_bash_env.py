"""The provider keys di-code holds never reach a bash command's environment."""

from __future__ import annotations

from pathlib import Path

import pytest

from di_code.agent import AgentTool
from di_code.tools.builtin.bash import BashTool
from di_code.tools.builtin.support.bash_policy import BashPolicy
from di_code.tools.common.workspace import Workspace
from di_code.tools.process.program_env import KEY_VARIABLES
from tests.tools.conftest import run, text_of

SECRET = "sk-never-in-bash-0042"


async def test_known_key_variables_are_not_in_env(
    tools: dict[str, AgentTool], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(name, SECRET)
    monkeypatch.setenv("DI_CODE_TEST_VISIBLE", "kept")
    output = text_of(await run(tools["bash"], {"command": "env"}))
    assert SECRET not in output
    assert "DI_CODE_TEST_VISIBLE=kept" in output


async def test_configured_key_variables_are_not_in_env(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_GATEWAY_TOKEN", SECRET)
    policy = BashPolicy(hidden_env=KEY_VARIABLES | {"MY_GATEWAY_TOKEN"})
    tool = BashTool(Workspace.create(workspace), policy)
    output = text_of(await run(tool, {"command": "env; echo ${MY_GATEWAY_TOKEN:-unset}"}))
    assert SECRET not in output
    assert output.endswith("unset")
