"""Hostile repositories, servers and stops against the language servers (README: Language
servers, Sandbox, Trust; the threat model's row). Each case is what a cloned repository, a
server of its choosing or a stop does; the real basedpyright is used for the pyright cases,
tests/support/lsp_fixture_server.py for the rest."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from di_code.agent import AgentTool, ToolResult
from di_code.system.names import escape_name
from di_code.tools import default_tools
from di_code.tools.builtin.support.truncation import MAX_BYTES
from di_code.tools.common.errors import ToolError
from di_code.tools.lsp.manager import LanguageServers
from di_code.tools.lsp.servers import catalog
from di_code.tools.lsp.spawn import ServerStarter
from di_code.tools.process.sandbox import bubblewrap_works
from di_code.tools.process.sandbox_mounts import SandboxPaths
from tests.cli.conftest import API_KEY, DI_CODE, RunDiCode, cli_env, request_text, run_di_code
from tests.support.llm_server import LLMServer, Turn, call
from tests.support.lsp import (
    AT_ONCE,
    BIN,
    FIXTURE,
    needs_basedpyright,
    server_pids,
    stopped,
    telltale,
    text,
)
from tests.support.processes import alive, wait_until
from tests.tools.conftest import error_of, outside, run

__all__ = ["outside", "run_di_code"]  # fixtures shared with tests/cli and tests/tools
needs_bubblewrap = pytest.mark.skipif(not bubblewrap_works(), reason="bubblewrap does not work")
EVERY_PRESET = ("pyright", "ruff", "typescript", "gopls", "rust-analyzer", "clangd")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def tools_of(servers: LanguageServers, workspace: Path) -> dict[str, AgentTool]:
    return {tool.name: tool for tool in default_tools(workspace, lsp=servers)}


def presets_alone(workspace: Path, *names: str, trusted: bool = False) -> LanguageServers:
    found = catalog({name: {"enabled": False} for name in EVERY_PRESET if name not in names})
    starter = ServerStarter(cache=workspace.parent / "cache", trusted=trusted)
    return LanguageServers(found, workspace, starter=starter)


def marked(workspace: Path, servers: LanguageServers) -> bool:
    cache = servers.starter.cache_of("pyright")
    return (cache / "ran").exists() or any(workspace.rglob("ran"))


def venv_with_pth(root: Path) -> None:
    """A real-looking project venv whose site-packages holds a `.pth` and a sitecustomize.py
    that each leave the mark when its python starts."""
    major, minor = sys.version_info[:2]
    site = root / "lib" / f"python{major}.{minor}" / "site-packages"
    site.mkdir(parents=True)
    (root / "pyvenv.cfg").write_text(f"home = {Path(sys.executable).parent}\n")
    mark = "import os, pathlib; pathlib.Path(os.path.expanduser('~/.cache/ran')).touch()"
    (site / "evil.pth").write_text(mark + "\n")
    (site / "sitecustomize.py").write_text(mark + "\n")
    telltale(root / "bin" / "python")


HOSTILE_PROJECTS = {
    "a .venv/bin/python": lambda ws: telltale(ws / ".venv" / "bin" / "python"),
    "pyrightconfig venvPath and venv": lambda ws: (
        telltale(ws / "envs" / "evil" / "bin" / "python"),
        (ws / "pyrightconfig.json").write_text('{"venvPath": "envs", "venv": "evil"}'),
    ),
    "pyrightconfig pythonPath": lambda ws: (
        telltale(ws / "tools" / "py"),
        (ws / "pyrightconfig.json").write_text('{"pythonPath": "tools/py"}'),
    ),
    "pyproject tool.basedpyright": lambda ws: (
        telltale(ws / "e" / "x" / "bin" / "python"),
        (ws / "pyproject.toml").write_text(
            '[tool.basedpyright]\nvenvPath = "e"\nvenv = "x"\npythonPath = "e/x/bin/python"\n'
        ),
    ),
    "pyproject tool.pyright": lambda ws: (
        telltale(ws / "e" / "x" / "bin" / "python"),
        (ws / "pyproject.toml").write_text(
            '[tool.pyright]\nvenvPath = "e"\nvenv = "x"\npythonPath = "e/x/bin/python"\n'
        ),
    ),
    "a venv with a .pth and sitecustomize": lambda ws: venv_with_pth(ws / ".venv"),
    "a sitecustomize.py at the root": lambda ws: (
        telltale(ws / ".venv" / "bin" / "python"),
        (ws / "sitecustomize.py").write_text(
            "import os, pathlib; pathlib.Path(os.path.expanduser('~/.cache/ran')).touch()\n"
        ),
    ),
}


@needs_basedpyright
@pytest.mark.parametrize("plant", HOSTILE_PROJECTS.values(), ids=HOSTILE_PROJECTS.keys())
async def test_an_untrusted_projects_python_never_runs_under_pyright_however_it_is_named(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, plant: object
) -> None:
    monkeypatch.setenv("PATH", BIN + os.pathsep + os.environ.get("PATH", ""))
    plant(workspace)  # type: ignore[operator]
    (workspace / "app.py").write_text("import os\nvalue: int = 1\n")
    servers = presets_alone(workspace, "pyright")
    try:
        result = await run(
            tools_of(servers, workspace)["lsp"], {"operation": "symbols", "path": "app.py"}
        )
    finally:
        await servers.aclose()
    assert "app.py:2:1: variable value" in text(result)  # it ran and answered
    assert not marked(workspace, servers)


def fixture_servers(
    workspace: Path, mode: str, trusted: bool = False, **table: object
) -> LanguageServers:
    command = [sys.executable, str(FIXTURE), mode, str(workspace)]
    found = catalog(
        {"fixture": {"command": command, "extensions": [".txt"], **table}}, which=lambda _: None
    )
    starter = ServerStarter(cache=workspace.parent / "cache", trusted=trusted)
    return LanguageServers(found, workspace, starter=starter)


@pytest.fixture
async def serving(workspace: Path) -> AsyncIterator[Callable[..., dict[str, AgentTool]]]:
    """`serving(mode, **table)`: the tools with the fixture server in `mode` serving .txt."""
    made: list[LanguageServers] = []

    def make(mode: str, **table: object) -> dict[str, AgentTool]:
        servers = fixture_servers(workspace, mode, **table)
        made.append(servers)
        return tools_of(servers, workspace)

    yield make
    for servers in made:
        await servers.aclose()


@pytest.mark.parametrize("entry", ["a link", "climbing", "empty", ".", "./tools"])
async def test_a_path_entry_into_the_workspace_never_provides_the_server(
    workspace: Path, outside: Path, monkeypatch: pytest.MonkeyPatch, entry: str
) -> None:
    """An activated project's folder on PATH through a link from outside it, through `..`
    from a folder outside, or as an empty, `.` or relative entry while di-code works in the
    project: the server is still not looked up there in an untrusted project."""
    folder = workspace if entry in ("empty", ".") else workspace / "tools"
    program = folder / "fixture-server"
    program.parent.mkdir(exist_ok=True)
    program.write_text(
        f"#!{sys.executable}\nimport pathlib\n"
        "pathlib.Path.home().joinpath('.cache', 'ran').touch()\n"
    )
    program.chmod(0o755)
    (outside / "link").symlink_to(program.parent)
    spelled = {
        "a link": str(outside / "link"),
        "climbing": f"{outside}/{os.path.relpath(program.parent, outside)}",
        "empty": "",
        ".": ".",
        "./tools": "./tools",
    }[entry]
    monkeypatch.chdir(workspace)
    monkeypatch.setenv("PATH", os.pathsep.join([spelled, os.environ["PATH"]]))
    table = {"fixture": {"command": ["fixture-server"], "extensions": [".txt"]}}
    starter = ServerStarter(cache=workspace.parent / "cache")
    servers = LanguageServers(catalog(table), workspace, starter=starter)
    (workspace / "a.txt").write_text("fine\n")
    try:
        result = text(
            await run(
                tools_of(servers, workspace)["edit"],
                {"path": "a.txt", "old_text": "fine", "new_text": "BAD"},
            )
        )
    finally:
        await servers.aclose()
    assert (
        "cannot start fixture-server: not found outside this untrusted project's folders" in result
    )
    assert not list((workspace.parent / "cache").glob("*/ran"))


async def test_a_projects_table_cannot_change_the_users_own_server(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, di_code_home: Path
) -> None:
    """The user's `[lsp.fixture]` runs in an untrusted project; the project's `[lsp.fixture]`
    (another command) and `[lsp.pyright]` change neither."""
    (di_code_home / "config.toml").write_text(
        f'[lsp.fixture]\ncommand = ["{sys.executable}", "{FIXTURE}", "lines", "{workspace}"]\n'
        'extensions = [".txt"]\n'
    )
    (workspace / ".git").mkdir()
    (workspace / ".di-code").mkdir()
    (workspace / ".di-code" / "config.toml").write_text(
        '[lsp.fixture]\ncommand = ["touch", "pwned-fixture"]\n'
        '[lsp.pyright]\ncommand = ["touch", "pwned-pyright"]\nextensions = [".txt"]\n'
    )
    (workspace / "a.txt").write_text("fine\n")
    llm_server.script(
        call("edit", {"path": "a.txt", "old_text": "fine", "new_text": "BAD"}, "c1"),
        Turn(text="done"),
    )
    done = run_di_code(
        "run", "--yes", "edit it", env_extra={"DI_CODE_LSP": "on", "PATH": "/usr/bin:/bin"}
    )
    assert done.returncode == 0, done.stderr
    assert "a.txt:1:1: error: BAD found here" in request_text(llm_server.requests[1].body)
    assert not list(workspace.glob("pwned*"))
    listed = run_di_code(
        "lsp", server=False, env_extra={"DI_CODE_LSP": "on", "PATH": "/usr/bin:/bin"}
    )
    assert "touch" not in listed.stdout


@needs_bubblewrap
async def test_no_provider_key_reaches_a_servers_environment_or_its_cache(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, di_code_home: Path
) -> None:
    """The key in use, under the preset's variable and under a configured `api_key_env`."""
    own_key = "corp-secret-0815"
    (di_code_home / "config.toml").write_text(
        f'[lsp.fixture]\ncommand = ["{sys.executable}", "{FIXTURE}", "environ", "{workspace}"]\n'
        'extensions = [".txt"]\n'
        f'[providers.corp]\nbase_url = "{llm_server.openai_base_url}"\napi = "openai-completions"\n'
        'api_key_env = "CORP_TOKEN"\n'
    )
    (workspace / "a.txt").write_text("fine\n")
    llm_server.script(
        call("edit", {"path": "a.txt", "old_text": "fine", "new_text": "BAD"}, "c1"),
        Turn(text="done"),
    )
    env = {"DI_CODE_LSP": "on", "CORP_TOKEN": own_key, "DI_CODE_MODEL": "corp/test-model"}
    done = run_di_code("run", "--yes", "edit it", env_extra=env)
    assert done.returncode == 0, done.stderr
    assert "BAD found here" in request_text(llm_server.requests[1].body)
    [environ] = (di_code_home / "lsp-cache").glob("fixture*/environ")
    seen = environ.read_text()
    assert API_KEY not in seen and own_key not in seen
    assert not any(
        API_KEY.encode() in f.read_bytes() or own_key.encode() in f.read_bytes()
        for f in (di_code_home / "lsp-cache").rglob("*")
        if f.is_file()
    )


