"""The one place a process is started: whatever di-code starts dies with di-code.

Every child (bash's commands, hooks, MCP servers, git, rg, the pager) is started here:
- in a process group of its own (except a child that must share the terminal, the pager),
  so that `stop_children` (a normal exit: SIGTERM, then SIGKILL after a grace) and
  `kill_children` (a hard exit: SIGKILL at once) end the whole group, background jobs a
  command left in it included; the groups of children started around this module (an SDK's)
  are found in /proc and ended too;
- with PR_SET_PDEATHSIG (Linux): the kernel kills it
  with SIGKILL when di-code is gone, even by SIGKILL. The flag is set between fork and exec
  (`preexec_fn`: one prctl call on a function looked up beforehand, then a check that the
  parent did not die before it), or, for a child a library starts (the MCP SDK's stdio
  servers), by `dying_argv`: a `python -I -S -c` that sets it and execs the command.
- with di-code a child subreaper (PR_SET_CHILD_SUBREAPER, Linux; set when the first child
  is started): a process one of its children started and left
  (an MCP server's helper that called `setsid`, a daemon that double-forked) is re-parented
  to di-code instead of init, so it stays among di-code's descendants. At exit every
  descendant's group is ended, whatever group or session it moved to (`stop_children`,
  `kill_children`).
The flag reaches the child itself, not what it starts: when di-code is killed with SIGKILL, a
bash command's own children outlive it (only the sandbox's pid namespace catches those).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import os
import signal
import subprocess
import sys
import time
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from di_code.system import stop_signals

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
STOP_GRACE = 2.0
POLL = 0.02
KILL_ROUNDS = 3
"""Passes of SIGKILL at a hard exit: a process that forked while the first was sent is found
by the next."""
HEARD_WITHIN = 1.0
"""Seconds the loop's end waits, once its children are killed, for asyncio to hear their ends:
the kernel's reaping, not the children, which cannot hold it."""
LAUNCHER = (
    "import ctypes,os,sys\n"
    "ctypes.CDLL(None).prctl(1,9)\n"
    "os.getppid()==int(sys.argv[1]) or os._exit(1)\n"
    "try:os.execvp(sys.argv[2],sys.argv[2:])\n"
    "except OSError as e:print(f'cannot start {sys.argv[2]}: {e.strerror}',file=sys.stderr)\n"
    "os._exit(127)"
)
"""`dying_argv`'s program: PR_SET_PDEATHSIG (1) with SIGKILL (9), then the command."""


class ChildrenLoop(asyncio.SelectorEventLoop):
    """asyncio's event loop, which knows the children started on it (by `start_child`, or by a
    library, as the MCP SDK starts its servers), so that its end can let them go (`let_go`)."""

    def __init__(self) -> None:
        super().__init__()
        self.made: weakref.WeakSet[asyncio.SubprocessTransport] = weakref.WeakSet()
        """Their transports; one collected while the loop runs was closed by the collection."""

    async def subprocess_exec(self, *args: Any, **options: Any) -> Any:
        return self._known(await super().subprocess_exec(*args, **options))

    async def subprocess_shell(self, *args: Any, **options: Any) -> Any:
        return self._known(await super().subprocess_shell(*args, **options))

    def _known(self, made: tuple[asyncio.SubprocessTransport, Any]) -> Any:
        self.made.add(made[0])
        return made


def let_go(loop: ChildrenLoop) -> None:
    """At the end of `loop` (it runs no more; it is not closed yet): every child started on it
    that is still running (work a stop left behind) is stopped as at exit (`stop_children`: the
    whole tree, TERM then KILL), its end is heard, and the transports still open are closed.
    Afterwards nothing of them is finalized: left to the garbage collector, an open transport's
    close, or a child's end reported to the closed loop, wrote a warning or a traceback after
    the stop's own line."""
    made = list(loop.made)
    if any(transport.get_returncode() is None for transport in made):
        stop_children()
        loop.run_until_complete(_heard(made, time.monotonic() + HEARD_WITHIN))
    for transport in made:
        transport.close()
    loop.run_until_complete(asyncio.sleep(0))  # the pipes' closes, scheduled on the loop


