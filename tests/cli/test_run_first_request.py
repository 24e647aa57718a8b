"""What `run` does before its first request: the prompt's checkpoint (a git snapshot of the
work tree) is taken once the answer has begun, so its git processes never compete with the
request; it is still taken, before any tool could run."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import cli_env
from tests.support.git import git
from tests.support.imports import run_main, when_main_ends
from tests.support.llm_server import LLMServer, Turn

# Each git subcommand di-code starts, and the moment its request connects, in order (audit
# events: the real process starts, seen from inside the process).
WATCH = (
    "import sys, json as _json\n"
    "_seen = []\n"
    "def _watch(event, args):\n"
    "    if event == 'subprocess.Popen' and 'git' in str(args[0]):\n"
    "        _seen.append(next((a for a in args[1][1:] if not a.startswith('-') and '=' not in a"
    " and a != 'git'), '?'))\n"
    "    elif event == 'socket.connect' and 'request' not in _seen:\n"
    "        _seen.append('request')\n"
    "sys.addaudithook(_watch)\n"
) + when_main_ends("print('SEEN:' + _json.dumps(_seen))")


def test_the_checkpoint_runs_no_git_before_the_request(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    git(workspace, "init", "-q")
    (workspace / "notes.txt").write_text("hello\n", encoding="utf-8")
    git(workspace, "add", "notes.txt")
    llm_server.script(Turn(text="hello there"))
    done = run_main(WATCH, "run", "hi", env=cli_env(di_code_home, llm_server), cwd=str(workspace))
    head, marker, tail = done.stdout.rpartition("SEEN:")
    assert marker and head == "hello there\n", done.stderr
    seen: list[str] = json.loads(tail)
    before = seen[: seen.index("request")]
    assert set(before) <= {"config", "status"}, seen  # the system prompt's git state only
    assert "ls-files" in seen[seen.index("request") :], seen  # the snapshot is still taken
