"""`di-code acp` (README, "Editors (ACP)") attacked by a hostile editor and a hostile model.

The editor: `initialize` (answered from plain JSON before the ACP SDK loads, `hello.py`) sent
twice, with every wrong type where the schema wants a number, an object or an id, nested deep
or huge; requests sent while the SDK imports, an import that fails or never ends, stdin closed
and SIGTERM meanwhile. The model: edit and write calls whose arguments disagree about the file,
name it with control characters, go outside the workspace or through a symlinked folder, or
carry hostile `edits`. Every message is checked against the official ACP v1 schema."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("acp", reason="the ACP SDK (di-code[acp]) is not installed")

from acp.schema import ToolCallProgress, ToolCallStart

from tests.acp.conftest import agent as agent
from tests.acp.conftest import workspace as workspace
from tests.cli.conftest import DI_CODE, cli_env
from tests.support.acp_agent import request, run_acp, server_env
from tests.support.acp_agent import stub_gopls as stub_gopls
from tests.support.acp_editor import (
    EDITOR_FS,
    TIMEOUT,
    EditorClient,
    RecordingClient,
    SavingEditor,
    UnsavedEditor,
    calls,
    prompt,
    saving_session,
)
from tests.support.acp_schema import schema_problems
from tests.support.llm_server import LLMServer, Turn

STOP_BOUND = 5
"""Seconds a stop may take on a loaded machine (the stuck import would take 600)."""


def hello(number: int, params: Any) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": number, "method": "initialize", "params": params})


def answers_of(
    lines: list[str], home: Path, tmp_path: Path, count: int | None = None
) -> list[dict[str, Any]]:
    """`di-code acp`'s answers to `lines` (`count` of them: one a line unless said), each
    checked against ACP v1; it must end with 0 when its input closes."""
    if count is None:
        answers = run_acp(lines, home, tmp_path / "modules.json")
    else:
        process = subprocess.Popen(
            [DI_CODE, "acp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, env=cli_env(home, None), cwd=tmp_path,
        )  # fmt: skip
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write("".join(line + "\n" for line in lines).encode())
        process.stdin.flush()
        answers = [json.loads(process.stdout.readline()) for _ in range(count)]
        process.stdin.close()
        assert process.wait(TIMEOUT) == 0
    for answer in answers:
        method = "initialize" if "protocolVersion" in answer.get("result", {}) else None
        assert schema_problems(answer, method) == [], answer
    return answers


# --- a hostile editor -------------------------------------------------------------------


def test_initialize_twice_with_requests_between_answers_each_once_by_its_own_id(
    di_code_home: Path, tmp_path: Path
) -> None:
    """The second `initialize` comes while the SDK is importing for `session/list`: nothing
    is lost, nothing answered twice, each answer carries its request's id."""
    lines = [
        request(1, "initialize", protocolVersion=1),
        request(2, "session/list"),
        request(3, "initialize", protocolVersion=1),
        request(4, "session/list"),
        request(5, "authenticate", methodId="no-such-method"),
    ]
    by_id = {answer["id"]: answer for answer in answers_of(lines, di_code_home, tmp_path)}
    assert sorted(by_id) == [1, 2, 3, 4, 5]
    assert by_id[1]["result"] == by_id[3]["result"]
    assert by_id[2]["result"] == by_id[4]["result"] == {"sessions": []}
    assert by_id[5]["error"]["code"] == -32602


def test_responses_to_nothing_and_unknown_methods_before_initialize_leave_it_answered(
    di_code_home: Path, tmp_path: Path
) -> None:
    """An editor that answers requests never made (a result, an error) and calls a method no
    agent has before `initialize`: the unknown method is `-32601`, the responses are dropped,
    and the requests after them are answered."""
    stray = [
        json.dumps({"jsonrpc": "2.0", "id": 41, "result": {"outcome": "forged"}}),
        json.dumps({"jsonrpc": "2.0", "id": 42, "error": {"code": 1, "message": "x"}}),
    ]
    lines = [request(7, "no/such_method"), request(1, "initialize", protocolVersion=1),
             request(2, "session/list")]  # fmt: skip
    answers = answers_of([*stray, *lines], di_code_home, tmp_path, len(lines))
    by_id = {answer["id"]: answer for answer in answers}
    assert sorted(by_id) == [1, 2, 7]
    assert by_id[7]["error"]["code"] == -32601
    assert by_id[1]["result"]["protocolVersion"] == 1 and by_id[2]["result"] == {"sessions": []}


