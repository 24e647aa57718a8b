"""The git runner feeds git's stdin whole, however long git takes to read it.

A first snapshot of a repository of 50,000 files asks `git cat-file --batch-check` about every
blob: megabytes in while megabytes come out. Fed through a pipe beside the runner's periodic
look at the process, the rest of the input was dropped after the first look, and git waited
for it until the runner's 300 s limit ("git cat-file did not end"): no checkpoint at all."""

from __future__ import annotations

import subprocess
from pathlib import Path

from di_code.session.git_run import run_git


def test_a_feed_larger_than_a_pipe_reaches_git_whole(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    names = [f"{n:040x}" for n in range(200_000)]  # ~8 MB in, ~10 MB out
    out = run_git(tmp_path, ["cat-file", "--batch-check"], stdin="\n".join(names).encode() + b"\n")
    rows = out.decode().splitlines()
    assert rows == [f"{name} missing" for name in names]
