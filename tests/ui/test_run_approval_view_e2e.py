"""`di-code run` on a terminal in ask mode shows all it asks about (pexpect + pyte): every line
of a 40-line write, the diff of a write over a file, an MCP call's arguments under its
question; what is taller than the terminal shows its ends, and `v` pages the rest."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pexpect

from tests.support.chat import DI_CODE, needs_di_code, spawn_env
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn
from tests.support.screen import Screen

ROOT = Path(__file__).resolve().parents[2]
ASKED = "or type what to do instead:"


def spawn_run(server: LLMServer, workspace: Path, rows: int, **env: str) -> pexpect.spawn:
    return pexpect.spawn(
        str(DI_CODE),
        ["run", "--model", "openai/test-model", "go"],
        cwd=str(workspace),
        env={**spawn_env(server), **env},
        dimensions=(rows, 100),
        encoding="utf-8",
        timeout=30,
    )


def write_call(path: str, content: str) -> Turn:
    return Turn(tool_calls=(ToolCallSpec("write", {"path": path, "content": content}, "w1"),))


def numbered(count: int) -> str:
    return "".join(f"row {n:03d}\n" for n in range(1, count + 1))


@needs_di_code
def test_a_40_line_write_shows_its_last_line(llm_server: LLMServer, tmp_path: Path) -> None:
    llm_server.script(write_call("notes.txt", numbered(40)), Turn(text="Written."))
    child = spawn_run(llm_server, tmp_path, rows=60)
    screen = Screen(child, 60)
    try:
        lines = screen.wait_for(ASKED)
        assert all(f"row {n:03d}" in lines for n in range(1, 41))
        child.sendline("y")
        screen.wait_for("Written.")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert (tmp_path / "notes.txt").read_text() == numbered(40)


@needs_di_code
def test_a_write_taller_than_the_terminal_shows_its_ends_and_v_pages_all(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    llm_server.script(write_call("big.txt", numbered(200)), Turn(text="Written."))
    child = spawn_run(llm_server, tmp_path, rows=30, PAGER="cat")
    screen = Screen(child, 30)
    try:
        lines = screen.wait_for(ASKED)
        assert "row 001" in lines and "row 200" in lines
        assert any("more lines here: press v to see all 200" in line for line in lines)
        assert any(line.startswith("v shows all of it.") for line in lines)
        child.sendline("v")  # the pager (cat here) shows every line, then the question again
        child.expect("row 100")
        child.expect(ASKED)
        child.sendline("n")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert not (tmp_path / "big.txt").exists()


@needs_di_code
def test_a_write_over_a_file_shows_the_diff(llm_server: LLMServer, tmp_path: Path) -> None:
    (tmp_path / "settings.py").write_text("DEBUG = False\nHOSTS = []\n", encoding="utf-8")
    llm_server.script(
        write_call("settings.py", "DEBUG = True\nHOSTS = []\n"), Turn(text="Changed.")
    )
    child = spawn_run(llm_server, tmp_path, rows=30)
    screen = Screen(child, 30)
    try:
        lines = screen.wait_for(ASKED)
        assert "-DEBUG = False" in lines and "+DEBUG = True" in lines
        child.sendline("n")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)


@needs_di_code
def test_an_mcp_call_shows_its_arguments_under_the_question(
    llm_server: LLMServer, tmp_path: Path, di_code_home: Path
) -> None:
    server = {
        "command": sys.executable,
        "args": ["-m", "tests.support.mcp_fixture_server", "stdio"],
        "cwd": str(ROOT),
    }
    lines = [f"{key} = {json.dumps(value)}" for key, value in server.items()]
    (di_code_home / "config.toml").write_text(
        "[mcp_servers.fix]\n" + "\n".join(lines) + "\n", encoding="utf-8"
    )
    reason = "wipe-" + "x" * 150 + "-END"
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("mcp__fix__explode", {"reason": reason}, "m1"),)),
        Turn(text="Done."),
    )
    child = spawn_run(llm_server, tmp_path, rows=30)
    screen = Screen(child, 30)
    try:
        shown = screen.wait_for(ASKED)
        screen.pump(0.5)  # the progress area is not drawn over it, nor erases it
        shown = screen.lines
        text = "".join(shown)
        assert "? mcp__fix__explode" in shown
        assert "MCP server fix · tool explode" in shown
        assert f'"reason": "{reason}"' in text
        child.sendline("n")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)


@needs_di_code
def test_a_30_line_edit_shows_its_whole_diff(llm_server: LLMServer, tmp_path: Path) -> None:
    old = "".join(f"old {n:03d}\n" for n in range(1, 31))
    (tmp_path / "list.txt").write_text(old, encoding="utf-8")
    edit = {"path": "list.txt", "old_text": old, "new_text": numbered(30)}
    llm_server.script(Turn(tool_calls=(ToolCallSpec("edit", edit, "e1"),)), Turn(text="Edited."))
    child = spawn_run(llm_server, tmp_path, rows=80)
    screen = Screen(child, 80)
    try:
        lines = screen.wait_for(ASKED)
        assert all(f"-old {n:03d}" in lines and f"+row {n:03d}" in lines for n in range(1, 31))
        child.sendline("y")
        screen.wait_for("Edited.")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert (tmp_path / "list.txt").read_text() == numbered(30)
