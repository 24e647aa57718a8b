"""Language servers read the repository, and a repository can name programs they run (an
interpreter in `.venv`, `build.rs`, a `node_modules/typescript`). So every server runs in
the sandbox where bubblewrap works (workspace read-only, home hidden but its own cache, no
network), an untrusted project's pyright is pinned to di-code's interpreter, and the presets
that would run project code wait for trust. Read-only mode starts none."""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from di_code.agent import ToolResult
from di_code.config.settings import Settings
from di_code.setup.lsp import language_servers
from di_code.tools import default_tools
from di_code.tools.lsp.manager import LanguageServers
from di_code.tools.lsp.servers import catalog
from di_code.tools.lsp.spawn import ServerStarter
from tests.support.bubblewrap import needs_bubblewrap
from tests.support.lsp import BIN, FIXTURE, needs_basedpyright, server_pids
from tests.tools.conftest import run


def text(result: ToolResult) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


@pytest.fixture
def home_secret() -> Iterator[Path]:
    """A file in the real home folder (where ~/.ssh would be)."""
    path = Path.home() / f".di-code-test-secret-{uuid.uuid4().hex}"
    path.write_text("PRIVATE KEY")
    yield path
    path.unlink()


@needs_bubblewrap
async def test_a_server_writes_nothing_outside_its_cache_and_reads_no_home_file(
    workspace: Path, outside: Path, home_secret: Path
) -> None:
    cache = workspace.parent / "cache"
    attempts = f"""
import os, sys
from pathlib import Path
def attempt(job):
    try:
        job()
    except OSError:
        pass
attempt(lambda: Path({str(outside)!r}, "escaped").write_text("escaped"))
attempt(lambda: Path({str(workspace)!r}, "planted").write_text("planted"))
leak = Path.home() / ".cache" / "leak"
attempt(lambda: leak.write_bytes(b""))
attempt(lambda: leak.write_bytes(Path({str(home_secret)!r}).read_bytes()))
os.execv(sys.executable, [sys.executable, sys.argv[1], "lines", {str(workspace)!r}])
"""
    command = [sys.executable, "-c", attempts, str(FIXTURE)]  # (the fixture named: kept visible)
    found = catalog({"fixture": {"command": command, "extensions": [".txt"]}}, which=lambda _: None)
    servers = LanguageServers(found, workspace, starter=ServerStarter(cache=cache))
    tools = {tool.name: tool for tool in default_tools(workspace, lsp=servers)}
    (workspace / "a.txt").write_text("fine\n")
    try:
        result = await run(tools["edit"], {"path": "a.txt", "old_text": "fine", "new_text": "BAD"})
    finally:
        await servers.aclose()
    assert "a.txt:1:1: error: BAD found here" in text(result)  # it ran, and answered
    assert not (outside / "escaped").exists()
    assert not (workspace / "planted").exists()
    assert (
        cache / "fixture.untrusted" / "leak"
    ).read_bytes() == b""  # home is hidden: nothing to copy


def venv_python_that_tells(workspace: Path) -> None:
    """A project's `.venv/bin/python` that leaves a mark in the server's cache when run."""
    program = workspace / ".venv" / "bin" / "python"
    program.parent.mkdir(parents=True)
    program.write_text(f'#!/bin/sh\necho ran >> "$HOME/.cache/ran"\nexec {sys.executable} "$@"\n')
    program.chmod(0o755)
    (workspace / "app.py").write_text("import os\nvalue: int = 1\n")


def pyright_alone(workspace: Path, trusted: bool) -> LanguageServers:
    every = ("ruff", "typescript", "gopls", "rust-analyzer", "clangd")
    found = catalog({name: {"enabled": False} for name in every})
    starter = ServerStarter(cache=workspace.parent / "cache", trusted=trusted)
    return LanguageServers(found, workspace, starter=starter)


@needs_basedpyright
@pytest.mark.parametrize("trusted", [False, True])
async def test_an_untrusted_projects_interpreter_is_never_run_by_pyright(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, trusted: bool
) -> None:
    monkeypatch.setenv("PATH", BIN + os.pathsep + os.environ.get("PATH", ""))
    venv_python_that_tells(workspace)
    servers = pyright_alone(workspace, trusted)
    tools = {tool.name: tool for tool in default_tools(workspace, lsp=servers)}
    try:
        result = await run(tools["lsp"], {"operation": "symbols", "path": "app.py"})
    finally:
        await servers.aclose()
    assert "app.py:2:1: variable value" in text(result)
    ran = (servers.starter.cache_of("pyright") / "ran").exists()
    assert ran == trusted  # trusted, the project's own interpreter is the one it wants


