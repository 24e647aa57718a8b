"""Issue 23 §8: what di-code writes for the user (sessions, undo backups, chat history, trust
records) is 0600 in 0700 folders, even under umask 0, and a file left readable earlier is
narrowed when it is used again."""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest

from tests.cli.conftest import RunDiCode, cli_env
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn

DI_CODE = str(Path(sys.executable).parent / "di-code")


@pytest.fixture(autouse=True)
def open_umask() -> Iterator[None]:
    """umask 0: every file di-code makes would be 0666 and every folder 0777 by default."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def modes_below(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): mode(p) for p in sorted(folder.rglob("*"))}


def test_sessions_and_undo_backups_are_private(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, di_code_home: Path
) -> None:
    (workspace / "notes.txt").write_text("api_key = sk-old\n")
    write = ToolCallSpec("write", {"path": "notes.txt", "content": "new\n"}, "w1")
    bash = ToolCallSpec("bash", {"command": "seq 1 5000"}, "b1")
    llm_server.script(Turn(tool_calls=(write,)), Turn(tool_calls=(bash,)), Turn(text="done"))
    done = run_di_code("run", "--yes", "rewrite notes")
    assert done.returncode == 0, done.stderr
    found = modes_below(di_code_home / "sessions")
    files = [name for name in found if (di_code_home / "sessions" / name).is_file()]
    assert any(name.endswith(".jsonl") for name in files)
    assert any("checkpoints" in name for name in files), found
    assert any(".bash-output/" in name for name in files), found
    for name, bits in found.items():
        is_file = name in files
        assert bits == (0o600 if is_file else 0o700), (name, oct(bits))
    assert mode(di_code_home / "sessions") == 0o700


def test_trust_records_are_private(tmp_path: Path, di_code_home: Path) -> None:
    import subprocess

    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".di-code").mkdir(mode=0o755)
    (repo / ".di-code" / "config.toml").write_text("[permissions]\nmode = 'auto'\n")
    (repo / ".di-code" / "config.toml").chmod(0o644)
    home = di_code_home / "fresh"
    env = cli_env(home, None)
    done = subprocess.run(
        [DI_CODE, "trust"], cwd=repo, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert modes_below(home) == {"trusted.json": 0o600, "trusted.json.lock": 0o600}
    assert mode(home) == 0o700


def test_chat_history_is_private_and_an_old_readable_one_is_narrowed(
    llm_server: LLMServer, workspace: Path, di_code_home: Path
) -> None:
    history = di_code_home / "history"
    history.write_text("\n# 2026-01-01\n+an old prompt\n")
    history.chmod(0o644)
    di_code_home.chmod(0o755)
    llm_server.script(Turn(text="Hello back."))
    env = cli_env(di_code_home, llm_server, TERM="xterm-256color")
    child = pexpect.spawn(
        DI_CODE, ["chat"], cwd=str(workspace), env=env, encoding="utf-8", timeout=20
    )
    try:
        child.expect("›")
        child.sendline("my key is sk-pasted-secret")
        child.expect("Hello back")
        child.sendline("/exit")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert "sk-pasted-secret" in history.read_text()
    assert (mode(history), mode(di_code_home)) == (0o600, 0o700)


@pytest.mark.skipif(os.getuid() != 0, reason="making a folder another user's needs root")
def test_a_sessions_folder_another_user_owns_is_not_used(
    run_di_code: RunDiCode, llm_server: LLMServer, di_code_home: Path
) -> None:
    planted = di_code_home / "sessions"
    planted.mkdir(mode=0o777)
    os.chown(planted, 65534, 65534)
    bash = ToolCallSpec("bash", {"command": "seq 1 5000"}, "b1")
    llm_server.script(Turn(tool_calls=(bash,)), Turn(text="still works"))
    done = run_di_code("run", "--yes", "hello")
    assert (done.returncode, done.stdout) == (0, "still works\n"), done.stderr
    assert list(planted.iterdir()) == []
    notes = [line for line in done.stderr.splitlines() if "not using" in line]
    stand_ins = [Path(note.rsplit("; using ", 1)[1]) for note in notes]
    try:
        assert len(notes) == 2  # the session's folder and its spill folder, once each
        assert all(f"another user owns {planted}" in note for note in notes)
        (session,) = [p for folder in stand_ins for p in folder.glob("*.jsonl")]
        (spill,) = [p for folder in stand_ins for p in folder.glob("bash-*.log")]
        assert (mode(session), mode(spill)) == (0o600, 0o600)
        assert all(mode(folder) == 0o700 for folder in stand_ins)
        assert "still works" in session.read_text()
    finally:
        import shutil

        for folder in stand_ins:
            shutil.rmtree(folder)
