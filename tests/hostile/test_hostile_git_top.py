"""Where the workspace's work tree is, asked once (README, "What the model is told by default":
the environment block's git line, and "Undo": the prompts' checkpoints take the work tree from
there) attacked with the repositories HOSTILE.md lists: a `.git` file pointing elsewhere, a
`core.worktree` elsewhere, a bare repository laid out in the project, one of another owner, one
made or removed while a chat runs, a session resumed from another folder, a replaced system
prompt, a git that hangs, names git prints badly, a symlinked folder and ACP sessions of several
folders. Each must leave undo exact and the git line true. Real di-code, real git, loopback
model."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import DI_CODE, cli_env
from tests.support.acp_editor import Editor
from tests.support.acp_editor import editor as editor
from tests.support.chat import chatting, say
from tests.support.git import git
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn

TRACKED = "tracked.txt"
ORIGINAL = "the committed text\n"


def committed(folder: Path, *init: str) -> Path:
    """`folder` made a repository with TRACKED committed on branch main."""
    folder.mkdir(parents=True, exist_ok=True)
    git(folder, "init", "-q", "-b", "main", *init)
    (folder / TRACKED).write_bytes(ORIGINAL.encode())
    git(folder, "add", TRACKED)
    git(folder, "commit", "-qm", "first")
    return folder


def di(
    home: Path, server: LLMServer, cwd: Path, *args: str, **env: str
) -> subprocess.CompletedProcess[str]:
    """`di-code ARGS` run in `cwd` (any name: the fixture's workspace is a plain one)."""
    return subprocess.run(
        [DI_CODE, *args],
        cwd=cwd,
        env=cli_env(home, server, **env),
        input="",
        capture_output=True,
        text=True,
        timeout=90,
    )


def bash_turns(server: LLMServer, command: str) -> None:
    """The model's bash runs `command`, then it says "done"."""
    bash = ToolCallSpec("bash", {"command": command}, "c1")
    server.script(Turn(tool_calls=(bash,)), Turn(text="done"))


def write_turns(server: LLMServer, path: str) -> None:
    """The model's write tool writes "model" to `path`, then it says "done"."""
    write = ToolCallSpec("write", {"path": path, "content": "model\n"}, "c1")
    server.script(Turn(tool_calls=(write,)), Turn(text="done"))


def prompt_then_undo(
    home: Path, server: LLMServer, cwd: Path, command: str, *args: str, **env: str
) -> str:
    """One `run` whose bash runs `command`, then `di-code undo --yes` there; undo's output."""
    bash_turns(server, command)
    ran = di(home, server, cwd, "run", "--yes", "--sandbox", "off", *args, "change it", **env)
    assert ran.returncode == 0, ran.stderr
    undone = di(home, server, cwd, "undo", "--yes", **env)
    assert undone.returncode == 0, undone.stdout + undone.stderr
    return undone.stdout + undone.stderr


def git_line(server: LLMServer, request: int = 0) -> str:
    """The environment block's git line (and its status lines) of a request's system prompt."""
    body: Any = server.requests[request].body
    system = next(m["content"] for m in body["messages"] if m["role"] == "system")
    text = system if isinstance(system, str) else "".join(part["text"] for part in system)
    found = re.search(r"^Git: .*(?:\n  .*)*", text, re.M)
    assert found is not None, text
    return found.group(0)


def test_a_linked_worktree_whose_git_file_points_elsewhere_is_snapshotted_and_undone(
    di_code_home: Path, llm_server: LLMServer, tmp_path: Path
) -> None:
    main = committed(tmp_path / "main")
    linked = tmp_path / "linked"
    git(main, "worktree", "add", "-q", "-b", "side", str(linked))
    assert (linked / ".git").is_file()
    (linked / "sub").mkdir()
    said = prompt_then_undo(
        di_code_home, llm_server, linked / "sub",
        f"echo changed > ../{TRACKED} && echo new > ../made.txt",
    )  # fmt: skip
    assert git_line(llm_server).startswith("Git: branch side; working tree clean"), said
    assert (linked / TRACKED).read_text() == ORIGINAL
    assert not (linked / "made.txt").exists()
    assert (main / TRACKED).read_text() == ORIGINAL
    assert sorted(p.name for p in main.iterdir()) == [".git", TRACKED]


def test_a_git_file_pointing_into_another_repository_touches_none_of_its_files(
    di_code_home: Path, llm_server: LLMServer, tmp_path: Path
) -> None:
    """The workspace's `.git` is a file naming another repository's git directory (as a
    planted one would): git takes the workspace as that repository's work tree. Undo restores
    the workspace; the other repository's files, index and HEAD are as they were."""
    other = committed(tmp_path / "other")
    index, head = (other / ".git" / "index").read_bytes(), git(other, "rev-parse", "HEAD")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / ".git").write_text(f"gitdir: {other / '.git'}\n")
    (workspace / TRACKED).write_text("the workspace's own\n")
    said = prompt_then_undo(
        di_code_home, llm_server, workspace, f"echo changed > {TRACKED} && echo x > made.txt"
    )
    assert git_line(llm_server).startswith("Git: branch main;"), said
    assert (workspace / TRACKED).read_text() == "the workspace's own\n", said
    assert not (workspace / "made.txt").exists()
    assert (other / TRACKED).read_text() == ORIGINAL
    assert sorted(p.name for p in other.iterdir()) == [".git", TRACKED]
    assert (other / ".git" / "index").read_bytes() == index
    assert git(other, "rev-parse", "HEAD") == head


