"""Protected paths: a sandboxed command cannot change (or create) the repository's git
directory, `.di-code/`, `.mcp.json`, `.claude/` or DI_CODE_HOME; write and edit ask first.

Real bubblewrap, real git repositories, real commands.
"""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from di_code.tools import default_tools
from di_code.tools.builtin.bash import BashPolicy, BashTool
from di_code.tools.common.workspace import Workspace
from di_code.tools.policy.permissions import (
    NO,
    Approval,
    ApprovalRequest,
    PermissionGate,
    PermissionRules,
    Rule,
)
from di_code.tools.process.protected import protected_path
from di_code.tools.process.sandbox import SandboxChoice
from di_code.tools.process.sandbox_mounts import SandboxPaths
from di_code.ui.approval_view import approval_header
from tests.support.bubblewrap import needs_bubblewrap
from tests.support.gated import gate_tools
from tests.support.processes import until
from tests.tools.conftest import run, text_of


def git(*args: str | Path) -> str:
    done = subprocess.run(
        ["git", *map(str, args)], check=True, capture_output=True, text=True, timeout=30
    )
    return done.stdout.strip()


def repository(folder: Path) -> Path:
    """A real repository with one commit."""
    git("init", "-q", folder)
    (folder / "a.txt").write_text("a\n")
    git("-C", folder, "add", "a.txt")
    git("-C", folder, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    return folder


def sandboxed(*roots: Path, home: Path | None = None) -> BashTool:
    space = Workspace.create(roots[0], roots[1:])
    choice = SandboxChoice("workspace-write", False, SandboxPaths(di_code_home=home))
    return BashTool(space, BashPolicy(choice))


ATTEMPTS = {
    ".git/config": '[filter "x"]\n\tclean = touch /tmp/pwned\n',
    ".git/hooks/pre-commit": "#!/bin/sh\ntouch /tmp/pwned\n",
    ".git/info/attributes": "* filter=x\n",
    ".mcp.json": '{"mcpServers": {"x": {"command": "touch"}}}',
    ".di-code/config.toml": '[permissions]\nmode = "auto"\n',
    ".claude/settings.json": "{}",
}


@needs_bubblewrap
async def test_a_sandboxed_command_cannot_change_or_create_protected_paths(
    tmp_path: Path,
) -> None:
    workspace = repository(tmp_path / "ws")
    config_before = (workspace / ".git/config").read_bytes()
    tool = sandboxed(workspace)
    for path, text in ATTEMPTS.items():
        command = f"mkdir -p \"$(dirname {path})\"; printf '%s' '{text}' >> {path}"
        result = await run(tool, {"command": command})
        assert result.is_error, f"{path}: {text_of(result)}"
    assert (workspace / ".git/config").read_bytes() == config_before
    assert not (workspace / ".git/hooks/pre-commit").exists()
    assert not (workspace / ".git/info/attributes").exists()
    # Nothing is left where a missing protected path was covered.
    for name in (".mcp.json", ".di-code", ".claude"):
        assert not (workspace / name).exists(), name

    result = await run(tool, {"command": "echo ok > b.txt && git status --short b.txt"})
    assert text_of(result) == "?? b.txt"  # git still reads the repository
    assert (workspace / "b.txt").read_text() == "ok\n"


@needs_bubblewrap
async def test_existing_settings_folders_stay_read_only(tmp_path: Path) -> None:
    workspace = repository(tmp_path / "ws")
    (workspace / ".claude").mkdir()
    (workspace / ".claude/settings.json").write_text("{}")
    (workspace / ".mcp.json").write_text("{}")
    tool = sandboxed(workspace)
    for command in (
        "echo '{\"hooks\": 1}' > .claude/settings.json",
        "rm -rf .claude",
        "mv .mcp.json gone.json",
        "echo '{}' > .claude/new.json",
    ):
        result = await run(tool, {"command": command})
        assert result.is_error, command
    assert (workspace / ".claude/settings.json").read_text() == "{}"
    assert (workspace / ".mcp.json").read_text() == "{}"
    assert not (workspace / ".claude/new.json").exists()


@needs_bubblewrap
async def test_a_git_directory_a_git_file_points_to_is_read_only(tmp_path: Path) -> None:
    """A worktree: its `.git` file, its git directory and the main repository's (config and
    hooks live there), here an --add-dir folder, so writable but for the protection."""
    main = repository(tmp_path / "main")
    worktree = tmp_path / "wt"
    git("-C", main, "worktree", "add", "-q", worktree)
    git_file = (worktree / ".git").read_text()
    tool = sandboxed(worktree, main)
    for command in (
        f"echo '[core]' >> {main}/.git/config",
        f"echo hook > {main}/.git/hooks/post-checkout",
        'echo x >> "$(git rev-parse --git-dir)/HEAD"',
        "echo 'gitdir: /elsewhere' > .git",
    ):
        result = await run(tool, {"command": command})
        assert result.is_error, command
    assert not (main / ".git/hooks/post-checkout").exists()
    assert (worktree / ".git").read_text() == git_file
    assert "[core]\n" not in (main / ".git/config").read_text().split("[core]", 1)[1]
    assert (await run(tool, {"command": f"echo ok > {main}/b.txt"})).is_error is False


@needs_bubblewrap
async def test_a_separate_git_directory_inside_the_workspace_is_read_only(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    git("init", "-q", f"--separate-git-dir={workspace / 'gitdata'}", workspace)
    tool = sandboxed(workspace)
    result = await run(tool, {"command": "echo hook > gitdata/hooks/pre-commit"})
    assert result.is_error
    assert not (workspace / "gitdata/hooks/pre-commit").exists()


@needs_bubblewrap
async def test_no_repository_can_be_made_where_there_is_none(tmp_path: Path) -> None:
    """Outside any repository the folder gets no `.git` of the command's making (its hooks
    would run at the user's next commit)."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    result = await run(sandboxed(workspace), {"command": "git init -q . && echo INITIALIZED"})
    assert result.is_error and "INITIALIZED" not in text_of(result)
    assert not (workspace / ".git").exists()


@needs_bubblewrap
async def test_no_nested_repository_can_be_made_in_a_subfolder_workspace(
    outside: Path,
) -> None:
    """Working in a repository's subfolder: a `.git` made there would be the repository git
    uses in it (with its hooks); git still finds the real one."""
    workspace = repository(outside / "repo") / "sub"
    workspace.mkdir()
    tool = sandboxed(workspace)
    result = await run(tool, {"command": "mkdir -p .git/hooks && echo hook > .git/hooks/x"})
    assert result.is_error
    status = await run(tool, {"command": "git rev-parse --show-toplevel"})
    assert text_of(status) == str(outside / "repo")
    assert not (workspace / ".git").exists()


@needs_bubblewrap
async def test_di_code_home_in_a_workspace_folder_is_read_only(tmp_path: Path) -> None:
    workspace, extra = tmp_path / "ws", tmp_path / "extra"
    workspace.mkdir()
    home = extra / ".di-code"
    (home / "sessions").mkdir(parents=True)
    (home / "config.toml").write_text('model = "x/y"\n')
    tool = sandboxed(workspace, extra, home=home)
    for command in (
        f"echo '[permissions]' >> {home}/config.toml",
        f"echo '{{}}' > {home}/trusted.json",
        f"rm -rf {home}",
    ):
        await run(tool, {"command": command})
    assert (home / "config.toml").read_text() == 'model = "x/y"\n'
    assert not (home / "trusted.json").exists()
    assert (await run(tool, {"command": f"echo ok > {extra}/b.txt"})).is_error is False


@needs_bubblewrap
async def test_a_command_still_running_keeps_its_cover_when_another_ends(
    tmp_path: Path,
) -> None:
    """The mount point of a missing `.mcp.json` is shared: it goes only when the last
    command using it ends, never from under one still running."""
    workspace = repository(tmp_path / "ws")
    tool = sandboxed(workspace)
    first = asyncio.create_task(
        run(
            tool,
            {
                "command": "touch started; while [ ! -e go ]; do sleep 0.01; done; "
                "echo '{}' > .mcp.json && echo wrote"
            },
        )
    )
    await until(lambda: (workspace / "started").exists(), "the command to start")
    assert not (await run(tool, {"command": "true"})).is_error  # started and ended meanwhile
    (workspace / "go").touch()
    result = await first
    assert result.is_error and "wrote" not in text_of(result)
    assert not (workspace / ".mcp.json").exists()


class Recorder:
    """An approver that says no and remembers what it was asked."""

    def __init__(self) -> None:
        self.asked: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> Approval:
        self.asked.append(request)
        return NO


def gated(workspace: Path, mode: str, home: Path | None = None, **gate_args: object) -> tuple:
    recorder = Recorder()
    gate = PermissionGate(mode, approver=recorder, **gate_args)  # type: ignore[arg-type]
    space = Workspace.create(workspace)
    gate.protected = lambda raw: protected_path(space, raw, home)
    tools = {tool.name: tool for tool in gate_tools(default_tools(workspace), gate)}
    return tools, recorder, gate


@pytest.mark.parametrize("mode", ["ask", "accept-edits"])
async def test_write_and_edit_ask_before_changing_a_protected_path(
    tmp_path: Path, mode: str
) -> None:
    workspace = repository(tmp_path / "ws")
    (workspace / "sub").mkdir()
    home = workspace / "home"
    home.mkdir()
    allow_all = PermissionRules.parse(allow=["write", "edit", "write:.mcp.json"])
    tools, recorder, gate = gated(workspace, mode, home, rules=allow_all)
    gate.grant([Rule("write"), Rule("edit")])  # "all edits" granted earlier

    config = (workspace / ".git/config").read_text()
    edit = {"path": ".git/config", "old_text": "[core]", "new_text": "[core]\n\tx = 1"}
    writes = [
        ".mcp.json",
        ".di-code/config.toml",
        ".claude/settings.json",
        ".git/hooks/pre-commit",
        "sub/.git/config",
        "home/config.toml",
        f"{workspace}/./.git/../.mcp.json",
    ]
    for path in writes:
        result = await run(tools["write"], {"path": path, "content": "x"})
        assert result.is_error and "declined" in text_of(result), path
    assert (await run(tools["edit"], edit)).is_error

    assert [request.arguments["path"] for request in recorder.asked] == [*writes, ".git/config"]
    assert all("protected" in r.summary or "git directory" in r.summary for r in recorder.asked)
    assert all(request.offers == () for request in recorder.asked)  # no grant covers them
    shown = approval_header(recorder.asked[0]).plain  # the chat question says why
    assert "the MCP servers di-code starts" in shown
    assert (workspace / ".git/config").read_text() == config
    assert not any((workspace / path).exists() for path in writes[:5])

    recorder.asked.clear()
    result = await run(tools["write"], {"path": "src/app.py", "content": "x"})
    assert not result.is_error and recorder.asked == []  # the grant holds elsewhere


async def test_without_a_terminal_a_protected_write_is_refused(tmp_path: Path) -> None:
    workspace = repository(tmp_path / "ws")
    gate = PermissionGate("accept-edits")
    space = Workspace.create(workspace)
    gate.protected = lambda raw: protected_path(space, raw, None)
    write = next(t for t in gate_tools(default_tools(workspace), gate) if t.name == "write")
    result = await run(write, {"path": ".git/hooks/pre-commit", "content": "x"})
    assert result.is_error
    assert "git directory" in text_of(result) and "approval" in text_of(result)
    assert not (workspace / ".git/hooks/pre-commit").exists()
