"""What recording the session costs `run` before its request (issue 47: the recorded run is
the user's default, and its first request is measured against Codex's).

The prompt's checkpoint needs git's snapshot code only inside a git work tree, and the file
backups only once the prompt's "before" is recorded (after the request): outside git, neither
is loaded on the way to the request. A new session needs none of the code that finds, forks
or loads a stored one. Outside git (as the system prompt's git state found) the prompt's
first snapshot is none, known on the loop: no work is handed to a thread for it (a hand-off
costs the request a wait on a loaded machine). Asserted by what a real `run` had loaded and
handed to the thread pool when it opened the request's connection (an audit hook, the first
`socket.connect`: nothing else in `run` connects), which does not depend on the machine's
speed."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import NamedTuple

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


LISTING_CODE = ("di_code.session.checkpoint_list", "di_code.session.prompt_notes")
"""What reads the session's checkpoints back (the prompt's number) and titles them: needed
at the prompt's first record, after the request."""

STORED_SESSION_CODE = (
    "di_code.session.fork",
    "di_code.setup.session_choice",
    "di_code.session.collector",
)
"""What finds, forks and loads a stored session: a new one needs none of it."""

AT_REQUEST = (
    "import json as _json, sys as _sys, threading as _threading\n"
    "import concurrent.futures.thread as _pool\n"
    "_seen, _handed, _started = {}, [], []\n"
    "_start = _threading.Thread.start\n"
    "def _noted_start(self):\n"
    "    _started.append(self.name)\n"
    "    return _start(self)\n"
    "_threading.Thread.start = _noted_start\n"
    "_submit = _pool.ThreadPoolExecutor.submit\n"
    "def _noted(self, fn, /, *args, **kwargs):\n"
    "    work = fn.args[0] if getattr(fn, 'args', None) else fn\n"  # to_thread's partial
    "    _handed.append(getattr(work, '__qualname__', repr(work)))\n"
    "    return _submit(self, fn, *args, **kwargs)\n"
    "_pool.ThreadPoolExecutor.submit = _noted\n"
    "def _at_connect(event, args):\n"
    "    if event == 'socket.connect' and 'modules' not in _seen:\n"
    "        _seen['modules'] = sorted(n for n, m in list(_sys.modules.items()) if m)\n"
    "        _seen['handed'] = list(_handed)\n"
    "        _seen['threads'] = list(_started)\n"
    "_sys.addaudithook(_at_connect)\n"
) + when_main_ends("print('AT_REQUEST:' + _json.dumps(_seen))")
"""Prelude: the modules loaded, the work handed to the thread pool (`asyncio.to_thread`, by
the name of the function) and the threads started (by name), when the process first connects
(the model request's)."""


class AtRequest(NamedTuple):
    modules: set[str]
    handed: list[str]
    """The functions given to the thread pool, in order."""
    threads: list[str]
    """The names of the threads started, in order."""


def recorded_run(llm_server: LLMServer, home: Path, workspace: Path) -> AtRequest:
    """What a recorded `run` (the session on, as a user runs it) had done at its request."""
    llm_server.script(Turn(text="hello there"))
    done = run_main(AT_REQUEST, "run", "hi", env=cli_env(home, llm_server), cwd=str(workspace))
    head, marker, tail = done.stdout.rpartition("AT_REQUEST:")
    assert marker and head == "hello there\n", done.stderr
    assert list((home / "sessions").glob("*/*.jsonl")), "no session file"
    seen = json.loads(tail)
    loaded = set(seen["modules"])
    assert "di_code.session.checkpoints" in loaded  # the checkpoint is attached by then
    return AtRequest(loaded, seen["handed"], seen["threads"])


def test_outside_git_a_recorded_run_loads_no_snapshot_code_before_its_request(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    loaded = recorded_run(llm_server, di_code_home, workspace).modules
    assert offenders(loaded, SNAPSHOT_CODE) == []


def test_the_checkpoint_listing_is_loaded_after_the_request(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    loaded = recorded_run(llm_server, di_code_home, workspace).modules
    assert offenders(loaded, LISTING_CODE) == []
    llm_server.script(Turn(text="again"))  # the check can fail: the run's end records it
    env = cli_env(di_code_home, llm_server)
    loaded, out = loaded_modules(CLI_MAIN, "run", "hi", env=env, cwd=str(workspace))
    assert out.strip() == "again"
    assert offenders(loaded, LISTING_CODE) == sorted(LISTING_CODE)


def test_a_new_session_loads_no_code_for_stored_ones_before_its_request(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    loaded = recorded_run(llm_server, di_code_home, workspace).modules
    assert offenders(loaded, STORED_SESSION_CODE) == []


def test_continuing_a_session_loads_the_code_for_stored_ones(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    """The check above can fail: `-c` finds and loads the session the first run left."""
    recorded_run(llm_server, di_code_home, workspace)
    llm_server.script(Turn(text="again"))
    env = cli_env(di_code_home, llm_server)
    loaded, out = loaded_modules(CLI_MAIN, "run", "-c", "hi", env=env, cwd=str(workspace))
    assert out.strip() == "again"
    assert {"di_code.setup.session_choice", "di_code.session.collector"} <= loaded


def test_outside_git_no_checkpoint_work_is_handed_to_a_thread_before_the_request(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    handed = recorded_run(llm_server, di_code_home, workspace).handed
    assert "git_state" in handed  # the prompt's git state, which found no work tree
    assert [work for work in handed if work.startswith("Checkpointer.")] == []


def test_inside_git_the_prompts_snapshot_is_on_a_thread_as_the_request_goes_out(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    """The check above can fail: in a work tree the snapshot runs beside the request."""
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True, timeout=30)
    handed = recorded_run(llm_server, di_code_home, workspace).handed
    assert "Checkpointer._take" in handed


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


def test_the_prompts_fsync_thread_starts_after_the_request(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    """Starting a thread waits for it to run: the prompt's line is in the file before the
    request, its fsync's thread is started once the answer begins (every entry is still
    synced before the run ends: tests/session/test_session_sync.py)."""
    threads = recorded_run(llm_server, di_code_home, workspace).threads
    assert "di-code-http" in threads  # the check can fail: the threads started are seen
    assert "di-code-fsync" not in threads