def test_a_core_worktree_elsewhere_is_neither_reported_nor_touched(
    di_code_home: Path, llm_server: LLMServer, tmp_path: Path
) -> None:
    """The folder's `.git/config` names another folder as its work tree: di-code's git line
    must not describe that folder as this one, and undo never writes there."""
    elsewhere = committed(tmp_path / "elsewhere")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    git(workspace, "init", "-q", "-b", "hijack")
    git(workspace, "config", "core.worktree", str(elsewhere))
    (elsewhere / "theirs.txt").write_text("not the workspace's\n")
    (workspace / "notes.txt").write_text("mine\n")
    write_turns(llm_server, "notes.txt")
    ran = di(di_code_home, llm_server, workspace, "run", "--yes", "--sandbox", "off", "go")
    assert ran.returncode == 0, ran.stderr
    assert "theirs.txt" not in git_line(llm_server)
    undone = di(di_code_home, llm_server, workspace, "undo", "--yes")
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert (workspace / "notes.txt").read_text() == "mine\n"
    assert (elsewhere / "theirs.txt").read_text() == "not the workspace's\n"
    assert (elsewhere / TRACKED).read_text() == ORIGINAL


def test_a_bare_repository_laid_out_in_the_project_is_not_taken_for_git(
    di_code_home: Path, llm_server: LLMServer, tmp_path: Path
) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    git(workspace, "init", "-q", "--bare")
    (workspace / "notes.txt").write_text("mine\n")
    write_turns(llm_server, "notes.txt")
    ran = di(di_code_home, llm_server, workspace, "run", "--yes", "--sandbox", "off", "go")
    assert ran.returncode == 0, ran.stderr
    line = git_line(llm_server)
    assert line == "Git: not a git repository" or "cannot use bare repository" in line, line
    head = (workspace / "HEAD").read_bytes()
    undone = di(di_code_home, llm_server, workspace, "undo", "--yes")
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert (workspace / "notes.txt").read_text() == "mine\n"
    assert (workspace / "HEAD").read_bytes() == head
    assert not list((workspace / "refs").rglob("di-code"))


