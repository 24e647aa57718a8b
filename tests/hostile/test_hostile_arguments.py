"""Tool arguments judged by jsonschema alone, against a hostile model and a hostile tool schema
(an MCP server's or a plugin's): README's Tools in Python ("unknown tools, invalid arguments and
exceptions become error results the model sees"), HOSTILE.md's deep nesting and work that does
not end."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from di_code.agent import ToolResult
from di_code.agent.tool_call import run_tool_call
from di_code.ai import AbortController, TextContent, ToolCall

LIVENESS = 30  # seconds; a bound for "ends", never a speed claim


class SchemaTool:
    """A tool as an MCP server or a plugin describes it: whatever schema it sends."""

    name = "remote"
    description = "A tool with a hostile schema."

    def __init__(self, parameters: dict[str, Any]) -> None:
        self.parameters = parameters
        self.ran = False

    async def execute(self, tool_call_id: str, params: dict[str, Any]) -> list[TextContent]:
        self.ran = True
        return [TextContent("ran")]


async def judged(tool: SchemaTool, arguments: Any) -> ToolResult:
    call = ToolCall("call-1", tool.name, arguments)
    return await asyncio.wait_for(
        run_tool_call(call, tool, AbortController().signal),  # type: ignore[arg-type]
        LIVENESS,
    )


def error_text(result: ToolResult) -> str:
    assert result.is_error
    first = result.content[0]
    assert isinstance(first, TextContent)
    return first.text


@pytest.fixture
def silent_server() -> Iterator[tuple[str, list[socket.socket]]]:
    """A loopback server that takes connections and never answers; the list holds them."""
    listener = socket.create_server(("127.0.0.1", 0))
    taken: list[socket.socket] = []

    def take() -> None:
        while True:
            try:
                taken.append(listener.accept()[0])
            except OSError:
                return

    threading.Thread(target=take, daemon=True).start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/schema.json", taken
    listener.close()
    for connection in taken:
        connection.close()


async def test_a_schema_ref_to_a_remote_url_fetches_nothing_and_is_an_error_result(
    silent_server: tuple[str, list[socket.socket]],
) -> None:
    """jsonschema's old resolver fetches a remote `$ref` (with urllib, on the loop, with no
    timeout): a schema would send requests from the user's machine, and a server that never
    answers would hold the whole run."""
    url, taken = silent_server
    tool = SchemaTool({"type": "object", "properties": {"a": {"$ref": url}}})
    result = await judged(tool, {"a": "x"})
    assert not tool.ran
    assert "\n" not in error_text(result).strip()
    assert taken == []


@pytest.mark.parametrize(
    "schema",
    [
        {"$ref": "#"},
        {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"},
        {"type": 5},
        {"type": "object", "properties": {"a": {"type": "string", "pattern": "("}}},
        {"type": "object", "properties": {"a": {"$ref": "#/nowhere"}}},
    ],
    ids=["itself", "a-loop", "a-bad-type", "a-bad-pattern", "a-missing-ref"],
)
async def test_a_broken_schema_is_an_error_result_and_the_tool_does_not_run(
    schema: dict[str, Any],
) -> None:
    tool = SchemaTool(schema)
    result = await judged(tool, {"a": "x"})
    assert not tool.ran
    assert error_text(result)


async def test_arguments_nested_thousands_deep_are_an_error_result() -> None:
    deep: dict[str, Any] = {}
    inner = deep
    for _ in range(5000):
        inner["a"] = {}
        inner = inner["a"]
    for schema in ({"type": "object"}, {"type": "object", "additionalProperties": {"$ref": "#"}}):
        tool = SchemaTool(schema)
        result = await judged(tool, deep)
        assert not tool.ran
        assert error_text(result)


def test_a_tool_call_while_jsonschema_is_still_importing_is_judged_once_it_is_there() -> None:
    """The warm-up thread has begun the import when the call comes: both the loop's path
    and the synchronous one wait for it and judge the arguments right."""
    script = textwrap.dedent("""
        import asyncio, json, sys
        from di_code.ai.validation import (
            ToolArgumentsError, checked_tool_arguments, validate_tool_arguments,
            warm_up_validation,
        )

        class Tool:
            name = "t"
            parameters = {"type": "object", "properties": {"n": {"type": "integer"}},
                          "required": ["n"]}

        assert "jsonschema" not in sys.modules
        warm_up_validation()
        outcomes = [asyncio.run(checked_tool_arguments(Tool(), {"n": 1}))]
        try:
            validate_tool_arguments(Tool(), {"n": "one"})
        except ToolArgumentsError as error:
            outcomes.append(str(error).splitlines()[1])
        print(json.dumps(outcomes))
    """)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=LIVENESS
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [{"n": 1}, "  - /n: 'one' is not of type 'integer'"]


def test_a_catastrophic_pattern_in_a_schema_ends() -> None:
    script = textwrap.dedent("""
        from di_code.ai.validation import ToolArgumentsError, validate_tool_arguments

        class Tool:
            name = "t"
            parameters = {"type": "object",
                          "properties": {"a": {"type": "string", "pattern": "^(a+)+$"}}}

        try:
            validate_tool_arguments(Tool(), {"a": "a" * 40 + "!"})
        except ToolArgumentsError:
            print("refused")
    """)
    try:
        done = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, timeout=LIVENESS
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"validation still running after {LIVENESS} s")
    assert done.stdout.strip() == "refused"


async def test_a_catastrophic_pattern_in_a_schema_is_an_error_result_and_the_tool_never_runs() -> (
    None
):
    """The same through the loop's tool call: the model reads why, the run goes on."""
    tool = SchemaTool(
        {"type": "object", "properties": {"a": {"type": "string", "pattern": "^(a+)+$"}}}
    )
    result = await judged(tool, {"a": "a" * 40 + "!"})
    assert not tool.ran
    assert "took more than" in error_text(result)
