"""Permissions attacked from README alone ("Permissions", and what Chat, Config files and Trust
say asks and is allowed): a model's lines shaped to pass an allow rule or to slip past a deny
rule, paths that reach a file or a protected folder by another spelling, a project that widens
its own permissions, and commands built to stall the gate. Each runs a real `di-code run`
against the loopback model server, in a real workspace, and looks at what really happened."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pexpect
import pytest

from tests.cli.conftest import RunDiCode
from tests.support.chat import DI_CODE, needs_di_code, spawn_env
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn
from tests.support.screen import Screen


def user_rules(home: Path, allow: list[str] = (), deny: list[str] = ()) -> None:  # type: ignore[assignment]
    """The user's own permission rules, in DI_CODE_HOME's config."""
    (home / "config.toml").write_text(
        f"[permissions]\nallow = {json.dumps(list(allow))}\ndeny = {json.dumps(list(deny))}\n"
    )


def calls(server: LLMServer, tool: str, arguments: list[dict[str, Any]]) -> list[str]:
    """Script one turn calling `tool` once per arguments (ids c0, c1, ...), then an answer."""
    ids = [f"c{n}" for n in range(len(arguments))]
    specs = tuple(ToolCallSpec(tool, args, id) for args, id in zip(arguments, ids, strict=True))
    server.script(Turn(tool_calls=specs), Turn(text="done"))
    return ids


def results(server: LLMServer) -> dict[str, str]:
    """What the model was told of each tool call, by call id (the last request's tool messages)."""
    messages = server.requests[-1].body["messages"]
    return {m["tool_call_id"]: json.dumps(m["content"]) for m in messages if m["role"] == "tool"}


def git_repo(folder: Path) -> None:
    subprocess.run(["git", "init", "-q", "-b", "main", str(folder)], check=True)


# --- the gate must not stall on a hostile command ---------------------------------------------


def test_a_command_full_of_brackets_and_dollars_is_decided_without_stalling(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    """The catalogue looks for code in subscripts (`a[$(id)]`) with regular expressions; a line
    of 30 KB of `[$` made them backtrack for hours, on the event loop, with no Esc possible."""
    command = "echo '" + "[$" * 15_000 + "' > /dev/null; touch ran.txt"
    [call] = calls(llm_server, "bash", [{"command": command}])
    done = run_di_code("run", "--yes", "go")  # the fixture's 60 s timeout fails the stall
    assert done.returncode == 0, done.stderr
    assert (workspace / "ran.txt").exists(), results(llm_server)[call]


# --- "always" grants -----------------------------------------------------------------------


def run_on_terminal(server: LLMServer, workspace: Path, *args: str) -> tuple[pexpect.spawn, Screen]:
    """`di-code run` in ask mode on a real terminal, where it asks each question."""
    child = pexpect.spawn(
        str(DI_CODE),
        ["run", "--model", "openai/test-model", *args, "go"],
        cwd=str(workspace),
        env=spawn_env(server),
        dimensions=(30, 100),
        encoding="utf-8",
        timeout=20,
    )
    return child, Screen(child, 30)


def always_then(server: LLMServer, workspace: Path, first: str, then: str) -> Screen:
    """Answer "always" to `first`, and "no" to `then` if it is asked; the run's screen."""
    server.script(
        Turn(tool_calls=(ToolCallSpec("bash", {"command": first}, "c1"),)),
        Turn(tool_calls=(ToolCallSpec("bash", {"command": then}, "c2"),)),
        Turn(text="both done"),
    )
    child, screen = run_on_terminal(server, workspace)
    try:
        screen.wait_for(f"? bash: {first}")
        screen.wait_for("don't ask again for")
        child.sendline("a")
        screen.wait_until(
            lambda _: f"? bash: {then}" in screen.text or "both done" in screen.text,
            "the second command asked, or the run's answer",
        )
        if "both done" not in screen.text:
            screen.wait_for("[N]o", after=f"? bash: {then}")
            child.sendline("n")
            screen.wait_for("both done")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    return screen


@needs_di_code
def test_always_for_git_with_an_option_before_its_subcommand_does_not_grant_git_clean(
    llm_server: LLMServer, workspace: Path
) -> None:
    """README: "always" grants the program and its subcommand, and a destructive line only
    exactly ("never another rm"). `git --no-pager log` has no subcommand where one is looked
    for, so it granted all of `git`, and `git clean -fd` then removed files unasked."""
    git_repo(workspace)
    (workspace / "keep.txt").write_text("untracked work\n")
    always_then(llm_server, workspace, "git --no-pager log --oneline", "git clean -fd")
    assert (workspace / "keep.txt").read_text() == "untracked work\n"


@needs_di_code
@pytest.mark.xfail(
    strict=True,
    reason="always for `git --no-pager log` grants all of git: `git config alias` runs unasked",
)
def test_always_for_git_with_an_option_before_its_subcommand_does_not_grant_git_config(
    llm_server: LLMServer, workspace: Path
) -> None:
    """The same grant let `git config` plant an alias that runs any command (`git x` then runs
    it); README promises the program and its subcommand, here `git log`, not all of git."""
    git_repo(workspace)
    always_then(
        llm_server, workspace, "git --no-pager log --oneline", "git config alias.x '!touch P'"
    )
    config = (workspace / ".git" / "config").read_text()
    assert "touch P" not in config


# --- file rules and protected paths --------------------------------------------------------


@pytest.mark.parametrize(
    "spelling",
    [
        "@secrets.env",
        " secrets.env",
        "{workspace}/secrets.env",
        "link/secrets.env",
        "sub/../secrets.env",
    ],
)
def test_a_deny_rule_on_a_file_holds_for_every_spelling_of_its_path(
    run_di_code: RunDiCode,
    llm_server: LLMServer,
    workspace: Path,
    di_code_home: Path,
    spelling: str,
) -> None:
    """README: `write:PATH` matches calls on that file. The write tool strips a leading `@` and
    spaces, takes an absolute path and follows a link; the rule compared the text alone."""
    user_rules(di_code_home, deny=["write:secrets.env"])
    (workspace / "secrets.env").write_text("TOKEN=mine\n")
    (workspace / "sub").mkdir()
    (workspace / "link").symlink_to(".")
    path = spelling.format(workspace=workspace)
    [call] = calls(llm_server, "write", [{"path": path, "content": "TOKEN=theirs\n"}])
    done = run_di_code("run", "--yes", "go")
    assert done.returncode == 0, done.stderr
    assert "deny rule" in results(llm_server)[call]
    assert (workspace / "secrets.env").read_text() == "TOKEN=mine\n"
