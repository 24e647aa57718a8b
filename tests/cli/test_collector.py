"""The collector is off while `run` starts and back on, with start-up's objects frozen, once
the set-up is done; a process that never paused it keeps it as it was."""

from __future__ import annotations

import gc
import json
from pathlib import Path

from di_code.cli import collector
from tests.cli.conftest import cli_env
from tests.support.imports import run_main
from tests.support.llm_server import LLMServer, Turn

REPORT = """
import atexit, gc, json, sys
from di_code.cli import setup
prepare = setup.prepare
async def watched(*args, **kwargs):
    seen["during"] = gc.isenabled()
    return await prepare(*args, **kwargs)
setup.prepare = watched
seen = {}
atexit.register(lambda: print("GC:" + json.dumps(
    {**seen, "after": gc.isenabled(), "frozen": gc.get_freeze_count()}
)))
"""


def test_run_starts_without_the_collector_and_resumes_it(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    llm_server.script(Turn(text="hello there"))
    env = cli_env(di_code_home, llm_server)
    done = run_main(REPORT, "run", "--no-session", "hi", env=env, cwd=str(workspace))
    out, _, report = done.stdout.rpartition("GC:")
    assert out.strip() == "hello there", done.stderr
    seen = json.loads(report)
    assert seen["during"] is False and seen["after"] is True and seen["frozen"] > 10_000


def test_resume_without_pause_changes_nothing() -> None:
    frozen = gc.get_freeze_count()
    assert gc.isenabled()
    collector.resume()
    assert gc.isenabled() and gc.get_freeze_count() == frozen
