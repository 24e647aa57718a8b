"""Checkpoints: every prompt can be taken back, including what bash changed (README, Undo).

Undo may change a file only when it can prove that the prompt's tools made the change and
nobody changed it since. So the files are recorded at the prompt's start and around each tool
call that may change them (`before_tool`/`after_tool`): what changed between a tool's two
snapshots is the tool's, whatever changed at any other time (the user typing in an editor
while the model thinks) is the user's. Inside git a snapshot is a tree (`git_snapshot`);
elsewhere the originals of what write and edit change are copied (`file_backup`). The first
snapshot runs on a worker thread from the stream's start, while the request goes out and the
model thinks (git on a large tree would hold up the request if it ran before it); the first
tool waits for it. Outside git, once known (by an earlier prompt, or by the set-up's git
state), there is nothing to take and no thread is asked. The snapshot code is loaded on that
thread, inside a work tree only, and the backup code when the prompt's first record is made
(its first tool, or its end): neither before the request (issue 47: recording the session
costs `run`'s first request as little as it can).

A stop (the prompt's abort signal: Ctrl-C, SIGTERM, ACP's cancel) ends the snapshot work no
tool needs: until a tool that may change files runs, nothing di-code did changed them, so the
running snapshot's git is killed, its thread returns at once and the prompt records nothing.
Once such a tool has run, its snapshots are finished whatever the stop: undo needs them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from di_code.agent.events import (
    AgentEndEvent,
    AgentEvent,
    AgentStartEvent,
    MessageEndEvent,
    MessageUpdateEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
)
from di_code.ai.types import UserMessage
from di_code.session.format import CheckpointPhase, SessionError
from di_code.session.git_run import GitError, GitStopped, top_and_refs
from di_code.session.session import Session
from di_code.session.snapshot_places import (
    FindTop,
    backup_folder,
    git_snapshots,
    refs_prefix,
    stored_ids,
)

if TYPE_CHECKING:
    from di_code.session.file_backup import FileBackup
    from di_code.session.git_snapshot import GitSnapshots, Snapshot

logger = logging.getLogger(__name__)

READ_ONLY_TOOLS = frozenset({"read", "grep", "find", "ls", "todo", "fetch"})
"""Tools that change no file: no snapshot around them (their time counts as the user's)."""
FILE_TOOLS = frozenset({"write", "edit"})
"""Outside git, only these tools' changes are captured (their `path` argument)."""

Locate = Callable[[str], Path]
"""Turns a tool's `path` argument into the absolute file (raises when it is refused)."""


class Checkpointer:
    """Takes the checkpoints of one session's prompts; subscribe `on_event` to the Agent.

    `before_tool`/`after_tool` are the whole interface a tool runner needs: called around
    every tool call, in order, they record what that call changed. `prompt_stopped` says
    whether the running prompt was stopped (read from the snapshot's thread)."""

    def __init__(
        self,
        session: Session,
        locate: Locate,
        *,
        max_file_bytes: int | None = None,
        on_warning: Callable[[str], None] = lambda message: None,
        prompt_stopped: Callable[[], bool] = lambda: False,
        find_top: FindTop = top_and_refs,
        top_known: Callable[[Path], bool] = lambda folder: False,
    ) -> None:
        self.session = session
        self.find_top = find_top
        """Where a folder's work tree is (git asked, unless the set-up already knows)."""
        self.top_known = top_known
        """Whether `find_top` answers for a folder without asking git (the set-up found it):
        outside git the prompt's snapshot is then none, known on the loop, no thread."""
        self.prompt_stopped = prompt_stopped
        self.locate = locate
        self.max_file_bytes = max_file_bytes
        self.on_warning = on_warning
        self._git: GitSnapshots | None = None
        self._git_known = False
        self._numbered: int | None = None
        """The session's last prompt number when a prompt here first records (read once, then:
        after the request)."""
        self._begun = 0
        """The prompts begun here: the current one is `_numbered + _begun`."""
        self._leaf: str | None = None
        self._typed: UserMessage | None = None
        """The prompt's first user message: its text titles the prompt's checkpoint."""
        self._snapshot: asyncio.Future[Snapshot | None] | None = None
        self._last: Snapshot | None = None
        """The newest snapshot of this prompt (git)."""
        self._tool_before: Snapshot | None = None
        self._running: dict[str, str] = {}
        """Tool calls that may change files and have not ended: call id -> the path argument
        of write/edit ("" for any other tool)."""
        self._batch: list[str] | None = None
        """The paths the running tool calls can change, relative to the work tree (None: any,
        a bash call is running)."""
        self._backup: FileBackup | None = None
        self._backup_lock = asyncio.Lock()
        self._recorded = False
        self._failed = False
        self._tool_ran = False
        """A tool that may change files ran in this prompt: its snapshots are never stopped."""
        self._warned: tuple[str, ...] = ()

    async def on_event(self, event: AgentEvent) -> None:
        if isinstance(event, AgentStartEvent):
            self._begin()
        elif isinstance(event, MessageUpdateEvent):
            # the stream's start, before the request is sent: the snapshot (seconds in a large
            # repository) runs while the model thinks, so the first tool call rarely waits for
            # it, and what it cannot cover is said before the model answers. Started at the
            # answer's first event instead, it costs the request nothing measurable on a quiet
            # machine and delays that tool by the whole snapshot (docs/benchmarks.md, issue 47)
            self._start_snapshot()
        elif isinstance(event, MessageEndEvent) and isinstance(event.message, UserMessage):
            self._typed = self._typed or event.message
        elif isinstance(event, ToolExecutionStartEvent):
            await self.before_tool(event.tool_call_id, event.tool_name, event.arguments)
        elif isinstance(event, ToolExecutionEndEvent):
            await self.after_tool(event.tool_call_id)
        elif isinstance(event, AgentEndEvent):
            await self._end()

    async def before_tool(self, call_id: str, name: str, arguments: Any) -> None:
        """Record the files as they are before a tool that may change them runs."""
        await self._record_before()
        if name in READ_ONLY_TOOLS or self._failed:
            return
        path = arguments.get("path") if isinstance(arguments, dict) else None
        first = not self._running
        self._running[call_id] = path if name in FILE_TOOLS and isinstance(path, str) else ""
        if self._backup is not None and self._running[call_id]:
            await self._off_loop(self._save_original, self._backup, self._running[call_id])
        elif self._git is not None:
            self._batch = [] if first else self._batch
            self._batch = self._in_tree(self._running[call_id], self._batch)
            if first:
                self._tool_before = await self._take_and_record("tool-before", "before this tool")
        self._tool_ran = True

    async def after_tool(self, call_id: str) -> None:
        """Record what the tool call `call_id` left (once no other tool call is running)."""
        path = self._running.pop(call_id, None)
        if path is None or self._running:
            return
        if self._backup is not None:
            if path:
                await self._off_loop(self._seal, self._backup, path)
        elif self._git is not None and self._tool_before is not None:
            before, self._tool_before = self._tool_before, None
            paths = tuple(self._batch) if self._batch is not None else None
            await self._take_and_record("tool-after", "after this tool", before, paths)

    def _in_tree(self, raw: str, batch: list[str] | None) -> list[str] | None:
        """`batch` with the work-tree path a write/edit argument stands for; None (any path)
        for a tool that is not one. A refused or outside path adds nothing: the tool cannot
        change a file of the tree through it."""
        if batch is None or not raw or self._git is None:
            return None
        try:
            path = self.locate(raw)
        except Exception:
            return batch
        if path.is_relative_to(self._git.top):
            batch.append(path.relative_to(self._git.top).as_posix())
        return batch

    def _begin(self) -> None:
        self._begun += 1
        self._leaf, self._typed = self.session.leaf_id, None
        self._recorded = self._failed = self._tool_ran = False
        self._backup = self._last = self._tool_before = self._snapshot = None
        self._running = {}

    @property
    def _number(self) -> int:
        """The current prompt's number. The session's last one is read at the first record,
        after the request (the listing's code is loaded then, not before it): until this
        prompt's, the checkpoints in the session are those before it, or undo's and rewind's
        marks of earlier prompts, whose numbers are not higher."""
        if self._numbered is None:
            from di_code.session.checkpoint_list import prompt_checkpoints

            self._numbered = max((c.number for c in prompt_checkpoints(self.session)), default=0)
        return self._numbered + self._begun

    def _take(self, ignored: bool = True) -> Snapshot | None:
        """A snapshot of the work tree, or None outside git (found out once, off the main
        thread, so start-up never waits for git); `ignored`: see `GitSnapshots.take`."""
        if not self._git_known:
            self._git = git_snapshots(
                self.session, self.max_file_bytes, self._needless, self.find_top
            )
            self._git_known = True
            if self._git is not None:
                self._git.refs.prune(self._live_sessions())
        if self._git is None:
            return None
        snapshot = self._git.take(ignored=ignored)
        self._git.refs.keep(self.session.id, snapshot.tree)
        return snapshot

    def _needless(self) -> bool:
        """Whether the snapshot running now may be ended: the prompt was stopped before a
        tool that may change files ran (no tool will run now: a stopped prompt runs none)."""
        return not self._tool_ran and self.prompt_stopped()

    def _live_sessions(self) -> set[str]:
        return stored_ids(self.session.path.parent.parent) | {self.session.id}

    def _start_snapshot(self) -> asyncio.Future[Snapshot | None]:
        if self._snapshot is None and self._outside_git():
            # nothing to take: no thread (a hand-off the request waits for on a loaded machine)
            self._snapshot = asyncio.get_running_loop().create_future()
            self._snapshot.set_result(None)
        elif self._snapshot is None:
            # only its tree is recorded: the ignored paths matter around tool calls alone
            self._snapshot = asyncio.ensure_future(asyncio.to_thread(self._take, False))
            self._snapshot.add_done_callback(self._taken)
        return self._snapshot

    def _outside_git(self) -> bool:
        """Whether the session's folder is known to be in no work tree without asking git:
        found so by an earlier prompt, or by the set-up."""
        folder = Path(self.session.cwd)
        if (
            not self._git_known
            and self.top_known(folder)
            and self.find_top(folder, refs_prefix(self.session)) is None
        ):
            self._git_known = True
        return self._git_known and self._git is None

    def _taken(self, task: asyncio.Future[Snapshot | None]) -> None:
        """Say what the prompt's first snapshot misses as soon as it is known."""
        if not task.cancelled() and task.exception() is None:
            snapshot = task.result()
            if snapshot is not None:
                self._warn_incomplete(snapshot.skipped)

    async def _record_before(self) -> None:
        if self._recorded:
            return
        self._recorded = True
        try:
            snapshot = await self._start_snapshot()
        except GitStopped:  # stopped before any tool ran: nothing to record, nor to say
            self._failed = True
            return
        except (GitError, OSError) as exc:
            self._failed = True
            self.on_warning(f"checkpoint failed, this prompt cannot be undone: {exc}")
            return
        if snapshot is None:
            from di_code.session.file_backup import FileBackup
            from di_code.session.git_snapshot import DEFAULT_MAX_FILE_BYTES

            ref, limit = str(self._number), self.max_file_bytes or DEFAULT_MAX_FILE_BYTES
            self._backup = FileBackup(backup_folder(self.session, ref), limit)
            self._append("before", "files", ref, ())
            return
        self._last = snapshot
        self._append("before", "git", snapshot.tree, snapshot.skipped)
        self._warn_incomplete(snapshot.skipped)

    async def _take_and_record(
        self,
        phase: CheckpointPhase,
        when: str,
        since: Snapshot | None = None,
        paths: tuple[str, ...] | None = None,
    ) -> Snapshot | None:
        try:
            snapshot = await asyncio.to_thread(self._take)
        except GitStopped:  # before the tool: a stopped prompt does not run it
            return None
        except (GitError, OSError) as exc:
            self.on_warning(f"checkpoint {when} failed, undo will keep its changes: {exc}")
            return None
        assert snapshot is not None  # inside git, as the prompt's first snapshot found
        skipped = snapshot.skipped
        if since is not None:
            from di_code.session.tool_call_skips import uncovered  # git's: loaded by now

            skipped += uncovered(since, snapshot, paths)
        self._last = snapshot
        self._append(phase, "git", snapshot.tree, skipped, paths)
        return snapshot

    def _warn_incomplete(self, skipped: tuple[str, ...]) -> None:
        """Say once (until it changes) what the snapshots do not cover, before any tool."""
        if skipped and skipped != self._warned:
            from di_code.session.git_snapshot import parse_skip  # loaded: it skipped them

            shown = [
                f"{path or 'untracked files'} ({reason})"
                for reason, path in map(parse_skip, skipped)
            ]
            more = f" and {len(shown) - 5} more" if len(shown) > 5 else ""
            self.on_warning(f"undo will not cover: {'; '.join(shown[:5])}{more}")
        self._warned = skipped

    async def _off_loop(self, work: Callable[[FileBackup, str], str], *args: Any) -> None:
        """A backup's file work in a thread (a large file is read and hashed), one at a
        time; its warning said on the loop."""
        async with self._backup_lock:
            warning = await asyncio.to_thread(work, *args)
        if warning:
            self.on_warning(warning)

    def _save_original(self, backup: FileBackup, raw: str) -> str:
        try:
            path = self.locate(raw)
        except Exception:  # a refused path: the tool says so
            return ""
        failure = backup.save(path)
        return f"no backup of {raw}, undo cannot restore it: {failure}" if failure else ""

    def _seal(self, backup: FileBackup, raw: str) -> str:
        try:
            path = self.locate(raw)
        except Exception:
            return ""
        failure = backup.seal(path)
        return f"backup record of {raw} failed, undo will keep it: {failure}" if failure else ""

    async def _end(self) -> None:
        await self._record_before()
        if self._failed:
            return
        if self._backup is not None:
            from di_code.session.git_snapshot import skip

            originals = self._backup.originals
            failed = tuple(skip(o.failed, o.path) for o in originals if o.failed)
            self._append("after", "files", str(self._number) if originals else "", failed)
        elif self._last is not None:
            self._append("after", "git", self._last.tree, ())
        if self._git is not None:
            await asyncio.to_thread(self._git.stat_cache.save)

    def _append(
        self, phase: CheckpointPhase, kind: Literal["git", "files"], ref: str,
        skipped: tuple[str, ...], paths: tuple[str, ...] | None = None,
    ) -> None:  # fmt: skip
        if self._failed:
            return
        from di_code.session.checkpoint_list import typed_title  # not before the request

        leaf = self._leaf if phase == "before" else None
        title = typed_title(self._typed) if self._typed is not None else ""
        try:
            self.session.append_checkpoint(
                self._number, phase, kind, ref, leaf_id=leaf, title=title,
                skipped=skipped, paths=paths,
            )  # fmt: skip
        except SessionError as exc:  # a full disk: one line, and no more checkpoints to fail
            self._failed = True
            self.on_warning(f"checkpoint not recorded, undo may miss this prompt's changes: {exc}")
