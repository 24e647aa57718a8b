"""What recording the session costs `run` before its request (issue 47: the recorded run is
the user's default, and its first request is measured against Codex's).

The prompt's checkpoint needs git's snapshot code only inside a git work tree, and the file
backups only once the prompt's "before" is recorded (after the request): outside git, neither
is loaded on the way to the request. Asserted by the modules a real `run` had loaded when it
opened the request's connection (an audit hook, the first `socket.connect`: nothing else in
`run` connects), which does not depend on the machine's speed."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.cli.conftest import cli_env
from tests.support.imports import CLI_MAIN, loaded_modules, offenders, run_main, when_main_ends
from tests.support.llm_server import LLMServer, Turn

SNAPSHOT_CODE = (
    "di_code.session.git_snapshot",
    "di_code.session.stat_cache",
    "di_code.session.index_file",
    "di_code.session.blob_import",
    "di_code.session.work_tree",
    "di_code.session.work_tree_look",
    "di_code.session.file_backup",
)


AT_REQUEST = (
    "import json as _json, sys as _sys\n"
    "_seen = {}\n"
    "def _at_connect(event, args):\n"
    "    if event == 'socket.connect' and 'modules' not in _seen:\n"
    "        _seen['modules'] = sorted(n for n, m in list(_sys.modules.items()) if m)\n"
    "_sys.addaudithook(_at_connect)\n"
) + when_main_ends("print('AT_REQUEST:' + _json.dumps(_seen.get('modules')))")
"""Prelude: the modules loaded when the process first connects (the model request's)."""


def recorded_run(llm_server: LLMServer, home: Path, workspace: Path) -> set[str]:
    """The modules a recorded `run` (the session on, as a user runs it) had at its request."""
    llm_server.script(Turn(text="hello there"))
    done = run_main(AT_REQUEST, "run", "hi", env=cli_env(home, llm_server), cwd=str(workspace))
    head, marker, tail = done.stdout.rpartition("AT_REQUEST:")
    assert marker and head == "hello there\n", done.stderr
    assert list((home / "sessions").glob("*/*.jsonl")), "no session file"
    loaded = set(json.loads(tail))
    assert "di_code.session.checkpoints" in loaded  # the checkpoint is attached by then
    return loaded


def test_outside_git_a_recorded_run_loads_no_snapshot_code_before_its_request(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    loaded = recorded_run(llm_server, di_code_home, workspace)
    assert offenders(loaded, SNAPSHOT_CODE) == []


def test_inside_git_the_snapshot_code_is_loaded_for_the_prompts_checkpoint(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    """The check above can fail: in a work tree the same run takes its snapshot (on its
    thread, by the time the run ends)."""
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True, timeout=30)
    llm_server.script(Turn(text="hello there"))
    env = cli_env(di_code_home, llm_server)
    loaded, out = loaded_modules(CLI_MAIN, "run", "hi", env=env, cwd=str(workspace))
    assert out.strip() == "hello there"
    assert "di_code.session.git_snapshot" in loaded
