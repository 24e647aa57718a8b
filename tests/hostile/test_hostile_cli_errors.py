"""Hostile input through the real `di-code` command line, as a new user would type it: every
bad configuration, flag, key or address ends in the one place for errors
(di_code.cli.guarded.guarded) as ONE line, exit 2 when it is the user's to fix, no
traceback and no key; a `--base-url` server is sent no key it was not given."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.cli.conftest import API_KEY, RunDiCode
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn

MODEL = ("--model", "openai/test-model")
SECRET = "sk-hostile-url-secret-0042"


def one_line(done: subprocess.CompletedProcess[str], code: int) -> str:
    """The single `di-code: ...` line of a failed run (asserting that it is single)."""
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("di-code: "), done.stderr
    return lines[0]


def make_fifo(path: Path) -> None:
    os.mkfifo(path)


def make_folder(path: Path) -> None:
    path.mkdir()


def write_not_utf8(path: Path) -> None:
    path.write_bytes(b'model = "\xff"\n')


def write_not_toml(path: Path) -> None:
    path.write_text("model = [\n")


def write_huge(path: Path) -> None:
    with path.open("wb") as file:  # 17 MB of comment: over the 16 MB a settings file may hold
        file.truncate(17 * 1024 * 1024)


@pytest.mark.parametrize(
    "spoil", [make_fifo, make_folder, write_not_utf8, write_not_toml, write_huge]
)
def test_a_user_config_file_that_cannot_be_read_is_one_line_naming_it_and_exit_2(
    run_di_code: RunDiCode, di_code_home: Path, spoil
) -> None:  # fmt: skip
    config = di_code_home / "config.toml"
    spoil(config)
    done = run_di_code("run", "hi")
    assert str(config) in one_line(done, 2)


@pytest.mark.parametrize("value", ["-1", "0", "1e99", "nan"])
def test_an_absurd_max_turns_is_refused_with_exit_2_and_no_traceback(
    run_di_code: RunDiCode, llm_server: LLMServer, value: str
) -> None:
    done = run_di_code("run", "--max-turns", value, "hi")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "--max-turns" in done.stderr
    assert llm_server.requests == []


def test_an_absurd_max_turns_is_one_line(run_di_code: RunDiCode) -> None:
    line = one_line(run_di_code("run", "--max-turns", "-1", "hi"), 2)
    assert "--max-turns" in line


def test_an_unknown_option_or_command_is_one_line_and_exit_2(run_di_code: RunDiCode) -> None:
    assert "--no-such-flag" in one_line(run_di_code("run", "--no-such-flag", "hi"), 2)
    assert "frobnicate" in one_line(run_di_code("frobnicate"), 2)


def test_a_bare_di_code_still_shows_the_help(run_di_code: RunDiCode) -> None:
    done = run_di_code()
    assert done.returncode == 2 and "Commands" in done.stdout + done.stderr


def test_an_unknown_permission_mode_is_one_line_and_exit_2(
    run_di_code: RunDiCode, llm_server: LLMServer
) -> None:
    line = one_line(run_di_code("run", "--permission-mode", "nope", "hi"), 2)
    assert "--permission-mode" in line and "nope" not in line.split("must")[0]
    assert llm_server.requests == []


@pytest.mark.parametrize(
    "url",
    ["ftp://127.0.0.1:9/v1", "javascript:alert(1)", "http://127.0.0.1:9/v1\nX-Injected: 1"],
)
def test_a_base_url_that_is_no_http_address_is_the_user_s_to_fix(
    run_di_code: RunDiCode, url: str
) -> None:
    done = run_di_code("run", "--provider", "openai", *MODEL, "--base-url", url, "hi")
    assert "--base-url" in one_line(done, 2)


def test_a_key_written_into_the_base_url_is_not_echoed_in_the_error(
    run_di_code: RunDiCode,
) -> None:
    url = f"http://user:{SECRET}@127.0.0.1:9/v1"  # port 9 (discard) is closed here
    done = run_di_code("run", "--provider", "openai", *MODEL, "--base-url", url, "hi")
    assert SECRET not in done.stderr + done.stdout
    one_line(done, done.returncode)
    assert done.returncode in (1, 2)


@pytest.mark.parametrize(
    ("value", "said"), [("", "OPENAI_API_KEY"), (f"{SECRET}\nX-Injected: 1", "OPENAI_API_KEY")]
)
def test_a_key_variable_that_is_empty_or_has_a_newline_is_one_line_and_exit_2(
    run_di_code: RunDiCode, llm_server: LLMServer, value: str, said: str
) -> None:
    env = {"OPENAI_API_KEY": value, "DI_CODE_MODEL": "openai/test-model"}
    done = run_di_code("run", "hi", env_extra=env, server=False)
    line = one_line(done, 2)
    assert said in line and SECRET not in done.stderr + done.stdout
    assert llm_server.requests == []


def test_a_base_url_without_a_key_is_sent_no_authorization(
    run_di_code: RunDiCode, llm_server: LLMServer
) -> None:
    llm_server.script(Turn(text="hello"))
    url = llm_server.openai_base_url
    done = run_di_code("run", "--provider", "openai", *MODEL, "--base-url", url, "hi", server=False)
    assert done.returncode == 0, done.stderr
    assert [r.headers.get("authorization") for r in llm_server.requests] == [None]


def test_the_environment_s_key_goes_to_the_base_url_the_user_gave_and_is_never_shown(
    run_di_code: RunDiCode, llm_server: LLMServer
) -> None:
    """README (Models and keys): `--base-url` on your command line gets the provider's key
    from your environment, as that provider's own SDK sends it to its base URL; it is never
    printed. (A project's file cannot set a base URL: Threat model.)"""
    llm_server.script(Turn(text="hello"))
    url = llm_server.openai_base_url
    env = {"OPENAI_API_KEY": API_KEY}
    done = run_di_code(
        "run", "--provider", "openai", *MODEL, "--base-url", url, "hi", env_extra=env, server=False
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert [r.headers.get("authorization") for r in llm_server.requests] == [f"Bearer {API_KEY}"]
    assert API_KEY not in done.stdout + done.stderr


@pytest.mark.parametrize("flag", ["--system-prompt", "--append-system-prompt"])
def test_a_system_prompt_naming_a_fifo_is_one_line_not_a_wait_nor_its_path_sent(
    run_di_code: RunDiCode, llm_server: LLMServer, tmp_path: Path, flag: str
) -> None:
    fifo = tmp_path / "prompt.fifo"
    os.mkfifo(fifo)  # nobody writes it: reading it would wait for ever
    done = run_di_code("run", flag, str(fifo), "hi")
    assert str(fifo) in one_line(done, 2)
    assert llm_server.requests == []


def test_a_huge_system_prompt_file_is_one_line_not_its_path_sent_as_the_prompt(
    run_di_code: RunDiCode, llm_server: LLMServer, tmp_path: Path
) -> None:
    prompt = tmp_path / "prompt.md"
    with prompt.open("wb") as file:  # 17 MB: over the 16 MB a prompt file may hold
        file.truncate(17 * 1024 * 1024)
    done = run_di_code("run", "--system-prompt", str(prompt), "hi")
    assert str(prompt) in one_line(done, 2)
    assert llm_server.requests == []


def test_a_system_prompt_file_replaces_the_prompt_and_context_files_still_follow(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, tmp_path: Path,
    di_code_home: Path,
) -> None:  # fmt: skip
    prompt = tmp_path / "prompt.md"
    prompt.write_text("You are terse.")
    (workspace / "AGENTS.md").write_text("Run the tests with make check.")
    (di_code_home / "CLAUDE.md").write_text("Never touch vendor/.")  # the user's own
    llm_server.script(Turn(text="hello"))
    done = run_di_code("run", "--system-prompt", str(prompt), "hi")
    assert done.returncode == 0, done.stderr
    system = str(llm_server.requests[0].body["messages"][0]["content"])
    assert system.startswith("You are terse.") and "You are di-code" not in system
    assert "Run the tests with make check." in system and "Never touch vendor/." in system


def test_a_max_turns_flag_wins_over_both_config_files(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, di_code_home: Path
) -> None:
    (workspace / ".git").mkdir()
    (workspace / ".di-code").mkdir()
    (workspace / ".di-code" / "config.toml").write_text("[limits]\nmax_turns = 3\n")
    (di_code_home / "config.toml").write_text("[limits]\nmax_turns = 2\n")
    listing = Turn(tool_calls=(ToolCallSpec("ls", {}),))
    llm_server.script(*[listing] * 6, Turn(text="never"))
    done = run_di_code("run", "--max-turns", "4", "list again and again")
    assert done.returncode == 1 and "Turn limit reached (4)" in done.stderr, done.stderr
    assert len([r for r in llm_server.requests if r.method == "POST"]) == 4


def test_ask_mode_runs_the_reading_tools_unasked(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("alpha\n")
    calls = (
        ToolCallSpec("read", {"path": "notes.txt"}, "c1"),
        ToolCallSpec("grep", {"pattern": "alpha"}, "c2"),
        ToolCallSpec("find", {"pattern": "*.txt"}, "c3"),
        ToolCallSpec("ls", {}, "c4"),
        ToolCallSpec("todo", {"todos": [{"content": "look", "status": "pending"}]}, "c5"),
    )
    llm_server.script(Turn(tool_calls=calls), Turn(text="done"))
    done = run_di_code("run", "--permission-mode", "ask", "look around")
    assert done.returncode == 0, done.stderr
    results = [m for m in llm_server.requests[1].body["messages"] if m.get("role") == "tool"]
    assert len(results) == 5
    assert all("declined" not in str(m["content"]).lower() for m in results), results
    assert "alpha" in str(results[0]["content"])


def test_ask_mode_runs_a_task_unasked(run_di_code: RunDiCode, llm_server: LLMServer) -> None:
    call = ToolCallSpec("task", {"description": "job", "prompt": "say hi"}, "t1")
    llm_server.script(Turn(tool_calls=(call,)), Turn(text="the helper's report"), Turn(text="ok"))
    done = run_di_code("run", "--permission-mode", "ask", "delegate")
    assert done.returncode == 0, done.stderr
    posts = [r for r in llm_server.requests if r.method == "POST"]
    assert len(posts) == 3
    results = [m for m in posts[2].body["messages"] if m.get("role") == "tool"]
    assert "the helper's report" in str(results[0]["content"])


def test_a_cloned_project_s_config_that_is_a_fifo_does_not_hang_the_run(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    (workspace / ".git").mkdir()
    (workspace / ".di-code").mkdir()
    os.mkfifo(workspace / ".di-code" / "config.toml")  # nobody writes it
    llm_server.script(Turn(text="hello"))
    done = run_di_code("run", "hi")
    assert done.returncode == 0 and "hello" in done.stdout, done.stderr
    assert "Traceback" not in done.stderr


def test_a_cloned_project_s_config_that_is_not_utf8_is_one_line_naming_it(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    (workspace / ".git").mkdir()
    (workspace / ".di-code").mkdir()
    config = workspace / ".di-code" / "config.toml"
    write_not_utf8(config)
    done = run_di_code("run", "hi")
    assert str(config) in one_line(done, 2)
    assert llm_server.requests == []


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (("--provider", "nope"), 'unknown provider "nope"'),
        (("--model", "nope/x"), 'unknown provider "nope"'),
        (("--output-format", "xml"), "--output-format"),
    ],
)
def test_an_unknown_choice_is_one_line_and_exit_2(
    run_di_code: RunDiCode, llm_server: LLMServer, flags: tuple[str, str], said: str
) -> None:
    assert said in one_line(run_di_code("run", *flags, "hi"), 2)
    assert llm_server.requests == []
