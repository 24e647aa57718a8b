"""The evaluation harness (scripts/evals.py, evals/tasks/*.toml) proved with scripted models:
a trajectory that solves each task passes its check, one that does nothing fails it, and the
summary counts both. No real model runs here; README's Evaluations says how to run one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from scripts.evals import load_tasks
from tests.cli.conftest import cli_env
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn

ROOT = Path(__file__).resolve().parents[2]


def call(name: str, number: int, **arguments: Any) -> ToolCallSpec:
    return ToolCallSpec(name, arguments, f"{name}-{number}")


def calls(*specs: ToolCallSpec) -> Turn:
    return Turn(tool_calls=specs)


COUNT = '''"""Count the lines (or words) of files: `python3 count.py [--words] FILE...`."""

import argparse


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--words", action="store_true")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args(argv)
    for name in args.files:
        with open(name, encoding="utf-8") as handle:
            text = handle.read()
        count = len(text.split()) if args.words else len(text.splitlines())
        print(f"{count} {name}")


if __name__ == "__main__":
    main()
'''
COUNT_TEST = """import contextlib, io, os, tempfile, unittest

import count


class CountTest(unittest.TestCase):
    def run_main(self, *args):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            count.main(list(args))
        return out.getvalue()

    def test_lines_and_words(self):
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "a.txt")
            with open(path, "w", encoding="utf-8") as handle:
                handle.write("a b\\nc\\n")
            self.assertEqual(self.run_main(path), f"2 {path}\\n")
            self.assertEqual(self.run_main("--words", path), f"3 {path}\\n")
"""
MEDIAN = '''

def median(values):
    """The middle value of a non-empty list of numbers (mean of the two middle ones)."""
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2
'''
SERVER_ROUTE = """        if self.path == "/health":
            self.answer(200, "ok")
        elif self.path == "/version":
            with open("VERSION", encoding="utf-8") as handle:
                self.answer(200, handle.read().strip())
"""
TRY_SERVER = (
    "port=$(python3 -c \"import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); "
    'print(s.getsockname()[1])"); python3 server.py $port > server.log 2>&1 & '
    'for i in $(seq 100); do python3 -c "import urllib.request as u, sys; '
    "print(u.build_opener(u.ProxyHandler({})).open(f'http://127.0.0.1:{sys.argv[1]}/version')"
    '.read())" $port && break; sleep 0.1; done; kill %1'
)
EXPORTS = 'from lib.stats import mean, median\n\n__all__ = ["mean", "median"]\n'
HEALTH = '        if self.path == "/health":\n            self.answer(200, "ok")\n'
SLUG = 're.sub(r"[^a-z0-9]", "-", text.lower())'
SLUG_FIXED = 're.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")'


def edit(number: int, path: str, old: str, new: str, **more: Any) -> ToolCallSpec:
    return call("edit", number, path=path, old_text=old, new_text=new, **more)


RENAMED = ("README.md", "shop/users.py", "shop/orders.py", "shop/report.py", "tests/test_shop.py")
RENAME = [edit(n, p, "fetch_user", "load_user", replace_all=True) for n, p in enumerate(RENAMED)]

SOLUTIONS: dict[str, list[Turn]] = {
    "add-flag": [
        calls(call("write", 1, path="count.py", content=COUNT)),
        calls(call("write", 2, path="tests/test_count.py", content=COUNT_TEST)),
        calls(call("bash", 3, command="python3 -m unittest discover -s tests")),
    ],
    "fix-test": [
        calls(call("read", 1, path="textutil/slug.py")),
        calls(edit(2, "textutil/slug.py", SLUG, SLUG_FIXED)),
    ],
    "nested-rule": [
        calls(call("read", 1, path="lib/stats.py")),
        calls(edit(2, "lib/stats.py", "len(values)\n", "len(values)\n" + MEDIAN)),
        calls(call("write", 3, path="lib/__init__.py", content=EXPORTS)),
    ],
    "rename": [calls(*RENAME)],
    "server": [
        calls(edit(1, "server.py", HEALTH, SERVER_ROUTE)),
        calls(call("bash", 2, command=TRY_SERVER)),
    ],
}


def run_evals(out: Path, home: Path, server: LLMServer) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scripts.evals", "--out", str(out), "--jobs", "1"],
        cwd=ROOT,
        env=cli_env(home, server),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
    )


def results(out: Path) -> dict[str, dict[str, Any]]:
    lines = (out / "results.jsonl").read_text().splitlines()
    return {record["id"]: record for record in map(json.loads, lines)}


def test_every_task_has_a_prompt_a_check_files_and_a_scripted_solution() -> None:
    tasks = load_tasks()
    assert sorted(tasks) == sorted(SOLUTIONS)
    assert all(task["prompt"].strip() and task["check"].strip() for task in tasks.values())


def test_solving_trajectories_pass_and_idle_ones_fail(
    llm_server: LLMServer, di_code_home: Path, tmp_path: Path
) -> None:
    for task_id in sorted(load_tasks()):  # --jobs 1 runs them in this order
        llm_server.script(*SOLUTIONS[task_id], Turn(text="Done, and checked."))
    solved = run_evals(tmp_path / "solved", di_code_home, llm_server)
    assert solved.returncode == 0, solved.stderr
    for task_id, record in results(tmp_path / "solved").items():
        assert (task_id, record["status"], record["passed"]) == (task_id, "done", True), record
    assert "| **all** | **5/5** (100%)" in solved.stdout
    summary = json.loads((tmp_path / "solved" / "summary.json").read_text())
    assert summary["passed"] == 5 and summary["tokens"] > 0 and summary["mean_turns"] >= 2

    for _ in SOLUTIONS:
        llm_server.script(Turn(text="I have looked at it; nothing to change."))
    idle = run_evals(tmp_path / "idle", di_code_home, llm_server)
    assert idle.returncode == 0, idle.stderr
    assert [r["passed"] for r in results(tmp_path / "idle").values()] == [False] * 5
    assert "| **all** | **0/5** (0%)" in idle.stdout


@pytest.mark.parametrize("wrong", ["--only nothing", "--only rename,nothing"])
def test_an_unknown_task_is_named(wrong: str, di_code_home: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "scripts.evals", "--out", str(tmp_path), *wrong.split()],
        cwd=ROOT,
        env=cli_env(di_code_home, None),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and "no task nothing (tasks: add-flag," in done.stderr
