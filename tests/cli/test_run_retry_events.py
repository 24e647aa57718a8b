"""`run --output-format stream-json` reports the provider's backoffs as `retry` events."""

from __future__ import annotations

import json

from tests.cli.conftest import RunDiCode
from tests.support.llm_server import HttpError, LLMServer, Turn


def test_a_500_then_success_is_a_retry_event_then_the_answer(
    run_di_code: RunDiCode, llm_server: LLMServer
) -> None:
    llm_server.script(HttpError(500, "boom", headers={"retry-after": "0"}), Turn(text="done"))
    done = run_di_code("run", "--output-format", "stream-json", "hi")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    updates = [line["event"] for line in lines if line["type"] == "message_update"]
    assert updates[:2] == [
        {"type": "start"},
        {"type": "retry", "attempt": 1, "max_retries": 4, "delay": 0.0, "reason": "HTTP 500: boom"},
    ]
    assert lines[-1]["result"] == "done"
