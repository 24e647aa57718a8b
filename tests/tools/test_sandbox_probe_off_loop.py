"""bubblewrap's probe (a child process that may take up to 10 s) never runs on the event loop:
the set-up runs it on a thread whenever the sandbox choice will ask for it (a sandbox
requested, auto mode, a chat or an editor session that may switch into auto), and its answer
is cached. A real `di-code run` is watched by the import spy's audit hook, which notes every
child process started on a running loop."""

from __future__ import annotations

from pathlib import Path

import pytest

from di_code.tools.process.sandbox import bubblewrap_path
from tests.cli.conftest import cli_env
from tests.support.first_use import spied_run
from tests.support.llm_server import LLMServer
from tests.support.wire import Turn

pytestmark = pytest.mark.skipif(bubblewrap_path() is None, reason="bubblewrap is not installed")


def spawned_on_loop(lines: list[str]) -> list[str]:
    return [line.split(" ", 1)[1] for line in lines if line.startswith("loop-spawn ")]


@pytest.mark.parametrize("flags", [["--permission-mode", "auto"], ["--sandbox", "read-only"]])
def test_the_set_up_probes_bubblewrap_off_the_loop(
    llm_server: LLMServer, di_code_home: Path, tmp_path: Path, flags: list[str]
) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    llm_server.script(Turn(text="hello"))
    env = cli_env(di_code_home, llm_server)
    result, lines = spied_run(["run", *flags, "hi"], workspace, env)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "hello\n"
    assert any(line.startswith("off ") for line in lines)  # the spy was there
    assert spawned_on_loop(lines) == []
