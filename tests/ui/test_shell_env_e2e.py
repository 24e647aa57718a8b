"""`!command` in a real chat starts with the environment bash's commands get: a configured
provider's key variable is not in it (its output goes to the model)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.chat import DI_CODE, chatting
from tests.support.llm_server import LLMServer

pytestmark = pytest.mark.skipif(not DI_CODE.exists(), reason="di-code is not installed")


def test_a_configured_key_variable_is_not_in_a_bang_commands_environment(
    llm_server: LLMServer, tmp_path: Path, di_code_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (di_code_home / "config.toml").write_text(
        '[providers.gateway]\napi = "openai"\napi_key_env = "MY_GATEWAY_TOKEN"\n'
        'base_url = "http://127.0.0.1:9/v1"\n'
    )
    monkeypatch.setenv("MY_GATEWAY_TOKEN", "gw-secret-0077")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret-0078")
    with chatting(llm_server, tmp_path) as child:
        child.sendline("!echo tok=${MY_GATEWAY_TOKEN:-unset},${ANTHROPIC_API_KEY:-unset}")
        child.expect("tok=unset,unset")
