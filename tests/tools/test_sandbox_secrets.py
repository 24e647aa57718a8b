"""What a sandboxed command cannot see or reach: credential files and DI_CODE_HOME are empty,
and without network no Unix socket of the host outside the workspace answers.

Real bubblewrap, a home folder of planted secrets (HOME points at it), real Unix sockets.
"""

from __future__ import annotations

import os
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from di_code.tools.builtin.bash import BashPolicy, BashTool
from di_code.tools.builtin.support.spill import SpillFolder
from di_code.tools.common.workspace import Workspace
from di_code.tools.process.sandbox import SandboxChoice
from di_code.tools.process.sandbox_mounts import SandboxPaths
from tests.support.bubblewrap import needs_bubblewrap
from tests.tools.conftest import run, text_of

pytestmark = needs_bubblewrap

SECRET = "s3cr3t-value"
PLANTED = (
    ".ssh/id_ed25519",
    ".aws/credentials",
    ".gnupg/private-keys-v1.d/key",
    ".config/gcloud/credentials.db",
    ".kube/config",
    ".config/gh/hosts.yml",
    ".docker/config.json",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
)


@pytest.fixture
def home(outside: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder with a secret in every usual credential file, and a DI_CODE_HOME with
    another project's session; outside /tmp, which the sandbox replaces with its own."""
    folder = outside / "home"
    for name in (*PLANTED, ".di-code/sessions/other/1.jsonl", ".di-code/skills/lint/SKILL.md"):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(f"{SECRET} in {name}\n")
    monkeypatch.setenv("HOME", str(folder))
    return folder


def sandboxed(
    workspace: Path, home: Path, network: bool = False, **paths: tuple[Path, ...]
) -> BashTool:
    choice = SandboxChoice(
        "workspace-write", network, SandboxPaths(di_code_home=home / ".di-code", **paths)
    )
    return BashTool(Workspace.create(workspace), BashPolicy(choice))


async def test_credentials_and_di_code_home_look_empty(workspace: Path, home: Path) -> None:
    (workspace / "notes.txt").write_text("visible\n")
    tool = sandboxed(workspace, home)
    names = " ".join(f"~/{name}" for name in PLANTED)
    result = await run(
        tool, {"command": f"cat notes.txt {names} ~/.di-code/sessions/other/1.jsonl; true"}
    )
    assert SECRET not in text_of(result)
    assert text_of(result).startswith("visible")
    listing = await run(tool, {"command": "find ~/.ssh ~/.aws -mindepth 1 | wc -l"})
    assert text_of(listing) == "0"
    # Of DI_CODE_HOME only the skills are there, read-only.
    listing = await run(tool, {"command": "cd ~/.di-code && find . -mindepth 1"})
    assert text_of(listing).splitlines() == ["./skills", "./skills/lint", "./skills/lint/SKILL.md"]
    assert (await run(tool, {"command": "touch ~/.di-code/skills/lint/x"})).is_error
    # What a command writes there goes nowhere.
    await run(tool, {"command": "echo planted > ~/.ssh/authorized_keys; true"})
    assert not (home / ".ssh/authorized_keys").exists()


async def test_hide_adds_paths_and_reveal_lets_one_through(workspace: Path, home: Path) -> None:
    (home / "private").mkdir()
    (home / "private/notes").write_text(f"{SECRET} private\n")
    (home / ".ssh/known_hosts").write_text("host-key\n")
    tool = sandboxed(
        workspace,
        home,
        hide=(home / "private",),
        reveal=(home / ".npmrc", home / ".ssh/known_hosts"),
    )
    result = await run(
        tool, {"command": "cat ~/private/notes ~/.npmrc ~/.ssh/known_hosts ~/.ssh/id_ed25519"}
    )
    output = text_of(result)
    assert f"{SECRET} in .npmrc" in output
    assert "host-key" in output
    assert f"{SECRET} in .ssh/id_ed25519" not in output
    assert f"{SECRET} private" not in output


async def test_long_output_below_a_hidden_di_code_home_stays_readable(
    workspace: Path, home: Path
) -> None:
    """A session's full-output files live in DI_CODE_HOME, hidden: they are bound back."""
    session = home / ".di-code/sessions/this/2.jsonl"
    session.parent.mkdir(parents=True)
    choice = SandboxChoice("workspace-write", False, SandboxPaths(di_code_home=home / ".di-code"))
    policy = BashPolicy(choice, spill=SpillFolder.for_session(session))
    tool = BashTool(Workspace.create(workspace), policy)
    spill = (await run(tool, {"command": "seq 1 3000"})).details["full_output_path"]
    assert text_of(await run(tool, {"command": f"tail -n 1 {spill}"})) == "3000"
    other = await run(tool, {"command": f"cat {home}/.di-code/sessions/other/1.jsonl; true"})
    assert SECRET not in text_of(other)


def unix_server(path: str) -> socket.socket:
    """A listening Unix socket: a connect succeeds at once (the backlog holds it)."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(8)
    return server


@pytest.fixture
def host_sockets() -> Iterator[list[str]]:
    """Listening sockets where host services keep theirs: /run (when it is writable here),
    /tmp, elsewhere (/var/tmp), and an abstract one."""
    made: list[str] = []
    servers = []
    run_folder = Path("/run")
    if os.access(run_folder, os.W_OK):
        made.append(tempfile.mktemp(prefix="di-code-test-", suffix=".sock", dir=run_folder))
    made.append(tempfile.mktemp(prefix="di-code-test-", suffix=".sock", dir="/tmp"))
    made.append(tempfile.mktemp(prefix="di-code-test-", suffix=".sock", dir="/var/tmp"))
    made.append(f"\0di-code-test-{os.getpid()}")
    try:
        servers = [unix_server(path) for path in made]
        yield made
    finally:
        for server in servers:
            server.close()
        for path in made:
            if not path.startswith("\0"):
                Path(path).unlink(missing_ok=True)


CONNECT = (
    "import socket, sys\n"
    "for path in sys.argv[1:]:\n"
    "    s = socket.socket(socket.AF_UNIX)\n"
    "    try:\n"
    "        s.connect(path.replace('@', '\\0', 1))\n"
    "        print('reached', path)\n"
    "    except OSError as e:\n"
    "        print('refused', path, e.errno)\n"
)


async def test_without_network_only_the_workspace_sockets_answer(
    workspace: Path, home: Path, host_sockets: list[str]
) -> None:
    inside = str(workspace / "app.sock")
    server = unix_server(inside)
    try:
        (workspace / "connect.py").write_text(CONNECT)
        shown = [path.replace("\0", "@") for path in host_sockets]
        result = await run(
            sandboxed(workspace, home),
            {"command": f"python3 connect.py {inside} {' '.join(shown)}"},
        )
    finally:
        server.close()
    lines = text_of(result).splitlines()
    assert lines[0] == f"reached {inside}"
    assert [line.split()[0] for line in lines[1:]] == ["refused"] * len(shown), lines
