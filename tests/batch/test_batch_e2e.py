"""`di-code batch` end to end: real repositories, real `di-code run` processes per task, the
loopback model."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from di_code.tools.process.sandbox import SandboxChoice
from tests.batch.conftest import (
    RunBatch,
    bash_call,
    make_repo,
    read_results,
    write_call,
    write_tasks,
)
from tests.support.git import git
from tests.support.llm_server import HttpError, LLMServer, ToolCallSpec, Turn


def test_three_repositories_each_patch_applies_to_its_base(
    run_batch: RunBatch, llm_server: LLMServer, tmp_path: Path
) -> None:
    worktree = make_repo(tmp_path / "alpha", {"a.txt": "alpha\n"})
    origin = make_repo(tmp_path / "beta", {"b.txt": "beta\n"})
    plain = tmp_path / "gamma"
    plain.mkdir()
    (plain / "c.txt").write_text("gamma\n")
    (worktree / "a.txt").write_text("the user's own unsaved change\n")
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [
            {"id": "alpha", "repo": "alpha", "prompt": "add notes"},  # from the file's folder
            {"id": "beta", "repo": f"file://{origin}", "ref": "main", "prompt": "add notes"},
            {"id": "gamma", "repo": str(plain), "prompt": "add notes"},
        ],
    )
    for number in range(3):  # one task at a time: the script is served in order
        llm_server.script(
            write_call("NOTES.md", f"notes {number}\n", f"w{number}"),
            Turn(text=f"wrote notes {number}", input_tokens=10, output_tokens=2),
        )
    done = run_batch(str(tasks), "--out", "results.jsonl", "--jobs", "1", "--max-requests", "1")
    assert done.returncode == 0, done.stderr
    slots = tmp_path / "results.jsonl.work" / "request-slots"
    [slot] = slots.iterdir()  # the tasks' requests took the one slot of their provider
    assert slot.name.endswith("-0")
    results = read_results(tmp_path / "results.jsonl")
    assert sorted(results) == ["alpha", "beta", "gamma"]
    for number, name in enumerate(("alpha", "beta", "gamma")):
        record = results[name]
        assert record["status"] == "done", record
        assert record["answer"] == f"wrote notes {number}"
        assert record["error"] is None and record["turns"] == 2
        assert record["tokens"] >= 12 and Path(record["session"]).is_file()
        assert f"+notes {number}" in record["patch"]
    # the user's working tree is untouched, and no branch or worktree was made there
    assert (worktree / "a.txt").read_text() == "the user's own unsaved change\n"
    assert not (worktree / "NOTES.md").exists()
    assert "di-code/batch" not in git(worktree, "branch", "--list")
    assert git(worktree, "worktree", "list").count("\n") == 1
    assert not list((tmp_path / "results.jsonl.work" / "checkouts").iterdir())
    # each patch applies to its base
    for name, repo in (("alpha", worktree), ("beta", origin)):
        check = tmp_path / f"check-{name}"
        git(tmp_path, "clone", "--quiet", str(repo), str(check))
        git(check, "checkout", "--quiet", results[name]["base"])
        subprocess.run(
            ["git", "apply"], cwd=check, input=results[name]["patch"], text=True, check=True
        )
        assert (check / "NOTES.md").read_text().startswith("notes ")


def test_a_rerun_skips_finished_tasks_and_retry_failed_reruns_them(
    run_batch: RunBatch, llm_server: LLMServer, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [
            {"id": "one", "repo": str(repo), "prompt": "hi"},
            {"id": "two", "repo": str(repo), "prompt": "hi"},
        ],
    )
    llm_server.script(Turn(text="first"))  # the second task finds no reply: it fails
    first = run_batch(str(tasks), "--out", "r.jsonl", "--jobs", "1")
    assert first.returncode == 1
    results = read_results(tmp_path / "r.jsonl")
    assert (results["one"]["status"], results["two"]["status"]) == ("done", "failed")
    assert "no scripted reply left" in results["two"]["error"]

    again = run_batch(str(tasks), "--out", "r.jsonl", "--jobs", "1", "--events")
    assert again.returncode == 0, again.stderr
    begin = json.loads(again.stdout.splitlines()[0])
    assert (begin["event"], begin["tasks"], begin["skipped"]) == ("begin", 0, 2)

    llm_server.script(Turn(text="second"))
    retried = run_batch(str(tasks), "--out", "r.jsonl", "--retry", "failed", "--events")
    assert retried.returncode == 0, retried.stderr
    started = [json.loads(line) for line in retried.stdout.splitlines()]
    assert [e["id"] for e in started if e["event"] == "start"] == ["two"]
    assert read_results(tmp_path / "r.jsonl")["two"]["answer"] == "second"


def test_a_429_backs_off_the_task_env_and_model_apply_and_keep_keeps_the_checkout(
    run_batch: RunBatch, llm_server: LLMServer, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    task = {"id": "env", "repo": str(repo), "prompt": "go", "env": {"BATCH_MARK": "m-4711"}}
    task["model"] = "openai/per-task-model"  # wins over the environment's DI_CODE_MODEL
    tasks = write_tasks(tmp_path / "t.jsonl", [task])
    llm_server.script(
        HttpError(429, "slow down", headers={"retry-after": "0"}),
        bash_call('echo "$BATCH_MARK" > mark.txt'),
        Turn(text="marked"),
    )
    done = run_batch(str(tasks), "--out", "r.jsonl", "--keep")
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    sandbox = (
        SandboxChoice().note("auto") or "bash runs in the bubblewrap sandbox (workspace-write)"
    )
    assert lines[0] == f"di-code batch: {sandbox}"  # said once, whether or not bubblewrap works
    assert lines[1:] == ["di-code batch: 1 task to run", lines[2], "di-code batch: 1 done"]
    assert lines[2].startswith("di-code batch: env done in ")
    record = read_results(tmp_path / "r.jsonl")["env"]
    assert (record["status"], record["answer"]) == ("done", "marked")
    assert "+m-4711" in record["patch"]
    kept = Path(record["checkout"])
    assert (kept / "mark.txt").read_text() == "m-4711\n"
    assert git(kept, "branch", "--show-current") == "di-code/batch/env\n"
    assert "di-code/batch" not in git(repo, "branch", "--list")  # the checkout's own branch
    assert not (repo / "mark.txt").exists()
    posts = [r for r in llm_server.requests if r.method == "POST"]
    assert {r.body["model"] for r in posts} == {"per-task-model"}


def test_a_folder_holding_the_results_is_copied_without_them(
    run_batch: RunBatch, llm_server: LLMServer, tmp_path: Path
) -> None:
    (tmp_path / "code.txt").write_text("code\n")
    tasks = write_tasks(
        tmp_path / "t.jsonl",
        [{"id": f"t{n}", "repo": ".", "prompt": "look"} for n in range(2)],
    )
    llm_server.script(Turn(text="first"), Turn(text="second"))
    done = run_batch(str(tasks), "--out", "r.jsonl", "--jobs", "1")
    assert done.returncode == 0, done.stderr
    results = read_results(tmp_path / "r.jsonl")
    assert [results[f"t{n}"]["patch"] for n in range(2)] == ["", ""]


def test_the_task_runs_git_in_its_checkout_on_its_branch(
    run_batch: RunBatch, llm_server: LLMServer, tmp_path: Path, di_code_home: Path
) -> None:
    """The checkout borrows the user's objects: the task's own git reads its history and
    commits on its branch (unsandboxed here: the sandbox's private /tmp hides a repository
    under /tmp, and keeps .git read-only); the patch is still the whole change against the
    base, and the user's repository has no new commit."""
    (di_code_home / "config.toml").write_text('[sandbox]\nmode = "off"\n')
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    tasks = write_tasks(tmp_path / "t.jsonl", [{"id": "g", "repo": str(repo), "prompt": "go"}])
    commands = (
        "git log --format=%s; git branch --show-current; echo b > b.txt; git add b.txt; "
        "git -c user.name=m -c user.email=m@m commit -qm second && echo committed"
    )
    llm_server.script(bash_call(commands), Turn(text="ok"))
    done = run_batch(str(tasks), "--out", "r.jsonl")
    assert done.returncode == 0, done.stderr
    record = read_results(tmp_path / "r.jsonl")["g"]
    assert record["status"] == "done" and "+b" in record["patch"]
    [result] = [m for m in llm_server.requests[-1].body["messages"] if m["role"] == "tool"]
    assert result["content"].startswith("first\ndi-code/batch/g\ncommitted")
    assert git(repo, "log", "--format=%s") == "first\n"


def test_a_tasks_result_counts_its_subagents_requests(
    run_batch: RunBatch, llm_server: LLMServer, tmp_path: Path
) -> None:
    """`turns` are the task's own replies; `requests` every request it made, its subagents'
    included, and `tokens` theirs too."""
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    tasks = write_tasks(tmp_path / "t.jsonl", [{"id": "one", "repo": str(repo), "prompt": "hi"}])
    subagent = {"description": "look", "prompt": "read a.txt"}
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("task", subagent, "t1"),), input_tokens=10, output_tokens=1),
        Turn(text="a holds a", input_tokens=100, output_tokens=1),
        Turn(text="done", input_tokens=10, output_tokens=1),
    )
    done = run_batch(str(tasks), "--out", "r.jsonl")
    assert done.returncode == 0, done.stderr
    record = read_results(tmp_path / "r.jsonl")["one"]
    assert (record["answer"], record["turns"], record["requests"]) == ("done", 2, 3)
    assert record["tokens"] >= 123
