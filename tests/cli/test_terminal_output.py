"""Every command's output path, walked on a real terminal (a pty) with a payload of OSC 52
(clipboard), OSC 0 (window title), a CSI (colours) and a zero-width space: none of it reaches
the terminal as it is; each path shows it visibly (so the test knows the payload got there)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pexpect
import pytest

from tests.cli.conftest import DI_CODE, cli_env
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn
from tests.support.wire import HttpError

PAYLOAD = "\x1b]52;c;ZXZpbA==\x07\x1b]0;pwned\x07\x1b[31;7mred\u200bzw"
RAW = ("\x1b]52", "\x1b]0;pwned", "\x1b[31;7m", "\u200b")
SHOWN = "␛]52;c;ZXZpbA==␇␛]0;pwned␇␛[31;7mred<U+200B>zw"
IN_JSON = "\\u001b]52;c;ZXZpbA==\\u0007\\u001b]0;pwned\\u0007\\u001b[31;7mred\\u200bzw"

FAILING_SERVER = f"""
import json, sys
request = json.loads(sys.stdin.readline())
error = {{"code": -32000, "message": {json.dumps(PAYLOAD)}}}
print(json.dumps({{"jsonrpc": "2.0", "id": request["id"], "error": error}}), flush=True)
sys.stdin.readline()
"""


def on_terminal(home: Path, where: Path, server: LLMServer | None, *args: str) -> str:
    """All `di-code ARGS` writes to its terminal (stdin, stdout and stderr a pty)."""
    child = pexpect.spawn(
        DI_CODE,
        list(args),
        cwd=str(where),
        env=cli_env(home, server, TERM="xterm-256color", PAGER="cat"),
        dimensions=(40, 200),
        encoding="utf-8",
        timeout=30,
    )
    try:
        output = child.read()
    finally:
        child.close(force=True)
    return str(output)


def assert_safe(output: str, evidence: str) -> None:
    for raw in RAW:
        assert raw not in output, f"{raw!r} reached the terminal:\n{output!r}"
    assert evidence in output, output


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A trustable project whose folder name carries the payload."""
    folder = tmp_path / f"proj{PAYLOAD}"
    (folder / ".git").mkdir(parents=True)
    config = folder / ".di-code" / "config.toml"
    config.parent.mkdir(mode=0o755)
    config.write_text('[permissions]\nmode = "accept-edits"\n', encoding="utf-8")
    config.chmod(0o644)
    return folder


@pytest.mark.parametrize("fmt", ["text", "json", "stream-json"])
def test_run_shows_the_answer_safely(
    llm_server: LLMServer, di_code_home: Path, tmp_path: Path, fmt: str
) -> None:
    llm_server.script(Turn(text=f"answer {PAYLOAD}"))
    output = on_terminal(di_code_home, tmp_path, llm_server, "run", "--output-format", fmt, "hi")
    assert_safe(output, SHOWN if fmt == "text" else IN_JSON)


def test_run_shows_a_server_error_body_safely(
    llm_server: LLMServer, di_code_home: Path, tmp_path: Path
) -> None:
    llm_server.script(HttpError(400, f"bad {PAYLOAD}", error_type="invalid_request_error"))
    assert_safe(on_terminal(di_code_home, tmp_path, llm_server, "run", "hi"), SHOWN)


def test_a_usage_error_quoting_the_command_line_is_shown_safely(
    di_code_home: Path, tmp_path: Path
) -> None:
    output = on_terminal(di_code_home, tmp_path, None, "run", "--model", f"{PAYLOAD}/x", "hi")
    assert_safe(output, SHOWN)


def test_mcp_list_shows_a_server_error_safely(di_code_home: Path, tmp_path: Path) -> None:
    script = tmp_path / "failing_server.py"
    script.write_text(FAILING_SERVER, encoding="utf-8")
    table = {"command": sys.executable, "args": [str(script)], "timeout": 10}
    lines = [f"{key} = {json.dumps(value)}" for key, value in table.items()]
    (di_code_home / "config.toml").write_text(
        "[mcp_servers.bad]\n" + "\n".join(lines) + "\n", encoding="utf-8"
    )
    assert_safe(on_terminal(di_code_home, tmp_path, None, "mcp", "list"), SHOWN)


def test_trust_and_its_list_and_revoke_show_the_folder_safely(
    di_code_home: Path, project: Path
) -> None:
    for args in (["trust"], ["trust", "--list"], ["trust", "--revoke"]):
        assert_safe(on_terminal(di_code_home, project, None, *args), SHOWN)


def test_undo_and_its_list_show_the_prompt_safely(
    llm_server: LLMServer, di_code_home: Path, tmp_path: Path
) -> None:
    write = ToolCallSpec("write", {"path": "f.txt", "content": "x\n"}, "w1")
    llm_server.script(Turn(tool_calls=(write,)), Turn(text="ok"))
    on_terminal(di_code_home, tmp_path, llm_server, "run", "--yes", f"write {PAYLOAD}")
    assert (tmp_path / "f.txt").exists()
    assert_safe(on_terminal(di_code_home, tmp_path, None, "undo", "--list"), SHOWN)
    assert_safe(on_terminal(di_code_home, tmp_path, None, "undo", "--yes"), SHOWN)
    assert not (tmp_path / "f.txt").exists()


def test_chat_shows_the_answer_safely(
    llm_server: LLMServer, di_code_home: Path, tmp_path: Path
) -> None:
    llm_server.script(Turn(text=f"answer {PAYLOAD}"))
    child = pexpect.spawn(
        DI_CODE,
        ["chat"],
        cwd=str(tmp_path),
        env=cli_env(di_code_home, llm_server, TERM="xterm-256color"),
        dimensions=(40, 200),
        encoding="utf-8",
        timeout=30,
    )
    try:
        child.expect("›")
        child.sendline("hi")
        child.expect("zw")
        seen = str(child.before) + "zw"
        child.sendline("/exit")
        child.expect(pexpect.EOF)
        seen += str(child.before)
    finally:
        child.close(force=True)
    assert_safe(seen, "␛]52;c;ZXZpbA==")


def test_a_warning_line_marks_what_looks_printable_but_is_invisible(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from di_code.cli.output import notify_stderr

    notify_stderr("skipped cmd\u3164.md: x\ufe0e")  # a Hangul filler, a variation selector
    assert capsys.readouterr().err == "di-code: skipped cmd<U+3164>.md: x<U+FE0E>\n"
