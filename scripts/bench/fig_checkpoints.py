"""Figure 9: the checkpoint taken before every prompt (and again after the answer), in git
repositories of 5,000, 50,000 and 200,000 tracked files, each with untracked and ignored files.

Measured in a fresh child each time, as each `run` is: a prompt's snapshot of the unchanged
tree, one after 20 files changed, and `git status --porcelain` on the same tree as the baseline
(what any git user already waits for), run in turn; the ratio to it is the target, at every
size, so the rows show how the cost grows. The snapshot around a tool call (which also lists
the ignored paths) is shown beside it. A snapshot of an unchanged tree must add no object.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from pathlib import Path

from scripts.bench.context import Bench
from scripts.bench.measure import run_child
from scripts.bench.report import Row, Stat, Target

SNAPSHOT = (
    "import sys, time; from pathlib import Path;"
    "from di_code.session.git_run import top_and_refs;"
    "from di_code.session.git_snapshot import GitSnapshots;"
    "from di_code.session.stat_cache import StatCache;"
    "found = top_and_refs(Path(sys.argv[1]), 'refs/di-code/');"
    "t = time.perf_counter(); cache = StatCache(Path(sys.argv[2]));"
    "git = GitSnapshots(found.path, stat_cache=cache, refs_listed=found.refs);"
    "git.refs.prune({'bench'}); snapshot = git.take(ignored=sys.argv[3] == 'tool');"
    "git.refs.keep('bench', snapshot.tree); cache.save(); print(time.perf_counter() - t)"
)
"""What a run's checkpoint does (`checkpoints.Checkpointer._take`), in a fresh process with the
private index a previous run left (the first run ever hashes every file's raw bytes). The work
tree's top and the refs are found before the clock starts: a run's set-up finds them with the
git state of the system prompt, before the request, and hands them to the checkpoints
(`setup.recording`), which ask git no more. `prompt` is
the snapshot every prompt takes (its tree alone is recorded); `tool` the one around a tool
call that may change files, which also lists and watches the ignored paths."""


def run(bench: Bench) -> list[Row]:
    rows: list[Row] = []
    for files in (bench.scale(5_000, 500), bench.scale(50_000, 2_000), bench.scale(200_000, 0)):
        if files:
            rows += _one_size(bench, files)
    return rows


def _one_size(bench: Bench, files: int) -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="checkpoints-") as scratch:
        repo = Path(scratch)
        _make_repo(repo, files)
        _snapshot_s(bench, repo)  # the first ever hashes every file: the cache is then warm
        _snapshot_s(bench, repo)  # but for the files whose ctime is its own second (just made)
        clean: list[float] = []
        tool: list[float] = []
        status: list[float] = []
        for _ in range(bench.repeats):  # side by side, so a change of load hits all three
            clean.append(_snapshot_s(bench, repo))
            status.append(_status_s(repo))
            tool.append(_snapshot_s(bench, repo, "tool"))
        objects_before = _objects(repo)
        _snapshot_s(bench, repo)
        new_objects = _objects(repo) - objects_before
        changed: list[float] = []
        changed_status: list[float] = []
        for round_ in range(bench.repeats):
            for n in range(20):
                (repo / f"d{n}" / f"f{n}.txt").write_text(f"changed {round_}\n")
            changed.append(_snapshot_s(bench, repo))
            changed_status.append(_status_s(repo))
    label = f"{files:,} files"
    return [
        Row("9", f"checkpoint, unchanged tree ({label})", "s", Stat.of(clean),
            "git status", Stat.of(status), Target(2.0, "ratio")),
        Row("9", f"checkpoint, 20 files changed ({label})", "s", Stat.of(changed),
            "git status", Stat.of(changed_status), Target(2.0, "ratio")),
        Row("9", f"snapshot around a tool call ({label})", "s", Stat.of(tool),
            "git status", Stat.of(status)),
        Row("9", f"objects added by an unchanged snapshot ({label})", "objects",
            Stat.of([float(new_objects)]), target=Target(0, "value")),
    ]  # fmt: skip


def _make_repo(repo: Path, files: int) -> None:
    for n in range(files):
        folder = repo / f"d{n % 200}"
        folder.mkdir(exist_ok=True)
        (folder / f"f{n}.txt").write_text(f"file {n}\n")
    (repo / ".gitignore").write_text("build/\n*.log\n")
    (repo / "build").mkdir()
    for n in range(max(files // 100, 1)):  # some untracked, some ignored, as a work tree has
        (repo / f"d{n % 200}" / f"new{n}.txt").write_text(f"untracked {n}\n")
        (repo / "build" / f"out{n}.o").write_bytes(b"ignored")
        (repo / f"d{n % 200}" / f"run{n}.log").write_text("ignored\n")
    env = ["-c", "user.name=bench", "-c", "user.email=bench@localhost"]
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run(["git", "add", "d*/f*.txt", ".gitignore"], cwd=repo, check=True)
    subprocess.run(["git", *env, "-c", "gc.auto=0", "commit", "-qm", "files"], cwd=repo, check=True)
    subprocess.run(["git", "gc", "-q"], cwd=repo, check=True)  # packed, as a real clone is
    hour_ago = time.time() - 3600  # a checkout is older than a snapshot's racy window
    for path in repo.glob("d*/*.txt"):
        os.utime(path, (hour_ago, hour_ago))


def _snapshot_s(bench: Bench, repo: Path, kind: str = "prompt") -> float:
    cache = repo / ".git" / "di-code-stat-cache.json"
    argv = [bench.python, "-c", SNAPSHOT, str(repo), str(cache), kind]
    done = run_child(argv, cwd=bench.root)
    return float(done.stdout.strip().splitlines()[-1])


def _status_s(repo: Path) -> float:
    return run_child(["git", "status", "--porcelain"], cwd=repo).wall_s


def _objects(repo: Path) -> int:
    out = subprocess.run(
        ["git", "count-objects", "-v"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout
    counts = dict(line.split(": ") for line in out.splitlines())
    return int(counts["count"]) + int(counts["in-pack"])