async def test_a_preset_that_would_run_project_code_waits_for_trust(workspace: Path) -> None:
    command = [sys.executable, str(FIXTURE), "lines", str(workspace)]
    table = {"gopls": {"command": command, "extensions": [".txt"]}}  # the preset's rule stays
    (workspace / "a.txt").write_text("fine\n")
    for trusted in (False, True):
        starter = ServerStarter(cache=workspace.parent / "cache", trusted=trusted)
        servers = LanguageServers(catalog(table), workspace, starter=starter)
        tools = {tool.name: tool for tool in default_tools(workspace, lsp=servers)}
        try:
            edit = {"path": "a.txt", "old_text": "BAD" if trusted else "fine", "new_text": "BAD"}
            edit["new_text"] += " again" if trusted else ""
            result = await run(tools["edit"], edit)
            started = bool(server_pids(workspace))
        finally:
            await servers.aclose()
        said = "Language server gopls starts once you trust the project (di-code trust)"
        assert (said in text(result)) == (not trusted)
        assert started == trusted


def test_read_only_mode_starts_no_server_and_offers_no_lsp_tool(workspace: Path) -> None:
    settings = Settings(lsp={"fixture": {"command": ["x"], "extensions": [".txt"]}})
    servers = language_servers(settings, workspace, lambda line: None, {}, mode="read-only")
    assert servers.catalog.servers == ()
    names = [tool.name for tool in default_tools(workspace, lsp=servers)]
    assert "lsp" not in names
    asked = language_servers(settings, workspace, lambda line: None, {}, mode="ask")
    assert [spec.name for spec in asked.catalog.servers if spec.name == "fixture"] == ["fixture"]


def test_an_empty_settings_file_trusted_makes_the_servers_trusted(
    workspace: Path, tmp_path: Path
) -> None:
    from di_code.config.trusting import trust_project

    home = tmp_path / "home"
    settings = Settings(lsp={"fixture": {"command": ["x"], "extensions": [".txt"]}})
    env = {"DI_CODE_HOME": str(home)}
    untrusted = language_servers(settings, workspace, lambda line: None, env)
    assert not untrusted.starter.trusted
    (workspace / ".di-code").mkdir()
    (workspace / ".di-code" / "config.toml").write_text("")
    trust_project(home, workspace)
    trusted = language_servers(settings, workspace, lambda line: None, env)
    assert trusted.starter.trusted
    (workspace / ".di-code" / "config.toml").write_text("model = 'x'\n")  # changed since
    assert not language_servers(settings, workspace, lambda line: None, env).starter.trusted


def test_di_code_lsp_says_what_a_preset_does_in_an_untrusted_project(workspace: Path) -> None:
    from di_code.tools.lsp.manager import status_lines

    every = {"pyright": "basedpyright-langserver", "gopls": "gopls"}
    found = catalog({}, which=lambda program: program if program in every.values() else None)
    for trusted in (False, True):
        starter = ServerStarter(cache=workspace.parent / "cache", trusted=trusted)
        lines = status_lines(LanguageServers(found, workspace, starter=starter))
        said = [line for line in lines if line.startswith("  in this untrusted project")]
        expected = [
            "  in this untrusted project: runs, told to use di-code's own Python",
            "  in this untrusted project: starts once you trust the project",
        ]
        assert said == ([] if trusted else expected)


async def test_an_untrusted_project_never_provides_the_server_program(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A PATH with the project's folders first (an activated `.venv`, `node_modules/.bin`, a
    relative entry): untrusted, the server is not looked up there; trusted, it is."""
    program = workspace / "bin" / "fixture-server"
    program.parent.mkdir()
    program.write_text(
        f"#!{sys.executable}\nimport os, pathlib, sys\n"
        'pathlib.Path.home().joinpath(".cache", "ran").write_text("ran")\n'
        "os.execv(sys.executable, [sys.executable, sys.argv[1], 'lines'])\n"
    )
    program.chmod(0o755)
    monkeypatch.setenv("PATH", os.pathsep.join([str(program.parent), "bin", os.environ["PATH"]]))
    table = {"fixture": {"command": ["fixture-server", str(FIXTURE)], "extensions": [".txt"]}}
    for trusted in (False, True):
        starter = ServerStarter(cache=workspace.parent / "cache", trusted=trusted)
        servers = LanguageServers(catalog(table), workspace, starter=starter)
        tools = {tool.name: tool for tool in default_tools(workspace, lsp=servers)}
        (workspace / "a.txt").write_text("fine\n")
        edit = {"path": "a.txt", "old_text": "fine", "new_text": "BAD"}
        try:
            result = text(await run(tools["edit"], edit))
        finally:
            await servers.aclose()
        ran = (workspace.parent / "cache").glob("fixture*/ran")
        if trusted:
            assert "a.txt:1:1: error: BAD found here" in result and list(ran)
        else:
            assert (
                "Language server fixture cannot start fixture-server: not found outside this "
                "untrusted project's folders; going on without it."
            ) in result
            assert not list(ran)


async def test_read_only_mode_refuses_the_lsp_tool_even_after_a_switch() -> None:
    """An editor may switch a session into read-only mode after its tools were offered: the
    gate refuses lsp there too (it starts servers), and lets it run unasked in ask mode."""
    from di_code.tools.policy.permissions import PermissionGate

    gate = PermissionGate("ask")
    params = {"operation": "symbols", "path": "app.py"}
    assert await gate.check("lsp", params) is None
    gate.switch("read-only")
    refused = await gate.check("lsp", params)
    assert refused == "Permission denied: lsp is not available in read-only mode."
    assert await gate.check("read", {"path": "app.py"}) is None
