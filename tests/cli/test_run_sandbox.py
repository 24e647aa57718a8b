"""`--sandbox` and `[sandbox]` on a real `di-code run`: the default, the errors, the keys, and
nothing left running after di-code is killed with SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests.cli.conftest import API_KEY, DI_CODE, RunDiCode, cli_env, request_text
from tests.support.bubblewrap import needs_bubblewrap, require_bubblewrap, sleeping
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn
from tests.support.processes import SAFETY_TIMEOUT, wait_until

NO_BUBBLEWRAP = {"PATH": "/nonexistent"}
"""A PATH without bwrap: di-code itself is started by its full path."""


def bash_turns(command: str) -> tuple[Turn, Turn]:
    return Turn(tool_calls=(ToolCallSpec("bash", {"command": command}),)), Turn(text="done")


def test_auto_mode_without_bubblewrap_says_it_runs_unsandboxed(
    run_di_code: RunDiCode, llm_server: LLMServer
) -> None:
    llm_server.script(Turn(text="hi"))
    done = run_di_code("run", "--yes", "hello", env_extra=NO_BUBBLEWRAP)
    assert done.returncode == 0, done.stderr
    notes = [line for line in done.stderr.splitlines() if "unsandboxed" in line]
    assert notes == [
        "di-code: auto mode runs bash unsandboxed: bubblewrap is not installed "
        "(apt-get install bubblewrap, dnf install bubblewrap)"
    ]


def test_auto_mode_with_a_bubblewrap_that_fails_says_why(
    run_di_code: RunDiCode, llm_server: LLMServer, tmp_path: Path
) -> None:
    """A bwrap that cannot make its namespaces (here: a stand-in that always fails)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "bwrap").write_text("#!/bin/sh\nexit 1\n")
    (bin_dir / "bwrap").chmod(0o755)
    llm_server.script(Turn(text="hi"))
    done = run_di_code("run", "--yes", "hello", env_extra={"PATH": str(bin_dir)})
    assert done.returncode == 0, done.stderr
    assert "di-code: auto mode runs bash unsandboxed: bubblewrap cannot create namespaces" in (
        done.stderr
    )


def test_ask_mode_says_nothing_about_the_sandbox(
    run_di_code: RunDiCode, llm_server: LLMServer
) -> None:
    llm_server.script(Turn(text="hi"))
    done = run_di_code("run", "hello", env_extra=NO_BUBBLEWRAP)
    assert done.returncode == 0, done.stderr
    assert "sandbox" not in done.stderr


def test_a_sandbox_that_cannot_be_had_is_a_usage_error(run_di_code: RunDiCode) -> None:
    done = run_di_code("run", "--sandbox", "workspace-write", "hello", env_extra=NO_BUBBLEWRAP)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "di-code: --sandbox workspace-write: bubblewrap is not installed (apt-get install "
        "bubblewrap, dnf install bubblewrap); pass --sandbox off to run bash unsandboxed"
    ]


def test_an_unknown_sandbox_mode_is_a_usage_error(run_di_code: RunDiCode) -> None:
    done = run_di_code("run", "--sandbox", "loose", "hello")
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "di-code: --sandbox must be one of off, workspace-write, read-only"
    )


def test_a_bad_sandbox_setting_names_the_file(run_di_code: RunDiCode, di_code_home: Path) -> None:
    (di_code_home / "config.toml").write_text("[sandbox]\nnetwork = 'yes'\n")
    done = run_di_code("run", "hello")
    assert done.returncode == 2
    assert done.stderr.strip().endswith("config.toml: sandbox.network must be true or false")


@pytest.mark.parametrize("sandbox", [("--sandbox", "off"), ()], ids=["off", "default"])
def test_the_held_key_is_not_in_bash_env(
    run_di_code: RunDiCode, llm_server: LLMServer, sandbox: tuple[str, ...]
) -> None:
    if not sandbox:
        require_bubblewrap()
    llm_server.script(*bash_turns("env"))
    done = run_di_code("run", "--yes", *sandbox, "show env", env_extra={"KEY_COPY": API_KEY})
    assert done.returncode == 0, done.stderr
    tool_result = request_text(llm_server.requests[1].body)
    assert "PATH=" in tool_result
    assert API_KEY not in tool_result
    assert "OPENAI_API_KEY" not in tool_result and "KEY_COPY" not in tool_result


@needs_bubblewrap
def test_a_sandboxed_command_cannot_read_the_key_from_di_codes_proc_entry(
    run_di_code: RunDiCode, llm_server: LLMServer
) -> None:
    """Unsandboxed, a command of the same user could read /proc/<di-code>/environ; in the
    sandbox's pid namespace di-code has no /proc entry at all."""
    dump = "cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' '\\n'"
    llm_server.script(*bash_turns(dump))
    done = run_di_code("run", "--yes", "--api-key", API_KEY, "dump /proc")
    assert done.returncode == 0, done.stderr
    tool_result = request_text(llm_server.requests[1].body)
    assert "PATH=" in tool_result
    assert API_KEY not in tool_result


@needs_bubblewrap
def test_sandbox_settings_from_config(
    run_di_code: RunDiCode, llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    (di_code_home / "config.toml").write_text('[sandbox]\nmode = "read-only"\n')
    llm_server.script(*bash_turns("touch made.txt"))
    done = run_di_code("run", "--yes", "make a file")
    assert done.returncode == 0, done.stderr
    assert "Read-only file system" in request_text(llm_server.requests[1].body)
    assert not (workspace / "made.txt").exists()


@needs_bubblewrap
def test_nothing_survives_di_code_killed_with_sigkill(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    command = "setsid sleep 1000.31 & nohup sleep 1000.32 & sleep 1000.33"
    llm_server.script(Turn(tool_calls=(ToolCallSpec("bash", {"command": command}),)))
    process = subprocess.Popen(
        [DI_CODE, "run", "--yes", "run it"],
        cwd=workspace,
        env=cli_env(di_code_home, llm_server),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    durations = ("1000.31", "1000.32", "1000.33")
    try:
        wait_until(lambda: all(sleeping(d) for d in durations), "the sandboxed commands")
        process.kill()
        process.wait(timeout=SAFETY_TIMEOUT)
        wait_until(lambda: not any(sleeping(d) for d in durations), "no command left")
    finally:
        process.kill()
        for pid in [pid for d in durations for pid in sleeping(d)]:
            os.kill(pid, signal.SIGKILL)
