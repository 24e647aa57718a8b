"""The prompt's snapshot starts once the model's answer does, never before the request."""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from di_code.agent.events import AgentEndEvent, AgentStartEvent, MessageUpdateEvent
from di_code.ai.events import StartEvent
from di_code.session import SessionStore
from di_code.session.checkpoint_list import PromptCheckpoint, prompt_checkpoints
from di_code.session.checkpoints import Checkpointer
from tests.support.git import logging_git, past_this_second, subcommands


def git_repo(folder: Path) -> Path:
    folder.mkdir()
    (folder / "a.txt").write_text("a\n")
    for args in (["init", "-q"], ["add", "-A"]):
        subprocess.run(["git", *args], cwd=folder, check=True, timeout=30)
    return folder


async def test_the_snapshot_waits_for_the_answer_and_is_taken_once(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    session = SessionStore(tmp_path / "home").create(repo)
    checkpoints = Checkpointer(session, lambda raw: repo / raw)
    await checkpoints.on_event(AgentStartEvent())
    assert checkpoints._snapshot is None  # nothing competes with sending the request
    update = MessageUpdateEvent(StartEvent())
    await checkpoints.on_event(update)
    started = checkpoints._snapshot
    assert started is not None
    await checkpoints.on_event(update)
    assert checkpoints._snapshot is started
    await checkpoints.on_event(AgentEndEvent([]))
    assert [c.kind for c in prompt_checkpoints(session)] == ["git"]


async def test_a_prompt_that_got_no_answer_is_still_checkpointed(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    session = SessionStore(tmp_path / "home").create(repo)
    checkpoints = Checkpointer(session, lambda raw: repo / raw)
    await checkpoints.on_event(AgentStartEvent())
    await checkpoints.on_event(AgentEndEvent([]))
    assert [c.kind for c in prompt_checkpoints(session)] == ["git"]


async def prompt(repo: Path, home: Path) -> PromptCheckpoint:
    """One prompt without tool calls, in a new session (a new `run`), as the checkpoints see it."""
    session = SessionStore(home).create(repo)
    checkpoints = Checkpointer(session, lambda raw: repo / raw)
    await checkpoints.on_event(AgentStartEvent())
    await checkpoints.on_event(MessageUpdateEvent(StartEvent()))
    await checkpoints.on_event(AgentEndEvent([]))
    return prompt_checkpoints(session)[0]


async def test_a_prompt_without_tools_reads_the_tree_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The prompt's snapshot (the only one a prompt without tool calls takes) lists tracked
    and untracked files in one `ls-files` and leaves the ignored ones alone: each listing
    reads the index or walks the whole tree, which is what grows with the repository. The
    next run has git compare the stat data of its private index (`diff-files`, beside the
    listing), finds the unchanged tree it remembers and knows it is kept by a ref (listed by
    the `rev-parse` that found the work tree), so it asks git nothing more about it."""
    repo = git_repo(tmp_path / "repo")
    (repo / ".gitignore").write_text("*.log\n")
    (repo / "new.txt").write_text("untracked\n")
    (repo / "run.log").write_text("ignored\n")
    hour_ago = time.time() - 3600  # older than the racy window: the stat cache keeps them
    for name in (".gitignore", "a.txt", "new.txt"):
        os.utime(repo / name, (hour_ago, hour_ago))
    past_this_second()
    log = tmp_path / "git.log"
    monkeypatch.setenv("PATH", f"{logging_git(tmp_path / 'bin', log)}:{os.environ['PATH']}")
    first = await prompt(repo, tmp_path / "home")
    listings = [call for call in log.read_text().splitlines() if " ls-files " in f" {call} "]
    assert len(listings) == 1, listings
    assert " -o" in listings[0] and " -i" not in listings[0]
    shown = subprocess.run(["git", "ls-tree", "-r", "--name-only", first.before], cwd=repo,
                           capture_output=True, text=True, check=True).stdout.split()  # fmt: skip
    assert shown == [".gitignore", "a.txt", "new.txt"]
    log.unlink()
    again = await prompt(repo, tmp_path / "home")
    assert again.before == first.before
    called = subcommands(log)  # the listing and the comparison run side by side
    assert called[0] == "rev-parse" and called[-1] == "update-ref"  # a new session's ref
    assert sorted(called[1:-1]) == ["diff-files", "ls-files"]  # no filter to empty first


async def test_a_ref_named_after_a_pruned_tree_does_not_vouch_for_it(tmp_path: Path) -> None:
    """The next run takes a cached tree without asking git only when a ref of this home
    points at it: a ref merely named after it (a command wrote one) is no proof, and a tree
    git has pruned meanwhile is written again."""
    repo = git_repo(tmp_path / "repo")
    (repo / "new.txt").write_text("untracked: the snapshot's tree is no commit's\n")
    hour_ago = time.time() - 3600
    for name in ("a.txt", "new.txt"):
        os.utime(repo / name, (hour_ago, hour_ago))
    first = await prompt(repo, tmp_path / "home")

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
        return done.stdout.strip()

    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "a")
    ref = git("for-each-ref", "--format=%(refname)", "refs/di-code/")
    assert ref.endswith(f"/{first.before}")
    git("update-ref", ref, "HEAD")  # the same name, pointing at a commit
    git("reflog", "expire", "--expire=now", "--all")
    git("prune", "--expire=now")
    assert subprocess.run(["git", "cat-file", "-e", first.before], cwd=repo).returncode != 0
    again = await prompt(repo, tmp_path / "home")
    assert again.before == first.before
    assert git("cat-file", "-t", again.before) == "tree"


class CountingPool(ThreadPoolExecutor):
    """The loop's default executor, counting the work handed to it."""

    def __init__(self) -> None:
        super().__init__(max_workers=2)
        self.handed = 0

    def submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def, override]
        self.handed += 1
        return super().submit(fn, *args, **kwargs)


async def test_outside_git_a_chats_later_prompts_hand_no_snapshot_to_a_thread(
    tmp_path: Path,
) -> None:
    """The first prompt asks git (on a thread) where the work tree is and finds none; the
    next prompts know it and take their (empty) snapshot on the loop: no hand-off before the
    request. Each prompt is still recorded, as files."""
    folder = tmp_path / "plain"
    folder.mkdir()
    session = SessionStore(tmp_path / "home").create(folder)
    checkpoints = Checkpointer(session, lambda raw: folder / raw)
    pool = CountingPool()
    asyncio.get_running_loop().set_default_executor(pool)
    handed = []
    for _ in range(3):
        before = pool.handed
        await checkpoints.on_event(AgentStartEvent())
        await checkpoints.on_event(MessageUpdateEvent(StartEvent()))
        await checkpoints.on_event(AgentEndEvent([]))  # waits for the snapshot, if handed
        handed.append(pool.handed - before)
    assert handed == [1, 0, 0]
    assert [c.kind for c in prompt_checkpoints(session)] == ["files"] * 3
