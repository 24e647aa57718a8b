"""Many tasks on one repository at once (issue 33: `--jobs 6`, 24 tasks raced in
`git worktree add/remove` and `branch -D`): every task is done, and nothing is left behind in
the repository or the work folder."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.batch.conftest import RunBatch, bash_call, make_repo, read_results, write_tasks
from tests.support.git import git
from tests.support.llm_server import LLMServer, Turn
from tests.support.raw_repo import listing

TASKS = 24


def test_24_tasks_on_one_repository_with_6_jobs_all_finish_and_leave_nothing(
    run_batch: RunBatch, llm_server: LLMServer, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    git_dir_before = listing(repo / ".git")
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [{"id": f"p{number}", "repo": str(repo), "prompt": "go"} for number in range(TASKS)],
    )
    for _ in range(TASKS):  # the tasks take these in any order: each ends at a text reply
        llm_server.script(bash_call("echo changed > a.txt && echo new > b.txt"), Turn(text="ok"))
    done = run_batch(str(tasks), "--out", "r.jsonl", "--jobs", "6", timeout=300)
    assert done.returncode == 0, done.stderr
    results = read_results(tmp_path / "r.jsonl")
    assert sorted(results) == sorted(f"p{number}" for number in range(TASKS))
    for record in results.values():
        assert (record["status"], record["error"]) == ("done", None), record
        if record["patch"]:  # this task ran a bash call: its patch applies to the base
            check = tmp_path / "check" / record["id"]
            git(tmp_path, "clone", "--quiet", "--no-checkout", str(repo), str(check))
            git(check, "checkout", "--quiet", record["base"])
            subprocess.run(
                ["git", "apply"], cwd=check, input=record["patch"], text=True, check=True
            )
            assert (check / "b.txt").read_text() == "new\n"
    assert listing(repo / ".git") == git_dir_before  # no branch, worktree or lock left there
    assert git(repo, "status", "--porcelain") == ""
    assert not list((tmp_path / "r.jsonl.work" / "checkouts").iterdir())