@pytest.mark.skipif(os.geteuid() != 0, reason="another owner's repository needs root")
@pytest.mark.parametrize("name", ["project", "not a git repository"])
def test_a_repository_of_another_owner_is_named_as_such_and_undone_from_backups(
    di_code_home: Path, llm_server: LLMServer, tmp_path: Path, name: str
) -> None:
    """Root runs di-code in a repository the user `di-code-ci` owns: git refuses it (dubious
    ownership). The git line says the state is unknown, never "not a git repository" (even in
    a folder whose name says so), and the write is undone from its backup."""
    uid = 999 if name == "project" else 12345
    workspace = committed(tmp_path / name)
    subprocess.run(["chown", "-R", f"{uid}:{uid}", str(workspace)], check=True, timeout=30)
    (workspace / "notes.txt").write_text("mine\n")
    write_turns(llm_server, "notes.txt")
    ran = di(di_code_home, llm_server, workspace, "run", "--yes", "--sandbox", "off", "go")
    assert ran.returncode == 0, ran.stderr
    line = git_line(llm_server)
    assert line.startswith("Git: state unknown") and "dubious ownership" in line, line
    undone = di(di_code_home, llm_server, workspace, "undo", "--yes")
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert (workspace / "notes.txt").read_text() == "mine\n"
    assert (workspace / TRACKED).read_text() == ORIGINAL


def test_a_repository_made_after_the_chat_started_snapshots_the_first_prompt(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    """The chat starts outside git; the user runs `git init` before typing: the first prompt
    is inside a work tree, so what its bash changed is undone."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    bash_turns(llm_server, f"echo changed > {TRACKED}")
    with chatting(llm_server, workspace, "--yes", "--sandbox", "off") as child:
        committed(workspace)
        say(child, "change it", "done")
        assert (workspace / TRACKED).read_text() == "changed\n"
        say(child, "/undo --yes", "Undid|[Nn]othing|failed|cannot")
        child.expect("›")
    assert (workspace / TRACKED).read_text() == ORIGINAL


def test_a_repository_removed_in_a_chat_is_not_snapshotted_by_the_next_session(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    """Prompt 1's bash removes `.git`; after `/clear` the new session's write is undone from
    its backup (the start-up's work tree is gone)."""
    workspace = committed(tmp_path / "workspace")
    bash_turns(llm_server, "rm -rf .git")
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("write", {"path": TRACKED, "content": "model\n"}, "c2"),)),
        Turn(text="written"),
    )
    with chatting(llm_server, workspace, "--yes", "--sandbox", "off") as child:
        say(child, "drop git", "done")
        assert not (workspace / ".git").exists()
        say(child, "/clear")
        child.expect("›")
        say(child, "write it", "written")
        assert (workspace / TRACKED).read_text() == "model\n"
        say(child, "/undo --yes", "Undid|[Nn]othing|failed|cannot")
        child.expect("›")
    assert (workspace / TRACKED).read_text() == ORIGINAL


