"""`di-code run` through the Responses API and Gemini, end to end: a tool call executed and
its result accepted on the next request, with the reasoning the API asks for sent back."""

from __future__ import annotations

from pathlib import Path

from tests.cli.conftest import RunDiCode
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn
from tests.support.wire_gemini import signature_of

LS = (ToolCallSpec("ls", {"path": "."}, "call_ls"),)


def test_a_tool_round_trip_through_the_responses_api(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, di_code_home: Path
) -> None:
    (di_code_home / "config.toml").write_text('[providers.openai]\napi = "openai-responses"\n')
    (workspace / "a.py").write_text("")
    llm_server.script(Turn(thinking="List first.", tool_calls=LS), Turn(text="One file: a.py."))
    done = run_di_code(
        "run", "--no-session", "what is here?", env_extra={"DI_CODE_MODEL": "openai/gpt-5"}
    )
    assert (done.returncode, done.stdout) == (0, "One file: a.py.\n"), done.stderr
    first, second = (r.body for r in llm_server.requests if r.method == "POST")
    assert first["include"] == ["reasoning.encrypted_content"] and first["store"] is False
    reasoning, call, output = second["input"][1:4]
    assert reasoning == {
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "List first."}],
        "encrypted_content": "sig-1",
    }
    assert call == {
        "type": "function_call",
        "call_id": "call_ls",
        "name": "ls",
        "arguments": '{"path": "."}',
    }
    assert output["call_id"] == "call_ls" and "a.py" in output["output"]


def test_a_tool_round_trip_through_gemini(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    (workspace / "a.py").write_text("")
    turn = Turn(thinking="List first.", tool_calls=LS)
    llm_server.script(turn, Turn(text="One file: a.py."))
    env = {
        "DI_CODE_MODEL": "gemini/gemini-2.5-pro",
        "GEMINI_API_KEY": "gem-secret-99",
        "GEMINI_BASE_URL": llm_server.anthropic_base_url,
    }
    done = run_di_code("run", "--no-session", "--thinking", "what is here?", env_extra=env)
    assert (done.returncode, done.stdout) == (0, "One file: a.py.\n"), done.stderr
    first, second = (r.body for r in llm_server.requests if r.method == "POST")
    assert first["generationConfig"]["thinkingConfig"] == {
        "includeThoughts": True,
        "thinkingBudget": 8192,
    }
    model_turn, results = second["contents"][1:3]
    assert model_turn["parts"][-1] == {
        "functionCall": {"name": "ls", "args": {"path": "."}},
        "thoughtSignature": signature_of(turn),
    }
    response = results["parts"][0]["functionResponse"]
    assert response["name"] == "ls" and "a.py" in response["response"]["output"]
    assert "gem-secret-99" not in done.stdout + done.stderr
