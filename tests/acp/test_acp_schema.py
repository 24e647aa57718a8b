"""The conformance check itself: it knows the methods' answers from the schema and refuses what
ACP v1 does not allow (every editor test runs its flows through it: tests/acp/conftest.py)."""

from __future__ import annotations

from tests.support.acp_schema import SCHEMA, response_types, schema_problems


def test_the_schema_is_the_official_v1_one_and_names_each_answer() -> None:
    assert SCHEMA.stat().st_size > 200_000
    types = response_types()
    assert types["session/new"] == "NewSessionResponse"
    assert types["session/list"] == "ListSessionsResponse"
    assert types["session/set_config_option"] == "SetSessionConfigOptionResponse"


def test_what_acp_v1_does_not_allow_is_refused() -> None:
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}
    good = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s", "update": update},
    }
    assert schema_problems(good) == []
    wrong_kind = {**update, "sessionUpdate": "agent_mumble"}
    assert schema_problems({**good, "params": {"sessionId": "s", "update": wrong_kind}})
    assert schema_problems({k: v for k, v in good.items() if k != "jsonrpc"})
    answer = {"jsonrpc": "2.0", "id": 1, "result": {"sessions": [{"sessionId": "s"}]}}
    assert schema_problems(answer, "session/list")  # a listed session needs its cwd
    assert schema_problems({**answer, "result": {}}, "session/new")  # no sessionId
    assert (
        schema_problems(
            {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid Request"}}
        )
        == []
    )