def test_a_repository_made_in_a_chat_is_snapshotted_by_the_next_session(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    """Prompt 1's bash runs `git init` and commits; after `/clear` the new session's bash
    change to the committed file is undone (the folder is a work tree now)."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / TRACKED).write_text(ORIGINAL)
    identity = "-c user.name=t -c user.email=t@t"
    bash_turns(llm_server, f"git init -q && git add {TRACKED} && git {identity} commit -qm x")
    bash_turns(llm_server, f"echo changed > {TRACKED}")
    with chatting(llm_server, workspace, "--yes", "--sandbox", "off") as child:
        say(child, "make a repository", "done")
        assert (workspace / ".git").is_dir()
        say(child, "/clear")
        child.expect("›")
        say(child, "change it", "done")
        assert (workspace / TRACKED).read_text() == "changed\n"
        say(child, "/undo --yes", "Undid|[Nn]othing|failed|cannot")
        child.expect("›")
    assert (workspace / TRACKED).read_text() == ORIGINAL


def test_a_session_resumed_elsewhere_is_refused_and_in_its_folder_made_a_repository_snapshotted(
    di_code_home: Path, llm_server: LLMServer, tmp_path: Path
) -> None:
    """A session begun outside git: `run --session` from a repository's folder is refused
    before the model is asked (nothing runs there); in its own folder, made a repository since,
    the resumed prompt's bash change is undone (the work tree is asked anew, not remembered)."""
    plain = tmp_path / "plain"
    plain.mkdir()
    repo = committed(tmp_path / "repo")
    llm_server.script(Turn(text="hello"))
    first = di(di_code_home, llm_server, plain, "run", "--output-format", "json", "hi")
    assert first.returncode == 0, first.stderr
    session = re.search(r'"session_id":\s*"([^"]+)"', first.stdout)
    assert session is not None, first.stdout
    resumed = ("run", "--yes", "--session", session.group(1), "go")
    elsewhere = di(di_code_home, llm_server, repo, *resumed)
    assert elsewhere.returncode == 2 and "go on with it from that folder" in elsewhere.stderr
    assert "Traceback" not in elsewhere.stderr and len(llm_server.requests) == 1
    assert (repo / TRACKED).read_text() == ORIGINAL
    committed(plain)
    said = prompt_then_undo(
        di_code_home, llm_server, plain, f"echo x > made.txt && echo changed > {TRACKED}",
        "--session", session.group(1),
    )  # fmt: skip
    assert (plain / TRACKED).read_text() == ORIGINAL, said
    assert not (plain / "made.txt").exists()


def test_a_replaced_system_prompt_still_leaves_the_checkpoints_in_git(
    di_code_home: Path, llm_server: LLMServer, tmp_path: Path
) -> None:
    repo = committed(tmp_path / "repo")
    said = prompt_then_undo(
        di_code_home, llm_server, repo, f"echo changed > {TRACKED} && echo x > made.txt",
        "--system-prompt", "You are terse.",
    )  # fmt: skip
    assert (repo / TRACKED).read_text() == ORIGINAL, said
    assert not (repo / "made.txt").exists()
    assert "Git:" not in str(llm_server.requests[0].body)


def slow_git(folder: Path, step: str, seen: Path) -> str:
    """PATH with a git first that hangs the first time `step` comes (writing its process id to
    `seen`), and runs the real git otherwise."""
    real = subprocess.run(["which", "git"], capture_output=True, text=True, check=True).stdout
    programs = folder / "bin"
    programs.mkdir()
    (programs / "git").write_text(
        f'#!/bin/sh\ncase " $* " in *" {step} "*) if [ ! -e {seen} ]; then\n'
        f"  echo $$ > {seen}.tmp; mv {seen}.tmp {seen}; exec sleep 60\nfi;; esac\n"
        f'exec {real.strip()} "$@"\n'
    )
    (programs / "git").chmod(0o755)
    return f"{programs}:{os.environ['PATH']}"


@pytest.mark.parametrize("step", ["--show-toplevel", "status"])
def test_a_git_that_hangs_at_start_up_is_not_waited_for_and_undo_still_works(
    di_code_home: Path, llm_server: LLMServer, tmp_path: Path, step: str
) -> None:
    """A slow git first on PATH hangs once, where the work tree is asked or at the status: the
    git line says the state is unknown (the 5 s bound), and the prompt's checkpoint still
    snapshots the work tree (asked again, or taken from the first answer)."""
    seen = tmp_path / "hung"
    path = slow_git(tmp_path, step, seen)
    repo = committed(tmp_path / "repo")
    bash_turns(llm_server, f"echo changed > {TRACKED} && echo x > made.txt")
    ran = di(di_code_home, llm_server, repo, "run", "--yes", "--sandbox", "off", "go", PATH=path)
    assert ran.returncode == 0, ran.stderr
    assert seen.exists()
    assert git_line(llm_server).startswith("Git: state unknown"), git_line(llm_server)
    undone = di(di_code_home, llm_server, repo, "undo", "--yes")
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert (repo / TRACKED).read_text() == ORIGINAL
    assert not (repo / "made.txt").exists()


def test_a_stop_while_git_hangs_at_start_up_ends_di_code_and_its_git(
    di_code_home: Path, llm_server: LLMServer, tmp_path: Path
) -> None:
    """SIGTERM while the work tree's question hangs: di-code ends (the stop's bound, generous
    here) and the hanging git ends with it; the model is never asked."""
    seen = tmp_path / "hung"
    path = slow_git(tmp_path, "--show-toplevel", seen)
    repo = committed(tmp_path / "repo")
    llm_server.script(Turn(text="hello"))
    child = subprocess.Popen(
        [DI_CODE, "run", "go"], cwd=repo, env=cli_env(di_code_home, llm_server, PATH=path),
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        while not seen.exists():
            assert child.poll() is None, child.communicate()
            time.sleep(0.05)
        child.send_signal(signal.SIGTERM)
        _, stderr = child.communicate(timeout=20)
    finally:
        child.kill()
        child.wait()
    assert child.returncode != 0 and b"Traceback" not in stderr, stderr
    hung = int(seen.read_text())
    assert wait_gone(hung), f"git {hung} outlived di-code"
    assert llm_server.requests == []


def wait_gone(pid: int) -> bool:
    """Whether process `pid` ends (or is a zombie) within 10 s."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if state == "Z":
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize(
    "name", [b"ends in a space ", b"line\nbreak", b"not utf-8 \xff\xfe", b"trailing newline\n"]
)
def test_a_work_tree_whose_name_git_prints_badly_is_found_and_undone(
    di_code_home: Path, llm_server: LLMServer, tmp_path: Path, name: bytes
) -> None:
    top = committed(Path(os.fsdecode(bytes(tmp_path) + b"/" + name)))
    (top / "sub").mkdir()
    said = prompt_then_undo(
        di_code_home, llm_server, top / "sub", f"echo changed > ../{TRACKED} && echo x > ../made"
    )
    assert git_line(llm_server).startswith("Git: branch main; working tree clean"), said
    assert (top / TRACKED).read_text() == ORIGINAL, said
    assert not (top / "made").exists()


def test_a_folder_that_is_a_symlink_into_a_repository_is_undone_in_the_repository(
    di_code_home: Path, llm_server: LLMServer, tmp_path: Path
) -> None:
    repo = committed(tmp_path / "repo")
    (repo / "sub").mkdir()
    link = tmp_path / "link"
    link.symlink_to(repo / "sub")
    said = prompt_then_undo(
        di_code_home, llm_server, link, f"echo changed > ../{TRACKED} && echo x > here.txt",
        PWD=str(link),
    )  # fmt: skip
    assert git_line(llm_server).startswith("Git: branch main; working tree clean"), said
    assert (repo / TRACKED).read_text() == ORIGINAL, said
    assert not (repo / "sub" / "here.txt").exists()


async def test_acp_sessions_of_several_folders_each_find_their_own_git(
    editor: Editor, llm_server: LLMServer, workspace: Path, tmp_path: Path
) -> None:
    """One `di-code acp` started in a plain folder: a session in a repository and one in
    another plain folder each get their own git line, and each `/undo` restores its own."""
    repo = committed(tmp_path / "repo")
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "notes.txt").write_text("mine\n")
    in_repo = await editor.new(repo)
    in_plain = await editor.new(plain)
    bash_turns(llm_server, f"echo changed > {TRACKED} && echo x > made.txt")
    await editor.prompt(in_repo, "change it")
    write_turns(llm_server, "notes.txt")
    await editor.prompt(in_plain, "write it")
    lines = [git_line(llm_server, n) for n in range(len(llm_server.requests))]
    assert lines[0].startswith("Git: branch main; working tree clean"), lines
    assert lines[2] == "Git: not a git repository", lines
    await editor.prompt(in_repo, "/undo")
    await editor.prompt(in_plain, "/undo")
    assert (repo / TRACKED).read_text() == ORIGINAL
    assert not (repo / "made.txt").exists()
    assert (plain / "notes.txt").read_text() == "mine\n"


async def test_an_acp_session_whose_folder_becomes_a_repository_before_its_prompt_snapshots_it(
    editor: Editor, llm_server: LLMServer, tmp_path: Path
) -> None:
    """session/new in a plain folder; the user runs `git init` and commits before the first
    prompt: that prompt's bash change is undone (git is asked at the prompt, not at
    session/new)."""
    folder = tmp_path / "later"
    folder.mkdir()
    session = await editor.new(folder)
    committed(folder)
    bash_turns(llm_server, f"echo changed > {TRACKED}")
    await editor.prompt(session, "change it")
    assert (folder / TRACKED).read_text() == "changed\n"
    await editor.prompt(session, "/undo")
    assert (folder / TRACKED).read_text() == ORIGINAL
