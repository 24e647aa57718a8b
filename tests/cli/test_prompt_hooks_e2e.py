"""The user's UserPromptSubmit and Stop hooks in a real `di-code run` (real bash hooks, the
loopback model): a prompt refused before anything is sent, context added to a prompt, a Stop
hook that makes the agent go on once, and one that always objects is bounded."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import RunDiCode, WriteHook, request_text
from tests.support.llm_server import LLMServer, Turn

GUARD = """
input=$(cat)
case "$input" in
  *password*) echo "prompts must not carry passwords" >&2; exit 2 ;;
esac
echo "Ticket context: the release is on Friday."
"""

ONCE = """
input=$(cat)
case "$input" in
  *'"stop_hook_active": false'*) echo "Run the tests before you finish." >&2; exit 2 ;;
esac
exit 0
"""


def user_texts(body: dict[str, object]) -> list[str]:
    messages = body["messages"]
    assert isinstance(messages, list)
    return [json.dumps(m["content"]) for m in messages if m["role"] == "user"]


def test_a_user_prompt_submit_hook_refuses_a_prompt_and_nothing_is_sent(
    run_di_code: RunDiCode, llm_server: LLMServer, user_hook: WriteHook
) -> None:
    user_hook("UserPromptSubmit", "guard.sh", GUARD)
    done = run_di_code("run", "my password is hunter2")
    assert done.returncode == 1
    assert "prompts must not carry passwords" in done.stderr
    assert "Traceback" not in done.stderr
    assert llm_server.requests == []


def test_a_user_prompt_submit_hook_adds_context_to_the_prompt(
    run_di_code: RunDiCode, llm_server: LLMServer, user_hook: WriteHook, tmp_path: Path
) -> None:
    seen = tmp_path / "seen.json"
    body = f"tee {seen} >/dev/null\necho 'Ticket context: the release is on Friday.'\n"
    user_hook("UserPromptSubmit", "ctx.sh", body)
    llm_server.script(Turn(text="noted"))
    done = run_di_code("run", "when do we ship?")
    assert done.returncode == 0, done.stderr
    (prompt,) = user_texts(llm_server.requests[0].body)
    assert "when do we ship?" in prompt and "the release is on Friday." in prompt
    event = json.loads(seen.read_text())
    assert event["hook_event_name"] == "UserPromptSubmit"
    assert event["prompt"] == "when do we ship?"


def test_a_stop_hook_makes_the_agent_go_on_once_with_its_reason(
    run_di_code: RunDiCode, llm_server: LLMServer, user_hook: WriteHook
) -> None:
    user_hook("Stop", "once.sh", ONCE)
    llm_server.script(Turn(text="done, I think"), Turn(text="tests pass; done"))
    done = run_di_code("run", "fix it")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "tests pass; done"
    assert len(llm_server.requests) == 2
    assert "Run the tests before you finish." in user_texts(llm_server.requests[1].body)[-1]


def test_a_stop_hook_that_always_objects_is_bounded(
    run_di_code: RunDiCode, llm_server: LLMServer, user_hook: WriteHook
) -> None:
    always = '{"decision": "block", "reason": "keep going"}'
    user_hook("Stop", "always.sh", f"echo '{always}'\n")
    llm_server.script(*(Turn(text=f"answer {n}") for n in range(10)))
    done = run_di_code("run", "work")
    assert done.returncode == 0, done.stderr
    assert len(llm_server.requests) == 4  # the answer, then three times going on
    assert "keep going" in request_text(llm_server.requests[-1].body)


def test_a_failing_stop_hook_is_reported_and_the_answer_stands(
    run_di_code: RunDiCode, llm_server: LLMServer, user_hook: WriteHook
) -> None:
    user_hook("Stop", "bad.sh", "echo broken >&2\nexit 3\n")
    llm_server.script(Turn(text="the answer"))
    done = run_di_code("run", "work")
    assert done.returncode == 0
    assert done.stdout.strip() == "the answer"
    assert "Stop hook `bash" in done.stderr and "exited 3: broken" in done.stderr