async def test_places_outside_the_workspace_however_a_server_spells_them_are_left_out(
    workspace: Path, serving: Callable[..., dict[str, AgentTool]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """~/.ssh-like files, /proc/self/environ, percent-encoded `..`, an encoded slash, a link
    loop, a host name: none is listed, no line of them is read."""
    secret = Path.home() / f".di-code-test-ssh-{os.getpid()}" / "id_rsa"
    secret.parent.mkdir()
    secret.write_text("PRIVATE KEY LINE\n")
    monkeypatch.setenv("SECRET_IN_ENVIRON", "ENVIRON LINE")
    (workspace / "loop").symlink_to("loop")
    (workspace / "own.txt").write_text("own line\n")
    uris = [
        secret.as_uri(),
        "file:///proc/self/environ",
        f"file://{workspace}/%2e%2e/%2E%2E{secret}",
        f"file://{workspace}/..%2f..{secret}",
        f"file://{workspace}/loop/a.txt",
        f"file://{workspace}/loop",
        f"file://localhost{secret}",
        f"file://{workspace}/own.txt",
    ]
    monkeypatch.setenv("LSP_FIXTURE_URIS", "\n".join(uris))
    try:
        tools = serving("points")
        said = []
        for params in (
            {"operation": "definition", "path": "own.txt", "line": 1, "character": 1},
            {"operation": "references", "path": "own.txt", "line": 1, "character": 1},
        ):
            said.append(text(await run(tools["lsp"], params)))
    finally:
        secret.unlink()
        secret.parent.rmdir()
    for answer in said:
        assert answer.splitlines() == ["own.txt:1:1: own line"]


@pytest.mark.parametrize(
    "name",
    [
        "-rf.txt",
        "tab\there.txt",
        "a\nb.txt",
    ],
)
async def test_a_served_file_with_an_odd_name_gets_its_problems_and_forges_no_line(
    workspace: Path, serving: Callable[..., dict[str, AgentTool]], name: str
) -> None:
    (workspace / name).write_text("fine\n")
    tools = serving("lines")
    result = await run(tools["edit"], {"path": name, "old_text": "fine", "new_text": "BAD"})
    [problem] = result.details["diagnostics"]
    shown = escape_name(name)  # a newline written `\x0a`: it cannot start a line of its own
    assert (problem["path"], problem["line"], problem["message"]) == (shown, 1, "BAD found here")
    said = text(result)
    assert "BAD found here" in said
    listed = text(await run(tools["lsp"], {"operation": "diagnostics", "path": name}))
    assert "BAD found here" in listed
    assert all(not line.startswith("b.txt") for line in said.splitlines())


async def test_a_stop_while_a_silent_server_starts_ends_the_edit_at_once_unchanged(
    workspace: Path, serving: Callable[..., dict[str, AgentTool]]
) -> None:
    """(A server that sends an endless header or a huge frame is ended as unreadable at once,
    before any stop: the two tests below.)"""
    (workspace / "a.txt").write_text("fine\n")
    tools = serving("silent", startup_timeout=60)
    late = await stopped(tools["edit"], {"path": "a.txt", "old_text": "fine", "new_text": "BAD"})
    assert late < AT_ONCE
    assert (workspace / "a.txt").read_text() == "fine\n"


async def test_a_stop_while_a_server_babbles_ends_the_edit_at_once_and_keeps_the_change(
    workspace: Path, serving: Callable[..., dict[str, AgentTool]]
) -> None:
    (workspace / "a.txt").write_text("fine\n")
    tools = serving("babble")
    await run(tools["lsp"], {"operation": "diagnostics", "path": "a.txt"})  # read, and served
    late = await stopped(
        tools["edit"],
        {"path": "a.txt", "old_text": "fine", "new_text": "BAD"},
        once=lambda: (workspace / "a.txt").read_text() == "BAD\n",
    )
    assert late < AT_ONCE
    assert (workspace / "a.txt").read_text() == "BAD\n"


async def test_a_server_that_announces_a_gigabyte_is_dropped_not_buffered(
    workspace: Path, serving: Callable[..., dict[str, AgentTool]]
) -> None:
    """A frame bigger than any answer could be: said once as unreadable and the server ended
    when its header arrives, instead of reading its body for as long as the server sends."""
    (workspace / "a.txt").write_text("fine\n")
    tools = serving("huge-frame", startup_timeout=30)
    began = time.monotonic()
    result = text(
        await run(tools["edit"], {"path": "a.txt", "old_text": "fine", "new_text": "BAD"})
    )
    assert "Language server fixture" in result and "cannot read" in result
    assert time.monotonic() - began < 15


async def test_an_endless_header_line_is_one_note_and_the_edit_goes_on(
    workspace: Path, serving: Callable[..., dict[str, AgentTool]]
) -> None:
    (workspace / "a.txt").write_text("fine\n")
    tools = serving("endless-header", startup_timeout=30)
    began = time.monotonic()
    result = text(
        await run(tools["edit"], {"path": "a.txt", "old_text": "fine", "new_text": "BAD"})
    )
    assert (workspace / "a.txt").read_text() == "BAD\n"
    assert result.count("cannot read") == 1
    assert time.monotonic() - began < 15  # startup_timeout is 30: the server ended at once


def escaping_server(workspace: Path, attempts: str) -> list[str]:
    """A server that first runs `attempts` (Python; `tried(name, job)` records in its cache
    whether each job worked), then serves `lines`."""
    script = f"""
import os, socket, sys
from pathlib import Path
def tried(name, job):
    try:
        job()
        worked = "worked"
    except Exception:
        worked = "failed"
    with open(Path.home() / ".cache" / "tried", "a") as out:
        out.write(f"{{name}} {{worked}}\\n")
{attempts}
os.execv(sys.executable, [sys.executable, sys.argv[1], "lines", {str(workspace)!r}])
"""
    return [sys.executable, "-c", script, str(FIXTURE)]  # (the fixture named: kept visible)


async def edit_beside_escaping_server(
    workspace: Path, attempts: str, starter: ServerStarter
) -> ToolResult:
    """An edit of a.txt ("fine" to "BAD") with the escaping server of `attempts` started by
    `starter` for .txt files; its servers closed after."""
    table = {"fixture": {"command": escaping_server(workspace, attempts), "extensions": [".txt"]}}
    servers = LanguageServers(catalog(table, which=lambda _: None), workspace, starter=starter)
    (workspace / "a.txt").write_text("fine\n")
    try:
        return await run(
            tools_of(servers, workspace)["edit"],
            {"path": "a.txt", "old_text": "fine", "new_text": "BAD"},
        )
    finally:
        await servers.aclose()


@needs_bubblewrap
async def test_a_sandboxed_server_reaches_no_network_no_di_code_home_and_no_hidden_path(
    workspace: Path, outside: Path, di_code_home: Path
) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.setblocking(False)
    port = listener.getsockname()[1]
    (di_code_home / "config.toml").write_text("# the user's settings\n")
    hidden = outside / "keys"
    hidden.mkdir()
    (hidden / "k").write_text("KEY")
    attempts = f"""
tried("loopback", lambda: socket.create_connection(("127.0.0.1", {port}), timeout=2))
tried("di-code-home", lambda: Path({str(di_code_home)!r}, "config.toml").read_text())
tried("hidden", lambda: Path({str(hidden)!r}, "k").read_text())
tried("workspace", lambda: Path({str(workspace)!r}, "planted").write_text("x"))
tried("cache", lambda: (Path.home() / ".cache" / "own").write_text("x"))
"""
    paths = SandboxPaths(di_code_home, (hidden,))
    starter = ServerStarter(paths=paths, cache=workspace.parent / "cache")
    result = await edit_beside_escaping_server(workspace, attempts, starter)
    assert "a.txt:1:1: error: BAD found here" in text(result)
    tried = (starter.cache_of("fixture") / "tried").read_text().splitlines()
    assert tried == [
        "loopback failed",
        "di-code-home failed",
        "hidden failed",
        "workspace failed",
        "cache worked",
    ]
    with pytest.raises(BlockingIOError):
        listener.accept()
    listener.close()


async def test_the_interpreter_a_servers_env_line_names_is_never_the_projects(
    workspace: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server of the user's (outside the project) run by `#!/usr/bin/env python3`, with
    the project's activated `.venv/bin` first on PATH holding a python3 of its own."""
    telltale(workspace / ".venv" / "bin" / "python3")
    server = outside / "bin" / "fixture-server"
    server.parent.mkdir()
    server.write_text(
        "#!/usr/bin/env python3\nimport os, sys\n"
        "os.execv(sys.argv[2], [sys.argv[2], sys.argv[1], 'lines'])\n"
    )
    server.chmod(0o755)
    path = [str(workspace / ".venv" / "bin"), str(server.parent), os.environ["PATH"]]
    monkeypatch.setenv("PATH", os.pathsep.join(path))
    command = ["fixture-server", str(FIXTURE), sys.executable]  # named: kept visible
    table = {"fixture": {"command": command, "extensions": [".txt"]}}
    starter = ServerStarter(cache=workspace.parent / "cache")
    servers = LanguageServers(catalog(table), workspace, starter=starter)
    (workspace / "a.txt").write_text("fine\n")
    try:
        result = await run(
            tools_of(servers, workspace)["edit"],
            {"path": "a.txt", "old_text": "fine", "new_text": "BAD"},
        )
    finally:
        await servers.aclose()
    assert "a.txt:1:1: error: BAD found here" in text(result)
    assert not (starter.cache_of("fixture") / "ran").exists()
    assert not (workspace / ".venv" / "bin" / "ran").exists()


async def test_a_server_that_dies_mid_request_ends_the_request_at_once(
    workspace: Path, serving: Callable[..., dict[str, AgentTool]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not the 10 s a request may wait: the server is gone, nothing will answer."""
    marks = workspace.parent / "cache" / "fixture.untrusted" / "marks"
    monkeypatch.setenv("LSP_FIXTURE_STARTS", str(Path.home() / ".cache" / "marks"))
    (workspace / "a.txt").write_text("fine\n")
    tools = serving("wedged")
    await run(tools["edit"], {"path": "a.txt", "old_text": "fine", "new_text": "BAD"})
    [pid] = server_pids(workspace)
    params = {"operation": "hover", "path": "a.txt", "line": 1, "character": 1}
    asking = asyncio.create_task(run(tools["lsp"], params))
    await asyncio.to_thread(wait_until, lambda: "hover" in marks.read_text(), "the hover asked")
    os.kill(pid, signal.SIGKILL)
    began = time.monotonic()
    with pytest.raises(ToolError, match="The language server ended before it answered"):
        await asking
    assert time.monotonic() - began < 5


@needs_bubblewrap
async def test_a_servers_setsid_daemon_dies_with_it(workspace: Path) -> None:
    """A server that leaves a daemon behind (fork, setsid, its own group): closing di-code's
    servers ends the daemon too (the sandbox's process namespace)."""
    marker = f"{time.time_ns() % 10**9}.5"
    attempts = f"""
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execvp("sleep", ["sleep", {marker!r}])
    os._exit(0)
os.wait()
"""
    table = {"fixture": {"command": escaping_server(workspace, attempts), "extensions": [".txt"]}}
    starter = ServerStarter(cache=workspace.parent / "cache")
    servers = LanguageServers(catalog(table, which=lambda _: None), workspace, starter=starter)
    (workspace / "a.txt").write_text("fine\n")
    try:
        result = await run(
            tools_of(servers, workspace)["edit"],
            {"path": "a.txt", "old_text": "fine", "new_text": "BAD"},
        )
        assert "BAD found here" in text(result)
        assert daemons(marker)
    finally:
        await servers.aclose()
    await asyncio.to_thread(wait_until, lambda: not daemons(marker), "the daemon to end")


def daemons(marker: str) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0") if proc.name.isdigit() else []
        except OSError:
            continue
        if argv[:2] == [b"sleep", marker.encode()]:
            found.append(int(proc.name))
    return [pid for pid in found if alive(pid)]


@pytest.mark.parametrize("mode", ["silent", "endless-header", "babble"])
def test_sigterm_while_a_server_holds_run_ends_di_code_and_the_server_at_once(
    llm_server: LLMServer, di_code_home: Path, workspace: Path, mode: str
) -> None:
    (di_code_home / "config.toml").write_text(
        f'[lsp.fixture]\ncommand = ["{sys.executable}", "{FIXTURE}", "{mode}", "{workspace}"]\n'
        'extensions = [".txt"]\nstartup_timeout = 60\n'
    )
    (workspace / "a.txt").write_text("fine\n")
    first = call("edit", {"path": "a.txt", "old_text": "fine", "new_text": "BAD"}, "c1")
    second = call("edit", {"path": "a.txt", "old_text": "BAD", "new_text": "BAD 2"}, "c2")
    llm_server.script(first, second, Turn(text="done"))
    env = cli_env(di_code_home, llm_server, DI_CODE_LSP="on", PATH="/usr/bin:/bin")
    process = subprocess.Popen(
        [DI_CODE, "run", "--yes", "edit it"], cwd=workspace, env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        wait_until(lambda: server_pids(workspace), "the server started")
        if mode == "babble":  # held in the second edit's wait, babbling
            wait_until(lambda: len(llm_server.requests) == 2, "the first edit done")
        pids = server_pids(workspace)
        time.sleep(0.3)
        os.kill(process.pid, signal.SIGTERM)
        began = time.monotonic()
        process.wait(timeout=10)
        assert time.monotonic() - began < AT_ONCE
        wait_until(lambda: not any(alive(pid) for pid in pids), "the server to end with di-code")
    finally:
        if process.poll() is None:
            process.kill()


@needs_bubblewrap
async def test_a_projects_ruff_settings_reach_nothing_outside_the_workspace(
    workspace: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ruff.toml naming a cache folder outside the workspace and extending a file in the home
    folder (which would select T201): ruff runs (the untrusted table's row), writes nothing
    outside and never sees the home file."""
    monkeypatch.setenv("PATH", BIN + os.pathsep + os.environ.get("PATH", ""))
    secret = Path.home() / f".di-code-test-ruff-{os.getpid()}.toml"
    secret.write_text('[lint]\nextend-select = ["T201"]\n')
    (workspace / "ruff.toml").write_text(
        f'cache-dir = "{outside / "ruff-cache"}"\nextend = "{secret}"\n'
    )
    (workspace / "b.py").write_text("x = 1\n")
    servers = presets_alone(workspace, "ruff")
    try:
        result = text(
            await run(
                tools_of(servers, workspace)["edit"],
                {"path": "b.py", "old_text": "x = 1", "new_text": "print(1)"},
            )
        )
        listed = text(await run(tools_of(servers, workspace)["lsp"], {"operation": "diagnostics"}))
    finally:
        await servers.aclose()
        secret.unlink()
    assert "T201" not in result + listed
    assert list(outside.iterdir()) == []


async def test_a_hover_of_thirty_megabytes_is_cut_with_a_line_saying_so(
    workspace: Path, serving: Callable[..., dict[str, AgentTool]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LSP_FIXTURE_HOVER_LINES", str(300_000))  # 30 MB, under MAX_FRAME
    (workspace / "own.txt").write_text("own line\n")
    tools = serving("points")
    params = {"operation": "hover", "path": "own.txt", "line": 1, "character": 1}
    said = text(await run(tools["lsp"], params))
    assert len(said.encode()) <= MAX_BYTES + 200
    assert said.startswith("00000000hhh")
    assert "00299999" not in said
    assert said.splitlines()[-1] == "[Hover cut at 4000 of 29999999 characters.]"


async def test_a_server_that_exits_before_initialize_is_said_at_once_and_started_once(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not after its startup_timeout: its output ended, nothing will answer."""
    starts = workspace.parent / "cache" / "fixture.untrusted" / "starts"
    command = [
        sys.executable, "-c",
        "import pathlib\n"
        "with (pathlib.Path.home() / '.cache' / 'starts').open('a') as f: f.write('started ')\n"
        "raise SystemExit(3)",
    ]  # fmt: skip
    table = {"fixture": {"command": command, "extensions": [".txt"], "startup_timeout": 60}}
    starter = ServerStarter(cache=workspace.parent / "cache")
    servers = LanguageServers(catalog(table, which=lambda _: None), workspace, starter=starter)
    tools = tools_of(servers, workspace)
    (workspace / "a.txt").write_text("0\n")
    said = ""
    began = time.monotonic()
    try:
        for n in range(3):
            edit = {"path": "a.txt", "old_text": f"{n}", "new_text": f"{n + 1}"}
            said += text(await run(tools["edit"], edit))
    finally:
        await servers.aclose()
    assert time.monotonic() - began < 20
    assert said.count("Language server fixture ended before it answered initialize") == 1
    assert starts.read_text() == "started "
    assert (workspace / "a.txt").read_text() == "3\n"


async def test_a_folder_swapped_for_a_link_out_never_shows_an_outside_line(
    workspace: Path,
    outside: Path,
    serving: Callable[..., dict[str, AgentTool]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """While places are checked and their lines read, `lib` keeps turning from a folder of
    the workspace into a link to a folder outside it: a line is either the workspace's or
    left out."""
    (outside / "a.txt").write_text("SECRET outside line\n")
    lib = workspace / "lib"
    lib.mkdir()
    (lib / "a.txt").write_text("own line\n")
    (workspace / "own.txt").write_text("x\n")
    monkeypatch.setenv("LSP_FIXTURE_URIS", f"file://{lib}/a.txt")
    tools = serving("points")
    stop = threading.Event()

    def swap() -> None:
        parked = workspace / "lib.parked"
        while not stop.is_set():
            lib.rename(parked)
            lib.symlink_to(outside)
            lib.unlink()
            parked.rename(lib)

    swapper = threading.Thread(target=swap)
    swapper.start()
    try:
        params = {"operation": "definition", "path": "own.txt", "line": 1, "character": 1}
        answers = {text(await run(tools["lsp"], params)) for _ in range(40)}
    finally:
        stop.set()
        swapper.join()
    assert all("SECRET" not in answer for answer in answers), answers
    place = "lib/a.txt:1:1: "  # listed while a folder, its line read only from the folder
    assert answers <= {place + "own line", place, "No definition found."}


@needs_bubblewrap
@pytest.mark.parametrize("depth", ["bin folder", "home itself"])
async def test_a_server_installed_in_a_home_folder_does_not_reveal_the_whole_home(
    workspace: Path, depth: str
) -> None:
    """A server of the user's in `~/bin` (or right in `~`): what it is installed in stays
    visible, the rest of the home folder stays hidden (README: the home folder empty but for
    the server's cache and the folders its program is installed in)."""
    unique = f"di-code-test-{os.getpid()}-{time.time_ns()}"
    notes = Path.home() / f".{unique}-notes"
    notes.write_text("PRIVATE NOTES")
    folder = Path.home() / f".{unique}-bin" if depth == "bin folder" else Path.home()
    folder.mkdir(exist_ok=True)
    program = folder / f"{unique}-server"
    attempts = f"tried('notes', lambda: Path({str(notes)!r}).read_text())"
    argv = escaping_server(workspace, attempts)
    program.write_text(f"#!{sys.executable}\n{argv[2]}")
    program.chmod(0o755)
    table = {"fixture": {"command": [str(program), argv[3]], "extensions": [".txt"]}}
    starter = ServerStarter(cache=workspace.parent / "cache")
    servers = LanguageServers(catalog(table, which=lambda _: None), workspace, starter=starter)
    (workspace / "a.txt").write_text("fine\n")
    try:
        result = await run(
            tools_of(servers, workspace)["edit"],
            {"path": "a.txt", "old_text": "fine", "new_text": "BAD"},
        )
    finally:
        await servers.aclose()
        notes.unlink()
        program.unlink()
        if folder != Path.home():
            folder.rmdir()
    assert "a.txt:1:1: error: BAD found here" in text(result)  # it ran: its folder is seen
    assert (starter.cache_of("fixture") / "tried").read_text() == "notes failed\n"


def test_a_settings_file_linked_to_a_trusted_projects_makes_no_server_trusted(
    tmp_path: Path, di_code_home: Path
) -> None:
    """Trust belongs to the place the file is in: project B's `.di-code/config.toml`, a link
    to trusted project A's, leaves B's servers untrusted (pinned, waiting)."""
    from di_code.config.settings import Settings
    from di_code.config.trusting import trust_project
    from di_code.setup.lsp import language_servers

    trusted, cloned = tmp_path / "a", tmp_path / "b"
    for project in (trusted, cloned):
        (project / ".git").mkdir(parents=True)
        (project / ".di-code").mkdir()
    (trusted / ".di-code" / "config.toml").write_text("")
    trust_project(di_code_home, trusted)
    (cloned / ".di-code" / "config.toml").symlink_to(trusted / ".di-code" / "config.toml")
    env = {"DI_CODE_HOME": str(di_code_home)}
    settings = Settings()
    assert language_servers(settings, trusted, lambda line: None, env).starter.trusted
    assert not language_servers(settings, cloned, lambda line: None, env).starter.trusted


@needs_bubblewrap
async def test_a_server_finds_no_provider_key_in_any_process_it_can_see(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The key is in di-code's own environment: a server reading every /proc/*/environ it
    can see, and di-code's by its host process id, finds it nowhere."""
    key = f"sk-proc-secret-{os.getpid()}"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    attempts = f"""
looked, found = 0, []
for environ in [*Path("/proc").glob("*/environ"), Path("/proc/{os.getpid()}/environ")]:
    try:
        held = {key!r} in environ.read_text(errors="replace")
    except OSError:
        continue
    looked += 1
    found += [str(environ)] if held else []
(Path.home() / ".cache" / "found").write_text(f"{{looked}} {{found}}")
"""
    starter = ServerStarter(cache=workspace.parent / "cache")
    result = await edit_beside_escaping_server(workspace, attempts, starter)
    assert "BAD found here" in text(result)
    looked, found = (starter.cache_of("fixture") / "found").read_text().split(" ", 1)
    assert int(looked) > 0 and found == "[]"


@pytest.mark.parametrize("where", ["a link to outside", "an absolute path outside", "../.."])
async def test_the_lsp_tool_sends_no_file_outside_the_workspace_to_a_server(
    workspace: Path,
    outside: Path,
    serving: Callable[..., dict[str, AgentTool]],
    where: str,
) -> None:
    """`lsp` on a path `read` refuses: refused too, and the server never gets its text."""
    secret = outside / "secret.txt"
    secret.write_text("BAD secret line\n")
    (workspace / "link.txt").symlink_to(secret)
    path = {
        "a link to outside": "link.txt",
        "an absolute path outside": str(secret),
        "../..": os.path.relpath(secret, workspace),
    }[where]
    tools = serving("lines")
    read_refused = await error_of(tools["read"], {"path": path})
    answers = []
    for params in (
        {"operation": "diagnostics", "path": path},
        {"operation": "symbols", "path": path},
        {"operation": "hover", "path": path, "line": 1, "character": 1},
    ):
        try:
            answers.append(text(await run(tools["lsp"], params)))
        except ToolError as refused:
            answers.append(str(refused))
    assert read_refused
    assert all("BAD" not in answer for answer in answers), answers
    everything = text(await run(tools["lsp"], {"operation": "diagnostics"}))
    assert "BAD" not in everything


async def test_symbols_and_diagnostics_a_server_names_outside_the_workspace_are_left_out(
    workspace: Path,
    outside: Path,
    serving: Callable[..., dict[str, AgentTool]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Workspace symbols in a file outside, diagnostics published for a file outside (a
    server babbling about /elsewhere): neither is listed, as no place outside is."""
    (outside / "secret.txt").write_text("SECRET\n")
    (workspace / "own.txt").write_text("fine\n")
    monkeypatch.setenv("LSP_FIXTURE_POINTS", f"{outside / 'secret.txt'}:{workspace / 'own.txt'}")
    monkeypatch.setenv("LSP_FIXTURE_NAME_SIZE", "1")
    tools = serving("points")
    await run(tools["lsp"], {"operation": "symbols", "path": "own.txt"})  # started
    symbols = text(await run(tools["lsp"], {"operation": "symbols", "symbol": "n"}))
    assert symbols.startswith("own.txt:1:1: function ")
    assert "secret" not in symbols
    babbling = serving("babble")
    await run(babbling["edit"], {"path": "own.txt", "old_text": "fine", "new_text": "BAD"})
    listed = text(await run(babbling["lsp"], {"operation": "diagnostics"}))
    assert "elsewhere" not in listed and "noise" not in listed