async def _heard(made: list[asyncio.SubprocessTransport], deadline: float) -> None:
    """Until asyncio has heard every ended child's end (its watcher reaps it and tells the
    loop), or `deadline`: a killed child's end comes at once."""
    while any(t.get_returncode() is None for t in made) and time.monotonic() < deadline:
        await asyncio.sleep(POLL)


async def start_child(*argv: str, **options: Any) -> asyncio.subprocess.Process:
    """`asyncio.create_subprocess_exec` through this module, in a group of its own. A stop
    while the child is being made (it runs already; its pipes are being connected) kills it
    and its group once it is made: asyncio would otherwise kill only the child itself and then
    wait for its pipes, which a process it started (a hook's `sleep`) holds open, for ever."""
    making = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            *argv, start_new_session=True, preexec_fn=_in_child(), **options
        )
    )
    try:
        return await asyncio.shield(making)
    except asyncio.CancelledError:
        making.add_done_callback(_kill_made)
        raise


def _kill_made(making: asyncio.Future[asyncio.subprocess.Process]) -> None:
    """The child a stopped `start_child` made, and its group, killed."""
    if making.cancelled() or making.exception() is not None:
        return
    signal_group(making.result().pid, signal.SIGKILL)


def run_child(
    argv: Sequence[str], *, own_group: bool = True, **options: Any
) -> subprocess.CompletedProcess[bytes]:
    """`subprocess.run` through this module, for a child waited on at once (a probe, the pager,
    rg); a hard exit meanwhile leaves it to PR_SET_PDEATHSIG."""
    return subprocess.run(argv, start_new_session=own_group, preexec_fn=_in_child(), **options)


def kill_tree(process: subprocess.Popen[bytes], grace: float = 0.0) -> None:
    """SIGKILL to `process`, its group and every process below it (one that left the group
    with `setsid` included: the tree is read first, since a process whose parent dies is
    handed to a reaper), then the process reaped. With a `grace`, `process` alone is first
    asked to stop (SIGTERM: it may pass the stop on, as a batch task's keeper does) and given
    that long."""
    tree = descendants(process.pid)
    if grace:
        with contextlib.suppress(OSError):
            os.kill(process.pid, signal.SIGTERM)
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            tree += descendants(process.pid)
    signal_group(process.pid, signal.SIGKILL)
    for pid in tree:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    process.wait()


def dying_argv(argv: Sequence[str]) -> list[str]:
    """`argv` run so that it dies with di-code, for a child a library starts itself (it must
    start it in a group of its own, as the MCP SDK does)."""
    _adopt_orphans()
    if not sys.platform.startswith("linux"):
        return list(argv)
    return [sys.executable, "-I", "-S", "-c", LAUNCHER, str(os.getpid()), *argv]


@functools.cache
def _adopt_orphans() -> None:
    """Become a child subreaper (Linux) and stop every descendant at exit: from the first
    child on, what any child leaves behind stays below di-code."""
    _stop_at_exit()
    if sys.platform.startswith("linux"):
        _prctl()(PR_SET_CHILD_SUBREAPER, 1)


def set_death_signal(number: int) -> None:
    """Ask the kernel for signal `number` when this process's parent (thread) ends."""
    _prctl()(PR_SET_PDEATHSIG, number)


def _in_child() -> Callable[[], None] | None:
    """The `preexec_fn` that sets PR_SET_PDEATHSIG (Linux; elsewhere none)."""
    _adopt_orphans()
    if not sys.platform.startswith("linux"):
        return None
    prctl, parent = _prctl(), os.getpid()

    # between fork and exec: no imports, no locks (and no coverage data: the child execs)
    def in_child() -> None:  # pragma: no cover
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:
            os._exit(1)

    return in_child


@functools.cache
def _prctl() -> Callable[..., int]:
    import ctypes

    return ctypes.CDLL(None, use_errno=True).prctl


@functools.cache
def _stop_at_exit() -> None:
    atexit.register(stop_children)


