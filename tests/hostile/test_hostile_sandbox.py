"""The bash sandbox, attacked from README alone ("Sandbox", and the Threat model, Permissions and
Background jobs sentences about it): a command run by root that remounts what is read-only or
writes the kernel's settings, a `bwrap` or `nsenter` the repository ships in a PATH entry, an
`nsenter` that fails, a nested user namespace that binds what lies below a cover, host sockets
that are datagram, hold a newline or were bound by a relative name, signals and ptrace aimed
at a process outside, input pushed into the user's terminal, links a command leaves for
di-code's own write and edit, the home folder as the workspace, workspace names with a
newline, a leading `-`, spaces or a link, what a command can read of di-code's descriptors
and keys, an untrusted project's `[sandbox]` table, and the mount points a kill -9 leaves.

Each case runs real bubblewrap and real commands through the bash tool (or a real `di-code
run` against the loopback model server) and checks the host afterwards: files, processes,
listeners the test started itself.
"""

from __future__ import annotations

import json
import os
import signal as signals
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest

from di_code.tools import default_tools
from di_code.tools.builtin.bash import BashPolicy, BashTool
from di_code.tools.common.workspace import Workspace
from di_code.tools.policy.permissions import PermissionGate
from di_code.tools.process.protected import protected_path
from di_code.tools.process.sandbox import SandboxChoice
from tests.cli.conftest import API_KEY, RunDiCode
from tests.support.bubblewrap import needs_bubblewrap
from tests.support.gated import gate_tools
from tests.support.llm_server import LLMServer, Turn, call
from tests.support.processes import alive
from tests.support.stops import Launch
from tests.tools.conftest import run, text_of

pytestmark = needs_bubblewrap

PYTHON = os.path.realpath(sys.executable)
"""The interpreter itself, not a venv's link to it: a checkout under /tmp is hidden by the
sandbox's private /tmp, the interpreter's own folder is not."""
SECRET = "s3cr3t-of-the-host"


def git_init(folder: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(folder)], check=True, timeout=30)
    return folder


def sandboxed(workspace: Path) -> BashTool:
    return BashTool(Workspace.create(workspace), BashPolicy(SandboxChoice("workspace-write")))


@pytest.fixture
def repo(outside: Path) -> Path:
    """A repository outside /tmp (the sandbox's /tmp is its own)."""
    return git_init(outside / "ws")