WRONG_VERSIONS: list[Any] = [True, 1.5, "1", None, [1], {"v": 1}, 1e300, 2**70, -1, 65536]


def test_a_protocol_version_of_every_wrong_type_is_invalid_params_and_the_agent_goes_on(
    di_code_home: Path, tmp_path: Path
) -> None:
    lines = [hello(n, {"protocolVersion": v}) for n, v in enumerate(WRONG_VERSIONS)]
    answers = answers_of([*lines, hello(99, {"protocolVersion": 1})], di_code_home, tmp_path)
    assert [(a["id"], a["error"]["code"]) for a in answers[:-1]] == [
        (n, -32602) for n in range(len(WRONG_VERSIONS))
    ]
    assert answers[-1]["id"] == 99 and answers[-1]["result"]["protocolVersion"] == 1


def test_a_protocol_version_written_1_point_0_is_the_schemas_integer_and_taken(
    di_code_home: Path, tmp_path: Path
) -> None:
    """JSON Schema's `integer` is any number without a fraction: the official schema takes
    `1.0` as version 1 (the SDK's agent did too, before `hello.py` answered)."""
    line = hello(1, {"protocolVersion": 1.0})
    assert schema_problems({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": 1.0}}) == []
    [answer] = answers_of([line], di_code_home, tmp_path)
    assert answer["result"]["protocolVersion"] == 1


def test_an_editor_asking_for_version_0_is_told_the_one_version_di_code_speaks(
    di_code_home: Path, tmp_path: Path
) -> None:
    """ACP: an agent that does not speak the version asked answers with the latest it does.
    di-code speaks v1 only: answering 0 claims a protocol it does not speak."""
    [answer] = answers_of([hello(1, {"protocolVersion": 0})], di_code_home, tmp_path)
    assert answer["result"]["protocolVersion"] == 1


@pytest.mark.parametrize(
    "capabilities",
    [5, "all", [], None, {"fs": []}, {"fs": {"readTextFile": "yes"}, "terminal": "true"}],
    ids=["number", "string", "array", "null", "fs an array", "strings for booleans"],
)
def test_capabilities_of_wrong_types_are_answered_as_not_offered(
    di_code_home: Path, tmp_path: Path, capabilities: Any
) -> None:
    line = hello(1, {"protocolVersion": 1, "clientCapabilities": capabilities})
    [answer] = answers_of([line, request(2, "session/list")], di_code_home, tmp_path)[:1]
    assert answer["result"]["protocolVersion"] == 1


def test_params_that_are_not_an_object_are_refused_and_the_agent_goes_on(
    di_code_home: Path, tmp_path: Path
) -> None:
    lines = [hello(n, params) for n, params in enumerate([None, 5, "x", [], [1]])]
    answers = answers_of([*lines, hello(9, {"protocolVersion": 1})], di_code_home, tmp_path)
    assert [(a["id"], a["error"]["code"]) for a in answers[:-1]] == [
        (0, -32600), (1, -32600), (2, -32600), (3, -32602), (4, -32602)
    ]  # fmt: skip
    assert "result" in answers[-1]


@pytest.mark.parametrize(
    "given", [None, 2**80, "id-" + "x" * 1_000_000, -7], ids=["null", "2**80", "1 MB", "neg"]
)
def test_an_odd_but_valid_id_is_given_back_exactly_by_hello_and_by_the_sdk(
    di_code_home: Path, tmp_path: Path, given: Any
) -> None:
    line = json.dumps({"jsonrpc": "2.0", "id": given, "method": "initialize", "params": {
        "protocolVersion": 1}})  # fmt: skip
    listed = json.dumps({"jsonrpc": "2.0", "id": given, "method": "session/list", "params": {}})
    first, second = answers_of([line, listed], di_code_home, tmp_path)
    assert first["id"] == given and first["result"]["protocolVersion"] == 1
    assert second["id"] == given and second["result"] == {"sessions": []}


def test_a_float_id_is_invalid_request_with_id_null(di_code_home: Path, tmp_path: Path) -> None:
    line = json.dumps({"jsonrpc": "2.0", "id": 1.5, "method": "initialize", "params": {}})
    [answer] = answers_of([line], di_code_home, tmp_path)
    assert answer["id"] is None and answer["error"]["code"] == -32600


def test_an_initialize_nested_100000_deep_or_of_20_mb_leaves_the_agent_answering(
    di_code_home: Path, tmp_path: Path
) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    nested = '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"x":' + deep + "}}"
    huge = hello(2, {"protocolVersion": 1, "clientInfo": {"name": "z" * (20 << 20)}})
    lines = [nested, huge, hello(3, {"protocolVersion": 1})]
    first, second, third = answers_of(lines, di_code_home, tmp_path)
    assert first["error"]["code"] == -32700
    assert second["id"] == 2 and "result" in second
    assert third["id"] == 3 and "result" in third


def shadow_sdk(tmp_path: Path, body: str) -> str:
    """A folder for PYTHONPATH whose `acp` package runs `body` when imported."""
    folder = tmp_path / "shadow"
    (folder / "acp").mkdir(parents=True)
    (folder / "acp" / "__init__.py").write_text(body)
    return str(folder)


def acp_with_sdk(tmp_path: Path, home: Path, body: str) -> subprocess.Popen[bytes]:
    """`di-code acp` whose SDK import runs `body`; `initialize` already answered, and a
    `session/list` sent, which starts the import."""
    env = cli_env(home, None, PYTHONPATH=shadow_sdk(tmp_path, body))
    process = subprocess.Popen(
        [DI_CODE, "acp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write((request(1, "initialize", protocolVersion=1) + "\n").encode())
    process.stdin.flush()
    answer = json.loads(process.stdout.readline())
    assert answer["id"] == 1 and schema_problems(answer, "initialize") == []
    process.stdin.write((request(2, "session/list") + "\n").encode())
    process.stdin.flush()
    return process


def test_a_request_while_the_sdk_fails_to_import_ends_in_one_line(
    di_code_home: Path, tmp_path: Path
) -> None:
    process = acp_with_sdk(tmp_path, di_code_home, "raise ImportError('broken install')\n")
    assert process.wait(TIMEOUT) == 2
    assert process.stderr is not None and process.stdout is not None
    assert process.stderr.read().decode() == (
        "di-code: di-code acp needs the Agent Client Protocol SDK: pip install 'di-code[acp]'\n"
    )
    assert process.stdout.read() == b""


STUCK = (
    "import pathlib, time\npathlib.Path(__file__).with_name('importing').touch()\ntime.sleep(600)\n"
)
"""An SDK whose import never ends (a hung network file system), saying when it started."""


def stuck_import(tmp_path: Path, home: Path) -> subprocess.Popen[bytes]:
    process = acp_with_sdk(tmp_path, home, STUCK)
    marker = tmp_path / "shadow" / "acp" / "importing"
    deadline = time.monotonic() + TIMEOUT
    while not marker.exists():
        assert time.monotonic() < deadline and process.poll() is None, "the import never began"
        time.sleep(0.05)
    return process


def test_stdin_closed_while_the_sdk_imports_ends_the_process_at_once(
    di_code_home: Path, tmp_path: Path
) -> None:
    """README: closing stdin ends the process. A stop never waits for work: not for an
    import that has not ended."""
    process = stuck_import(tmp_path, di_code_home)
    assert process.stdin is not None and process.stderr is not None
    process.stdin.close()
    try:
        code = process.wait(STOP_BOUND)
    finally:
        process.kill()
    assert code == 0 and "Traceback" not in process.stderr.read().decode()


def test_sigterm_while_the_sdk_imports_ends_the_process_at_once(
    di_code_home: Path, tmp_path: Path
) -> None:
    process = stuck_import(tmp_path, di_code_home)
    assert process.stderr is not None
    process.send_signal(signal.SIGTERM)
    try:
        code = process.wait(STOP_BOUND)
    finally:
        process.kill()
    assert code == 128 + signal.SIGTERM and process.stderr.read() == b""


# --- a hostile model ----------------------------------------------------------------------


def shown(client: RecordingClient) -> dict[str, Any]:
    """What the editor was shown of the one tool call: title, locations at its start and end,
    the diffs' paths."""
    [start] = client.of(ToolCallStart)
    ends = [u for u in client.of(ToolCallProgress) if u.status in ("completed", "failed")]
    return {
        "title": start.title,
        "started": [place.path for place in start.locations or []],
        "ended": [place.path for end in ends for place in end.locations or []],
        "diffs": [
            block.path for end in ends for block in end.content or [] if block.type == "diff"
        ],
        "status": [end.status for end in ends],
    }


async def run_one_call(agent: Any, llm_server: LLMServer, workspace: Path, name: str,
                       arguments: dict[str, Any], mode: str = "auto") -> SavingEditor:  # fmt: skip
    llm_server.script(calls((name, arguments)), Turn(text="done"))
    client = SavingEditor()
    conn = await agent(client, "--permission-mode", mode, "--sandbox", "off",
                       capabilities=EDITOR_FS)  # fmt: skip
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    await prompt(conn, session.session_id, "go")
    return client


@pytest.mark.parametrize("tool", ["write", "edit"])
async def test_path_and_file_path_disagreeing_show_and_write_one_and_the_same_file(
    agent: Any, llm_server: LLMServer, workspace: Path, tool: str
) -> None:
    """The model names a.txt as `path` and b.txt as `file_path`. Whichever wins, the file
    written is the one the title, the locations and the diff name (or nothing is written and
    no diff is shown)."""
    a, b = workspace / "a.txt", workspace / "b.txt"
    a.write_text("one\n")
    b.write_text("one\n")
    change = {"content": "two\n"} if tool == "write" else {"old_text": "one", "new_text": "two"}
    arguments = {"path": "a.txt", "file_path": "b.txt", **change}
    client = await run_one_call(agent, llm_server, workspace, tool, arguments)
    seen = shown(client)
    written = [p for p in (a, b) if p.read_text() == "two\n"]
    assert len(written) <= 1
    if written:
        [target] = written
        assert seen["title"] == f"{tool}: {target.name}"
        assert seen["started"] == seen["diffs"] == [str(target)], seen
        assert [path for path, _ in client.writes] == [str(target)]
    else:
        assert seen["diffs"] == [] and client.writes == [] and seen["status"] == ["failed"]


@pytest.mark.parametrize("mode", ["auto", "ask"])
async def test_a_file_name_with_a_newline_and_an_escape_is_shown_inert_and_named_exactly(
    agent: Any, llm_server: LLMServer, workspace: Path, mode: str
) -> None:
    """A title is a line the editor shows (and asks permission under): a newline or an ESC in
    a name must not forge a second line or colour it; the location and the diff name the
    real file, which is the one written; the permission request shows the same."""
    name = "notes\n\x1b[32mAllowed: rm -rf ~\x1b[0m.txt"
    target = workspace / name
    target.write_text("one\n")
    arguments = {"file_path": name, "old_string": "one", "new_string": "two"}
    client = await run_one_call(agent, llm_server, workspace, "edit", arguments, mode)
    seen = shown(client)
    assert target.read_text() == "two\n"
    asked = [
        (call.title, [place.path for place in call.locations or []]) for call, _ in client.asked
    ]
    assert asked == ([] if mode == "auto" else [(seen["title"], [str(target)])])
    assert "\n" not in seen["title"] and "\x1b" not in seen["title"], seen["title"]
    assert seen["started"] == seen["diffs"] == [str(target)]


@pytest.mark.parametrize("where", ["../outside.txt", "alias/secret.txt", "ABSOLUTE"])
async def test_a_path_outside_or_through_a_symlinked_folder_is_never_read_nor_diffed(
    agent: Any, llm_server: LLMServer, workspace: Path, tmp_path: Path, where: str
) -> None:
    """README: a path outside the workspace (`../`, absolute, through a symlinked folder) has
    no diff and is never read, nor asked of the editor; the write tool refuses it."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    (tmp_path / "outside.txt").write_text("secret\n")
    (workspace / "alias").symlink_to(outside)
    path = str(outside / "secret.txt") if where == "ABSOLUTE" else where
    client = await run_one_call(agent, llm_server, workspace, "write",
                                {"file_path": path, "content": "pwned\n"})  # fmt: skip
    seen = shown(client)
    assert (outside / "secret.txt").read_text() == "secret\n"
    assert (tmp_path / "outside.txt").read_text() == "secret\n"
    assert seen["diffs"] == [] and client.writes == [] and seen["status"] == ["failed"]
    assert "secret" not in json.dumps([str(u) for _, u in client.updates]).replace("secret.txt", "")


HOSTILE_EDITS: dict[str, Any] = {
    "null entry": [{"old_string": "one", "new_string": "uno"}, None],
    "mixed spellings": [{"old_string": "one", "new_text": "uno"}],
    "both spellings": [{"old_text": "zzz", "old_string": "one", "new_string": "uno"}],
    "not a list": "one->uno",
    "deep": [{"old_string": "one", "new_string": "uno", "x": json.loads("[" * 900 + "]" * 900)}],
}


@pytest.mark.parametrize("edits", list(HOSTILE_EDITS))
async def test_hostile_edits_entries_change_nothing_or_exactly_what_the_diff_shows(
    agent: Any, llm_server: LLMServer, workspace: Path, edits: str
) -> None:
    notes = workspace / "notes.txt"
    notes.write_text("one\ntwo\n")
    arguments = {"file_path": "notes.txt", "edits": HOSTILE_EDITS[edits]}
    client = await run_one_call(agent, llm_server, workspace, "edit", arguments)
    seen = shown(client)
    diffs = [
        (block.old_text, block.new_text)
        for update in client.of(ToolCallProgress)
        for block in update.content or []
        if block.type == "diff"
    ]
    if notes.read_text() == "one\ntwo\n":
        assert diffs == [] and seen["status"] == ["failed"], seen
    else:
        assert diffs == [("one\ntwo\n", notes.read_text())]
        assert seen["started"] == seen["diffs"] == [str(notes)]


async def test_undo_of_an_opencode_edit_with_servers_found_keeps_unsaved_typing_named_whole(
    agent: Any, llm_server: LLMServer, workspace: Path, di_code_home: Path, stub_gopls: Path
) -> None:
    """Language servers found (write and edit wrapped for diagnostics), opencode's names, a
    file name with a newline, and the user typing in its buffer before `/undo`: the typing is
    kept, the disk undone, and the file named whole in one line (its newline cannot forge a
    second line of the answer)."""
    name = "notes\nDone: nothing changed on disk.txt"
    notes, other = workspace / name, workspace / "other.txt"
    notes.write_text("one\n")
    other.write_text("a\n")
    llm_server.script(
        calls(
            ("edit", {"filePath": name, "oldString": "one", "newString": "two"}),
            ("edit", {"filePath": "other.txt", "edits": [{"oldString": "a", "newString": "c"}]}),
        ),
        Turn(text="ok"),
    )
    client = UnsavedEditor()
    conn = await agent(client, "--permission-mode", "auto", "--sandbox", "off",
                       capabilities=EDITOR_FS,
                       env_extra=server_env("found", stub_gopls, di_code_home))  # fmt: skip
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    await prompt(conn, session.session_id, "edit them")
    assert notes.read_text() == "two\n" and other.read_text() == "c\n"
    client.writes.clear()
    client.unsaved[str(notes)] = "two\nmine\n"  # typed, not saved
    await prompt(conn, session.session_id, "/undo")
    assert client.unsaved == {str(notes): "two\nmine\n"}
    assert client.writes == [(str(other), "a\n")]
    assert notes.read_text() == "one\n" and other.read_text() == "a\n"
    [line] = [ln for ln in client.said().splitlines() if ln.startswith("Changed on disk")]
    assert line.endswith("notes\\x0aDone: nothing changed on disk.txt"), line
    assert "\nDone: nothing" not in client.said(), client.said()


@pytest.mark.parametrize("alias", ["a link to a file", "a link to the workspace"])
async def test_an_edit_through_an_alias_diffs_writes_and_undoes_one_real_file(
    agent: Any, llm_server: LLMServer, workspace: Path, tmp_path: Path, alias: str
) -> None:
    """The model names notes.txt by an alias: a symlink beside it, or an absolute path through
    a link to the workspace. The editor is asked to write the file the diff names, and
    `/undo` restores the bytes of the file that changed."""
    notes = workspace / "notes.txt"
    notes.write_text("one\n")
    if alias == "a link to a file":
        (workspace / "alias.txt").symlink_to("notes.txt")
        name = "alias.txt"
    else:
        (tmp_path / "elsewhere").symlink_to(workspace)
        name = str(tmp_path / "elsewhere" / "notes.txt")
    llm_server.script(
        calls(("edit", {"file_path": name, "old_string": "one", "new_string": "two"})),
        Turn(text="done"),
    )
    client, conn, session_id = await saving_session(agent, workspace)
    await prompt(conn, session_id, "go")
    seen = shown(client)
    if notes.read_text() == "two\n":
        assert [path for path, _ in client.writes] == seen["diffs"] == seen["ended"], seen
        assert Path(seen["diffs"][0]).resolve() == notes
    else:
        assert seen["diffs"] == [] and client.writes == []
    client.writes.clear()
    await prompt(conn, session_id, "/undo")
    assert notes.read_text() == "one\n"
    assert all(Path(path).resolve() == notes for path, _ in client.writes), client.writes


async def test_an_edit_of_a_file_whose_name_is_not_utf8_keeps_the_session_going(
    agent: Any, llm_server: LLMServer, workspace: Path
) -> None:
    """The tools name `caf\\xe9.txt` (Latin-1 bytes) as `caf\\\\xe9.txt`, and the model gives
    that back: the edit lands on that file, every message stays valid UTF-8 JSON (checked
    against the schema), and the session answers the next prompt."""
    raw = os.path.join(os.fsencode(workspace), b"caf\xe9.txt")
    with open(raw, "wb") as f:
        f.write(b"one\n")
    llm_server.script(
        calls(("edit", {"file_path": "caf\\xe9.txt", "old_string": "one", "new_string": "two"})),
        Turn(text="done"),
        Turn(text="still here"),
    )
    client, conn, session_id = await saving_session(agent, workspace)
    await prompt(conn, session_id, "go")
    with open(raw, "rb") as f:
        assert f.read() == b"two\n"
    seen = shown(client)
    assert seen["title"] == "edit: caf\\xe9.txt" and seen["status"] == ["completed"]
    await prompt(conn, session_id, "and?")
    assert client.said().endswith("still here")


@pytest.mark.parametrize("tool", ["write", "edit"])
async def test_a_fifo_named_in_claude_codes_names_with_servers_found_is_never_opened_nor_asked(
    agent: Any, llm_server: LLMServer, workspace: Path, di_code_home: Path, stub_gopls: Path,
    tool: str,
) -> None:  # fmt: skip
    """README: a FIFO has no diff and is never read, nor asked of the editor; the write and
    edit tools refuse it before the editor is asked. With write and edit wrapped for
    diagnostics and `file_path` for `path`, the turn still ends and the editor is asked
    nothing."""
    os.mkfifo(workspace / "pipe")
    change = {"content": "x"} if tool == "write" else {"old_string": "a", "new_string": "b"}
    llm_server.script(calls((tool, {"file_path": "pipe", **change})), Turn(text="done"))
    client = EditorClient({})
    conn = await agent(client, "--permission-mode", "auto", "--sandbox", "off",
                       capabilities=EDITOR_FS,
                       env_extra=server_env("found", stub_gopls, di_code_home))  # fmt: skip
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    await prompt(conn, session.session_id, "go")
    seen = shown(client)
    assert seen["title"] == f"{tool}: pipe" and seen["started"] == [str(workspace / "pipe")]
    assert seen["diffs"] == [] and seen["status"] == ["failed"]
    assert client.served == []


async def test_a_bidi_override_in_a_file_name_is_shown_visibly_in_the_title(
    agent: Any, llm_server: LLMServer, workspace: Path
) -> None:
    """`report\\u202etxt.sh` reads `reporths.txt` in an editor: the title the user approves
    must show the override (as chat shows it, `<U+202E>`), not reorder the name."""
    name = "report\u202etxt.sh"
    (workspace / name).write_text("one\n")
    arguments = {"file_path": name, "old_string": "one", "new_string": "two"}
    client = await run_one_call(agent, llm_server, workspace, "edit", arguments, "ask")
    [(call, _)] = client.asked
    assert "\u202e" not in call.title, call.title
    assert "report<U+202E>txt.sh" in call.title
