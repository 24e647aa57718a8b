"""Task success: di-code's evaluation tasks (evals/tasks/*.toml) run against a model, each
decided by its check. Usage, from the repository's root:

    .venv/bin/python -m scripts.evals [--out DIR] [--only ID,...] [di-code batch options]

Each task file holds a prompt, a check (a shell command: exit 0 is success) and the files of a
small repository. The repositories are generated into DIR/repos (one commit each, with fixed
names and dates, so a rerun makes the same base commit), the tasks into DIR/tasks.jsonl, and
`di-code batch DIR/tasks.jsonl --out DIR/results.jsonl` runs them with every other option
given here (`--model`, `--provider`, `--base-url`, `--jobs`, `--timeout`, `--max-turns`, ...).
A rerun resumes: tasks with a result are skipped. The summary (a Markdown table of each task
and the success rate, turns, tokens and cost of all) goes to stdout and DIR/summary.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

TASKS = Path(__file__).resolve().parent.parent / "evals" / "tasks"
FIELDS = {"prompt", "check", "files", "max_turns", "timeout"}
FIXED_DATE = "2026-01-01T00:00:00+00:00"
"""The generated commits' date: the same files give the same base commit on every run."""


def load_tasks(folder: Path = TASKS) -> dict[str, dict[str, Any]]:
    """Each task file by its id (the file's name without .toml), checked."""
    tasks: dict[str, dict[str, Any]] = {}
    for path in sorted(folder.glob("*.toml")):
        task = tomllib.loads(path.read_text(encoding="utf-8"))
        unknown = set(task) - FIELDS
        if unknown or not {"prompt", "check", "files"} <= set(task):
            raise SystemExit(f"{path}: needs prompt, check and files; unknown: {sorted(unknown)}")
        outside = [name for name in task["files"] if Path(name).is_absolute() or ".." in name]
        if outside:
            raise SystemExit(f"{path}: files must stay in the repository: {outside}")
        tasks[path.stem] = task
    return tasks


IGNORED = {".gitignore": "__pycache__/\n"}
"""In every generated repository: Python's caches are no part of a task's patch."""


def make_repository(folder: Path, files: dict[str, str]) -> None:
    """`folder` anew as a git repository of `files` (and IGNORED), committed once."""
    if folder.exists():
        shutil.rmtree(folder)
    for name, text in {**IGNORED, **files}.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    folder.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "evals",
        "GIT_AUTHOR_EMAIL": "evals@di-code.invalid",
        "GIT_COMMITTER_NAME": "evals",
        "GIT_COMMITTER_EMAIL": "evals@di-code.invalid",
        "GIT_AUTHOR_DATE": FIXED_DATE,
        "GIT_COMMITTER_DATE": FIXED_DATE,
    }
    quiet = ["-c", "core.hooksPath=/dev/null", "-c", "commit.gpgSign=false"]
    for command in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "start"]):
        subprocess.run(["git", *quiet, *command], cwd=folder, env=env, check=True)


def write_batch(out: Path, tasks: dict[str, dict[str, Any]]) -> Path:
    """The repositories and the batch's task file; its path."""
    lines = []
    for task_id, task in tasks.items():
        repo = out / "repos" / task_id
        make_repository(repo, task["files"])
        line = {"id": task_id, "repo": str(repo), "prompt": task["prompt"], "check": task["check"]}
        line.update({k: task[k] for k in ("max_turns", "timeout") if k in task})
        lines.append(json.dumps(line) + "\n")
    path = out / "tasks.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    return path


def di_code() -> str:
    """The di-code of this Python's environment, else the one on PATH."""
    beside = Path(sys.executable).with_name("di-code")
    return str(beside) if beside.exists() else shutil.which("di-code") or "di-code"


PASSED_ON = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def run_batch(command: list[str]) -> int:
    """The batch's exit code. It runs in a session of its own, and each Ctrl-C, SIGTERM and
    SIGHUP this script gets is passed on to it (a terminal's Ctrl-C reaches it once, not twice):
    it records its running tasks `cancelled` and exits 130 (143, 129) as it does on its own,
    where Python would kill it 0.25 s after a KeyboardInterrupt and print a traceback."""
    batch = subprocess.Popen(command, stdin=subprocess.DEVNULL, start_new_session=True)
    for number in PASSED_ON:
        signal.signal(number, lambda number, _frame: batch.send_signal(number))
    return batch.wait()


def latest_results(path: Path, ids: list[str]) -> list[dict[str, Any]]:
    """The last result line of each id (a rerun's line comes after the old one)."""
    found: dict[str, dict[str, Any]] = {}
    if path.exists():  # a line ends at LF alone: an answer may hold U+2028
        for line in path.read_text(encoding="utf-8").split("\n"):
            if line:
                record = json.loads(line)
                found[record["id"]] = record
    return [found[task_id] for task_id in ids if task_id in found]


def summarize(records: list[dict[str, Any]], total: int) -> dict[str, Any]:
    """Success rate over `total` tasks (one without a result did not succeed), turns, tokens
    and cost of those that ran."""
    passed = sum(1 for record in records if record.get("passed") is True)
    turns = [record["turns"] for record in records if record.get("turns") is not None]
    return {
        "tasks": total,
        "passed": passed,
        "success_rate": passed / total if total else 0.0,
        "mean_turns": sum(turns) / len(turns) if turns else None,
        "tokens": sum(record.get("tokens") or 0 for record in records),
        "cost": sum(record.get("cost") or 0.0 for record in records),
    }


def table(records: list[dict[str, Any]], summary: dict[str, Any]) -> str:
    """The Markdown table docs/evals.md keeps: a row a task, then the totals."""
    rows = ["| task | passed | status | turns | tokens | cost ($) | seconds |", "|---" * 7 + "|"]
    for r in records:
        passed = {True: "yes", False: "no", None: "-"}[r.get("passed")]
        rows.append(
            f"| {r['id']} | {passed} | {r['status']} | {r.get('turns')} | {r.get('tokens')} "
            f"| {r.get('cost') or 0:.4f} | {r.get('duration', 0):.0f} |"
        )
    turns = summary["mean_turns"]
    rows.append(
        f"| **all** | **{summary['passed']}/{summary['tasks']}** "
        f"({summary['success_rate']:.0%}) | | {'-' if turns is None else f'{turns:.1f}'} "
        f"(mean) | {summary['tokens']} | {summary['cost']:.4f} | |"
    )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0] if __doc__ else None,
        epilog="Other options are passed on to `di-code batch`.",
    )
    parser.add_argument("--out", type=Path, default=Path(".evals"), help="default: .evals")
    parser.add_argument("--only", help="comma-separated task ids")
    args, batch_options = parser.parse_known_args(argv)
    tasks = load_tasks()
    if args.only:
        wanted = args.only.split(",")
        unknown = sorted(set(wanted) - set(tasks))
        if unknown:
            parser.error(f"no task {', '.join(unknown)} (tasks: {', '.join(tasks)})")
        tasks = {task_id: tasks[task_id] for task_id in wanted}
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    task_file = write_batch(out, tasks)
    results = out / "results.jsonl"
    command = [di_code(), "batch", str(task_file), "--out", str(results), *batch_options]
    code = run_batch(command)
    if code not in (0, 1):  # 1: a task failed, which the summary counts
        return code
    records = latest_results(results, list(tasks))
    summary = summarize(records, len(tasks))
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    print(table(records, summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