@pytest.fixture
def home(outside: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder with a planted private key."""
    folder = outside / "home"
    (folder / ".ssh").mkdir(parents=True)
    (folder / ".ssh/id_ed25519").write_text(f"{SECRET}\n")
    monkeypatch.setenv("HOME", str(folder))
    return folder


# --- Capabilities: the read-only mounts hold against a command that is root -----------------


async def test_a_command_has_no_capability_to_remount_a_protected_path_or_the_host_writable(
    repo: Path, outside: Path
) -> None:
    """README: `.git` is read-only and the file system too, "a command can change none of them".
    As root (CI, containers) bubblewrap keeps every capability unless told: mount(2) then
    turns any read-only bind writable again, on the host's own file system."""
    config = (repo / ".git/config").read_bytes()
    tool = sandboxed(repo)
    caps = await run(tool, {"command": "grep CapEff /proc/self/status"})
    assert text_of(caps).split() == ["CapEff:", "0000000000000000"]
    for command in (
        f"mount -o remount,bind,rw {repo}/.git; echo '[core]pwned' >> {repo}/.git/config",
        f"mount -o remount,bind,rw /; echo escaped > {outside}/escaped",
    ):
        await run(tool, {"command": command})
    assert (repo / ".git/config").read_bytes() == config
    assert not (outside / "escaped").exists()


async def test_a_command_cannot_change_the_kernels_settings(repo: Path) -> None:
    """README: "the whole file system is read-only". /proc/sys is the host kernel's: root
    writes it by the file's mode alone, capabilities or not, and `kernel.core_pattern` names a
    program the kernel runs as the host's root at the next crash. (Each probe writes back the
    value it read: nothing changes, even where the write goes through.)"""
    probes = ("kernel/core_pattern", "kernel/domainname", "vm/overcommit_ratio")
    command = "; ".join(
        f"v=$(cat /proc/sys/{name}) || echo unread; "
        f'(printf "%s\\n" "$v" > /proc/sys/{name}) 2>/dev/null && echo wrote || echo refused'
        for name in probes
    )
    result = await run(sandboxed(repo), {"command": command})
    assert text_of(result).split() == ["refused"] * len(probes), text_of(result)


async def test_a_nested_user_namespace_cannot_bind_what_lies_below_a_cover(
    repo: Path, home: Path
) -> None:
    """A command may make a user and mount namespace of its own (it is root there): a
    non-recursive bind of the workspace or of `/` would show the writable `.git` and the
    secrets below their covers, were they not locked to the mounts above them."""
    config = (repo / ".git/config").read_bytes()
    nested = "unshare -Urm sh -c 'mkdir -p /tmp/m && mount --bind {} /tmp/m && {}'"
    tool = sandboxed(repo)
    wrote = await run(tool, {"command": nested.format(repo, "echo x >> /tmp/m/.git/config")})
    shown = await run(tool, {"command": nested.format("/", f"cat /tmp/m{home}/.ssh/id_ed25519")})
    assert (repo / ".git/config").read_bytes() == config, text_of(wrote)
    assert SECRET not in text_of(shown)


# --- The sandbox's own programs are never the repository's ---------------------------------

IMPOSTOR = '#!/bin/sh\nwhile [ "$1" != "--" ]; do shift; done; shift; exec "$@"\n'
"""A `bwrap` or `nsenter` that drops every option and runs the command as it is."""


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    server = socket.create_server(("127.0.0.1", 0))
    yield server
    server.close()


@pytest.mark.parametrize("entry", ["bin", "{workspace}/bin"])
async def test_a_bwrap_or_nsenter_in_a_path_entry_of_the_workspace_is_not_the_sandbox(
    repo: Path,
    outside: Path,
    listener: socket.socket,
    monkeypatch: pytest.MonkeyPatch,
    entry: str,
) -> None:
    """A relative PATH entry (`bin`, `node_modules/.bin`) is the working folder's, and
    direnv's `PATH_add bin` names the workspace's absolutely: a repository that ships
    `bin/bwrap` or `bin/nsenter` there must not decide how its commands are confined."""
    (repo / "bin").mkdir()
    for name in ("bwrap", "nsenter"):
        (repo / "bin" / name).write_text(IMPOSTOR)
        (repo / "bin" / name).chmod(0o755)
    monkeypatch.chdir(repo)
    monkeypatch.setenv("PATH", f"{entry.format(workspace=repo)}:{os.environ['PATH']}")
    tool = sandboxed(repo)
    port = listener.getsockname()[1]
    await run(tool, {"command": f"echo escaped > {outside}/escaped"})
    reached = await run(tool, {"command": f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"})
    assert not (outside / "escaped").exists()
    assert "connected" not in text_of(reached)


async def test_a_bash_or_rg_in_a_path_entry_of_the_workspace_never_runs(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The programs di-code itself runs around a command, unsandboxed: the shell every
    command (approved or not) starts in, and rg, which grep and find run unasked. A
    repository's `bin/bash` on a relative PATH entry would run instead of the user's."""
    (repo / "bin").mkdir()
    for name in ("bash", "rg"):
        (repo / "bin" / name).write_text(f"#!/bin/sh\ntouch {repo}/ran-{name}\nexit 1\n")
        (repo / "bin" / name).chmod(0o755)
    monkeypatch.chdir(repo)
    monkeypatch.setenv("PATH", f"bin:{os.environ['PATH']}")
    tools = {tool.name: tool for tool in default_tools(repo)}  # bash unsandboxed, as in ask
    await run(tools["bash"], {"command": "echo hello"})
    await run(tools["grep"], {"pattern": "hello"})
    assert not (repo / "ran-bash").exists()
    assert not (repo / "ran-rg").exists()


async def test_where_nsenter_fails_each_command_still_has_no_network_and_the_model_is_told(
    repo: Path,
    outside: Path,
    listener: socket.socket,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """README: where the shared namespace "cannot be done (no nsenter, a kernel that
    refuses), each command has a namespace of its own as before, and the bash tool's
    description tells the model". A broken `nsenter` must not open the host's network."""
    broken = outside / "bin"
    broken.mkdir()
    (broken / "nsenter").write_text("#!/bin/sh\nexit 1\n")
    (broken / "nsenter").chmod(0o755)
    monkeypatch.setenv("PATH", f"{broken}:{os.environ['PATH']}")
    tool = sandboxed(repo)
    port = listener.getsockname()[1]
    reached = await run(tool, {"command": f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"})
    assert reached.is_error and "connected" not in text_of(reached)
    assert "a loopback of its own" in tool.description


# --- Network: the host's sockets ------------------------------------------------------------

CONNECT = (
    "import socket, sys\n"
    "s = socket.socket(socket.AF_UNIX)\n"
    "try:\n"
    "    s.connect(sys.argv[1])\n"
    "    print('reached')\n"
    "except OSError as e:\n"
    "    print('refused', e.errno)\n"
)


SEND = (
    "import socket, sys\n"
    "s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
    "try:\n"
    "    s.sendto(b'from the sandbox', sys.argv[1])\n"
    "    print('sent')\n"
    "except OSError as e:\n"
    "    print('refused', e.errno)\n"
)


async def test_a_host_datagram_socket_is_out_of_reach(repo: Path, outside: Path) -> None:
    """README: without network, "no Unix socket of the host". A datagram socket (a logger's,
    a notify socket) never listens, yet takes whatever is sent to its path."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    server.bind(str(outside / "log.sock"))
    server.setblocking(False)
    try:
        (repo / "send.py").write_text(SEND)
        result = await run(sandboxed(repo), {"command": f"python3 send.py {outside}/log.sock"})
        with pytest.raises(BlockingIOError):
            server.recv(100)
    finally:
        server.close()
    assert text_of(result).startswith("refused"), text_of(result)


async def test_a_host_socket_with_a_newline_in_its_name_is_out_of_reach(
    repo: Path, outside: Path
) -> None:
    """/proc/net/unix is a line-based table, and a socket's name is printed there raw: a
    name with a newline (and spaces) spans two lines."""
    name = outside / "svc\n0000: 00000002 x.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(name))
    server.listen(4)
    try:
        (repo / "connect.py").write_text(CONNECT)
        (repo / "name.txt").write_text(str(name))
        result = await run(sandboxed(repo), {"command": 'python3 connect.py "$(cat name.txt)"'})
    finally:
        server.close()
    assert text_of(result).startswith("refused"), text_of(result)


@pytest.mark.xfail(
    strict=True,
    reason="/proc/net/unix lists a socket bound by a relative name without its folder",
)
async def test_a_host_socket_bound_by_a_relative_name_is_out_of_reach(
    repo: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """README: without network "every other socket bound on the host ... outside the
    workspace is covered". A service that binds `app.sock` in its own folder is listed in
    /proc/net/unix as `app.sock`, with no folder."""
    service = outside / "service"
    service.mkdir()
    monkeypatch.chdir(service)
    server = socket.socket(socket.AF_UNIX)
    server.bind("app.sock")
    server.listen(4)
    monkeypatch.chdir(repo)
    try:
        (repo / "connect.py").write_text(CONNECT)
        result = await run(sandboxed(repo), {"command": f"python3 connect.py {service}/app.sock"})
    finally:
        server.close()
    assert text_of(result).startswith("refused"), text_of(result)


# --- Processes outside: signals, ptrace, the user's terminal --------------------------------


async def test_a_process_outside_can_be_neither_signalled_nor_traced(repo: Path) -> None:
    """The command has its own process namespace: di-code, the editor, any host process is
    out of reach, even by its host pid (here a sleep the test started)."""
    victim = subprocess.Popen(["sleep", "1000.41"])
    try:
        trace = (
            f"{PYTHON} -c 'import ctypes; "
            f'print("traced" if ctypes.CDLL(None).ptrace(16, {victim.pid}, 0, 0) == 0 '
            'else "untraced")\''
        )
        command = f"kill -STOP {victim.pid}; kill -KILL {victim.pid}; {trace}"
        result = await run(sandboxed(repo), {"command": command})
        assert "untraced" in text_of(result)
        assert alive(victim.pid)
        state = Path(f"/proc/{victim.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        assert state != "T"  # not stopped
    finally:
        victim.kill()
        victim.wait()


INJECT = """
import asyncio, fcntl, os, select, termios
from pathlib import Path
from di_code.ai import AbortController
from di_code.tools.builtin.bash import BashPolicy, BashTool
from di_code.tools.common.workspace import Workspace
from di_code.tools.process.sandbox import SandboxChoice

PUSH = (
    "import fcntl, os, termios\\n"
    "fd = os.open('/dev/tty', os.O_RDWR)\\n"
    "for c in b'echo pwned\\\\n':\\n"
    "    fcntl.ioctl(fd, termios.TIOCSTI, bytes([c]))\\n"
    "print('pushed')\\n"
)

async def main():
    Path('push.py').write_text(PUSH)
    tool = BashTool(Workspace.create(Path.cwd()), BashPolicy(SandboxChoice('workspace-write')))
    result = await tool.execute('c', {'command': 'python3 push.py'}, AbortController().signal)
    print('OUTPUT', repr(result.content[0].text))
    ready, _, _ = select.select([0], [], [], 0)
    print('RESULT', 'pending' if ready else 'clean')

asyncio.run(main())
"""


def test_a_command_cannot_push_input_into_di_codes_terminal(repo: Path) -> None:
    """di-code runs in the user's terminal (here a pty it controls); a sandboxed command that
    pushes `echo pwned` into it with TIOCSTI would be typed at the user's shell after exit."""
    child = pexpect.spawn(
        sys.executable, ["-c", INJECT], cwd=str(repo), timeout=60, encoding="utf-8"
    )
    try:
        child.expect(r"RESULT (\w+)")
        assert child.match.group(1) == "clean", child.before
    finally:
        child.close(force=True)


# --- Links a command leaves for di-code's own tools -----------------------------------------


async def test_links_a_command_leaves_lead_neither_write_nor_edit_into_git_or_outside(
    repo: Path, outside: Path
) -> None:
    """README: write and edit ask before changing a git directory (refused without a
    terminal), and a model's path must resolve inside the workspace. A sandboxed command may
    make links in the workspace: to `.git/config`, to `.git/hooks`, to a file of the host."""
    target = outside / "bashrc"
    target.write_text("host\n")
    config = (repo / ".git/config").read_bytes()
    made = await run(
        sandboxed(repo),
        {"command": f"ln -s .git/config cfg && ln -s .git/hooks hooks && ln -s {target} rc"},
    )
    assert not made.is_error, text_of(made)
    gate = PermissionGate("accept-edits")
    space = Workspace.create(repo)
    gate.protected = lambda raw: protected_path(space, raw, None)
    tools = {tool.name: tool for tool in gate_tools(default_tools(repo), gate)}
    attempts = [
        ("edit", {"path": "cfg", "old_text": "[core]", "new_text": "[core]\n\tfsmonitor = x"}),
        ("write", {"path": "hooks/pre-commit", "content": "#!/bin/sh\ntouch /tmp/pwned\n"}),
        ("write", {"path": "rc", "content": "pwned\n"}),
    ]
    for name, params in attempts:
        result = await run(tools[name], params)
        assert result.is_error, (name, params, text_of(result))
    assert (repo / ".git/config").read_bytes() == config
    assert not (repo / ".git/hooks/pre-commit").exists()
    assert target.read_text() == "host\n"


# --- Workspaces that are odd places ---------------------------------------------------------


async def test_with_the_home_folder_as_workspace_the_keys_stay_empty_and_unwritable(
    home: Path,
) -> None:
    """`di-code` started in `~`: the workspace is writable, yet `~/.ssh` is still an empty
    folder whose writes go nowhere (no key read, no authorized key planted)."""
    tool = sandboxed(home)
    command = (
        "cat ~/.ssh/id_ed25519; echo ssh-ed25519 AAAA >> ~/.ssh/authorized_keys; "
        "echo mine > ~/notes.txt"
    )
    result = await run(tool, {"command": command})
    assert SECRET not in text_of(result)
    assert not (home / ".ssh/authorized_keys").exists()
    assert (home / ".ssh/id_ed25519").read_text() == f"{SECRET}\n"
    assert (home / "notes.txt").read_text() == "mine\n"


@pytest.mark.parametrize("name", ["new\nline", "-dash", " spaced out ", "link"])
async def test_an_odd_workspace_name_keeps_its_protected_paths_and_its_bounds(
    outside: Path, name: str
) -> None:
    """A newline, a leading `-`, spaces at either end, or a link as the workspace root: the
    command still writes in the workspace, not beside it, and not in `.git`."""
    real = git_init(outside / ("real" if name == "link" else name))
    workspace = outside / name
    if name == "link":
        workspace.symlink_to(real)
    config = (real / ".git/config").read_bytes()
    tool = sandboxed(workspace)
    inside = await run(tool, {"command": "echo in > made.txt"})
    assert not inside.is_error, text_of(inside)
    await run(tool, {"command": "echo x >> .git/config; echo x > .mcp.json"})
    await run(tool, {"command": f"echo out > {outside}/beside.txt"})
    assert (real / "made.txt").read_text() == "in\n"
    assert (real / ".git/config").read_bytes() == config
    assert not (real / ".mcp.json").exists()  # nor is the cover's mount point left
    assert not (outside / "beside.txt").exists()


# --- What a real di-code hands its sandboxed commands ---------------------------------------


def tool_result(llm_server: LLMServer) -> str:
    """The last tool result the model was sent."""
    messages = llm_server.requests[-1].body["messages"]
    return next(m["content"] for m in reversed(messages) if m["role"] == "tool")


PEEK = (
    "ls /proc/self/fd | tr '\\n' ' '; echo; "
    "cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c sk-test; "
    "for fd in /proc/self/fd/*; do readlink $fd; done | grep -c -e session -e jsonl -e log"
)


def test_a_sandboxed_command_gets_no_key_and_no_descriptor_of_di_codes(
    run_di_code: RunDiCode, llm_server: LLMServer
) -> None:
    """Through a real `di-code run` (its session file, its log and the namespace it keeps
    open): the command holds only its standard streams, and no process it can see has the
    key in its environment."""
    llm_server.script(call("bash", {"command": PEEK}), Turn(text="Looked."))
    done = run_di_code("run", "--permission-mode", "auto", "--sandbox", "workspace-write", "go")
    assert done.returncode == 0, done.stderr
    body = json.dumps(llm_server.requests[-1].body)
    assert API_KEY not in body
    result = tool_result(llm_server)
    fds, keys, files = result.split("\n")[:3]
    assert fds.split() == ["0", "1", "2", "3"], result  # 3: ls's own look at the folder
    assert (keys, files) == ("0", "0"), result


def test_an_untrusted_projects_sandbox_settings_loosen_nothing(
    run_di_code: RunDiCode,
    llm_server: LLMServer,
    workspace: Path,
    home: Path,
    outside: Path,
    listener: socket.socket,
) -> None:
    """README: `[sandbox] hide` and `reveal` count only from your own config and a trusted
    project's, and an untrusted project may only tighten what you set. A cloned repository's
    file that turns the sandbox off, the network on and `~/.ssh` visible changes nothing."""
    (workspace / ".di-code").mkdir()
    (workspace / ".di-code/config.toml").write_text(
        '[sandbox]\nmode = "off"\nnetwork = true\nreveal = ["~/.ssh"]\n'
    )
    port = listener.getsockname()[1]
    command = (
        f"cat ~/.ssh/id_ed25519; echo escaped > {outside}/escaped; "
        f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"
    )
    llm_server.script(call("bash", {"command": command}), Turn(text="Tried."))
    done = run_di_code("run", "--permission-mode", "auto", "go", env_extra={"HOME": str(home)})
    assert done.returncode == 0, done.stderr
    result = tool_result(llm_server)
    assert "Read-only file system" in result  # it ran, confined
    assert SECRET not in result
    assert "connected" not in result
    assert not (outside / "escaped").exists()


@pytest.mark.xfail(
    strict=True,
    reason="a kill -9 of di-code leaves the empty mount points until the next sandboxed command",
)
def test_kill_9_of_di_code_leaves_no_mount_point_to_break_the_users_git(launch: Launch) -> None:
    """The empty read-only files bubblewrap leaves for missing protected paths are removed when
    the last sandboxed command in that folder ends; after a kill -9 only by the next one there
    (README says so), and meanwhile, in a repository's subfolder, a left `.git` file makes the
    user's own git there fail."""
    git_init(launch.folder)
    launch.folder = launch.folder / "sub"
    launch.folder.mkdir()
    launch.argv = [*launch.argv[:3], "--sandbox", "workspace-write", "go"]
    launch.server.script(call("bash", {"command": "touch started; exec sleep 1000.53"}))
    launch.start()
    launch.wait_for("started")
    assert (launch.folder / ".git").exists()  # the mount point, while the command runs
    assert launch.stop(signals.SIGKILL)[0] == -signals.SIGKILL
    launch.assert_nothing_left()
    status = subprocess.run(
        ["git", "status", "--short"], cwd=launch.folder, capture_output=True, text=True, timeout=30
    )
    assert status.returncode == 0, status.stderr
    assert not (launch.folder / ".git").exists()
