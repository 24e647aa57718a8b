"""`initialize` is answered before the ACP SDK is imported (issue 42.2): the SDK's import
(~290 pydantic models) was most of the time an editor waited for it. The answer is checked
against the official ACP v1 schema, as every message of the other editor tests; the SDK is
imported, and serves, from the first request that needs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("acp", reason="the ACP SDK (di-code[acp]) is not installed")

from di_code.acp.stdio import INPUT_NOT_A_PIPE
from tests.cli.conftest import cli_env
from tests.support.acp_agent import request, run_acp
from tests.support.acp_editor import TIMEOUT
from tests.support.acp_schema import schema_problems
from tests.support.imports import CLI_MAIN, offenders

LATER = ("acp", "pydantic", "di_code.acp.server", "di_code.acp.sessions", "di_code.setup.prepare")
"""What only the requests after `initialize` need."""
OFFERED = {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}


def test_initialize_is_answered_without_importing_the_sdk(
    di_code_home: Path, tmp_path: Path
) -> None:
    modules = tmp_path / "modules.json"
    hello = request(0, "initialize", protocolVersion=1, clientCapabilities=OFFERED)
    [answer] = run_acp([hello], di_code_home, modules)
    assert schema_problems(answer, "initialize") == []
    result = answer["result"]
    assert isinstance(result, dict) and result["protocolVersion"] == 1
    assert result["agentInfo"]["name"] == "di-code"
    assert offenders(json.loads(modules.read_text()), LATER) == []


def test_the_first_request_after_it_loads_the_sdk_and_is_answered(
    di_code_home: Path, tmp_path: Path
) -> None:
    modules = tmp_path / "modules.json"
    hello = request(0, "initialize", protocolVersion=1)
    ask = request(1, "authenticate", methodId="openai-api-key")  # no key set: an error
    answers = run_acp(
        [hello, ask, request(2, "initialize", protocolVersion=9)], di_code_home, modules
    )
    by_id = {answer["id"]: answer for answer in answers}
    assert sorted(by_id) == [0, 1, 2]
    assert by_id[1]["error"]["code"] == -32000  # auth_required, from the SDK's agent
    assert by_id[2]["result"]["protocolVersion"] == 1  # the highest both speak
    assert all(schema_problems(a, "initialize" if a["id"] != 1 else None) == [] for a in answers)
    assert "acp" in json.loads(modules.read_text())


@pytest.mark.parametrize(
    "params",
    [{}, {"protocolVersion": "1"}, {"protocolVersion": -1}, {"protocolVersion": 65536}, []],
    ids=["missing", "a string", "negative", "over uint16", "an array"],
)
def test_initialize_without_a_valid_protocol_version_is_invalid_params(
    di_code_home: Path, tmp_path: Path, params: object
) -> None:
    line = json.dumps({"jsonrpc": "2.0", "id": 5, "method": "initialize", "params": params})
    [answer] = run_acp([line], di_code_home, tmp_path / "modules.json")
    assert answer["error"]["code"] == -32602 and "protocolVersion" in answer["error"]["data"]
    assert schema_problems(answer) == []


def test_capabilities_of_a_wrong_type_read_as_not_offered(
    di_code_home: Path, tmp_path: Path
) -> None:
    """As the schema says (`x-deserialize-default-on-error`); the SDK answered `fs: 5` with an
    internal error."""
    hello = request(0, "initialize", protocolVersion=1, clientCapabilities={"fs": 5})
    [answer] = run_acp([hello], di_code_home, tmp_path / "modules.json")
    assert "result" in answer and schema_problems(answer, "initialize") == []


@pytest.mark.parametrize("given", ["file", "/dev/null"])
def test_input_from_a_file_or_a_device_is_one_line(
    di_code_home: Path, tmp_path: Path, given: str
) -> None:
    """The loop waits only on a pipe, a socket or a terminal: `< /dev/null` printed a
    traceback and an internal error."""
    source = Path(given)
    if given == "file":
        source = tmp_path / "requests.jsonl"
        source.write_text(request(0, "initialize", protocolVersion=1) + "\n")
    with source.open("rb") as stdin:
        done = subprocess.run(
            [sys.executable, "-c", CLI_MAIN, "acp"],
            stdin=stdin, capture_output=True, text=True, timeout=TIMEOUT,
            env=cli_env(di_code_home, None), cwd=tmp_path,
        )  # fmt: skip
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"di-code: {INPUT_NOT_A_PIPE}\n"