def stop_children(grace: float = STOP_GRACE) -> None:
    """SIGTERM every live descendant's group, SIGKILL what is left after `grace` seconds; a
    group that appears meanwhile (a process forked or re-parented to di-code) is sent SIGTERM
    when it is seen. Synchronous: it runs at exit, after the event loop is gone. After a stop
    signal the SIGKILL comes by the stop's own bound at the latest (stop_signals.children_due):
    a child that ignores TERM does not hold the stop."""
    deadline = time.monotonic() + grace
    due = stop_signals.children_due()
    if due is not None:
        deadline = min(deadline, due)
    warned: set[int] = set()
    while live := _live_groups():
        if time.monotonic() >= deadline:
            kill_children()
            return
        for pgid in live - warned:
            _signal_group_or_members(pgid, signal.SIGTERM)
        warned |= live
        time.sleep(POLL)


def kill_children(root: int | None = None) -> None:
    """SIGKILL every live descendant's group at once (a hard exit: nothing waits). `root`: the
    process whose descendants they are, when not this one (di-code's copy that ends it:
    stop_signals.end_now); this process is spared either way."""
    for _ in range(KILL_ROUNDS):
        live = _live_groups(root)
        if not live:
            return
        for pgid in live:
            _signal_group_or_members(pgid, signal.SIGKILL, root)


def _live_groups(root: int | None = None) -> set[int]:
    """The groups of every live process `_below` root (di-code's own group among them: its
    members are signalled one by one). Every process of a group a child was started in is
    among them: only a process of the child's own session (forked below it) can join the
    group, and di-code is a subreaper, so what a parent leaves stays below di-code."""
    table = _table()
    below = _below(root, table)
    return {pgid for pid, _, pgid, state in table if state != "Z" and pid in below}


def _signal_group_or_members(pgid: int, number: int, root: int | None = None) -> None:
    """Signal the group, or, for di-code's own group, each of its live members `_below` root."""
    if pgid != os.getpgrp():
        signal_group(pgid, number)
        return
    table = _table()
    below = _below(root, table)
    for pid, _, group, state in table:
        if group == pgid and state != "Z" and pid in below:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, number)


def _below(root: int | None, table: list[tuple[int, int, int, str]]) -> set[int]:
    """The processes below `root` (di-code; None: this process) but this one (di-code's copy
    that ends it is below it: stop_signals.end_now)."""
    return set(_descendants(os.getpid() if root is None else root, table)) - {os.getpid()}


def descendants(pid: int) -> list[int]:
    """The processes below `pid` now (Linux /proc; elsewhere none are known)."""
    return _descendants(pid, _table())


def _descendants(pid: int, table: list[tuple[int, int, int, str]]) -> list[int]:
    children: dict[int, list[int]] = {}
    for child, parent, _, _ in table:
        children.setdefault(parent, []).append(child)
    found: list[int] = []
    pending = [pid]
    while pending:
        below = children.get(pending.pop(), [])
        found += below
        pending += below
    return found


def carrying(mark: str) -> list[int]:
    """The processes whose environment holds `mark` (`NAME=value`, given to a command it
    passes on): those of the command that left its group and whose parent is gone (a double
    fork re-parents them to di-code, out of `descendants`). One that emptied its
    environment is not found."""
    needle = mark.encode()
    found = []
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/environ", "rb") as f:
                    if needle in f.read().split(b"\0"):
                        found.append(int(entry))
            except OSError:
                continue
    return found


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes of a process group."""
    if not os.path.isdir("/proc/self"):
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return []
        return [pgid]
    return [pid for pid, _, group, state in _table() if group == pgid and state != "Z"]


def _table() -> list[tuple[int, int, int, str]]:
    """(pid, parent, process group, state) of every process in /proc."""
    rows = []
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 2:
            rows.append((int(entry), int(fields[1]), int(fields[2]), fields[0].decode()))
    return rows


def signal_group(pgid: int, number: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, number)


def open_child(argv: Sequence[str], **options: Any) -> subprocess.Popen[bytes]:
    """`subprocess.Popen` through this module, in a group of its own, for a child whose wait
    the caller bounds itself (git, killed with its group when it blocks on a FIFO); it dies
    with di-code. (The death signal costs a fork where Python would use vfork, for every git
    call: without it a git blocked on a pipe outlived a killed di-code.)"""
    return subprocess.Popen(argv, start_new_session=True, preexec_fn=_in_child(), **options)
