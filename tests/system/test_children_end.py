"""How di-code's children end (di_code.system.children), on real processes: at exit a child
that honours SIGTERM gets it, one that ignores it is killed after the grace (or by the stop
signal's own bound), a child in di-code's own group is ended without ending di-code; a killed
git is ended with what it left; a library's child and a batch task's child die with their
parent. Each program under test runs in a session of its own, so the groups it ends are its
own, never the test runner's."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from di_code.system.children import (
    carrying,
    dying_argv,
    kill_tree,
    open_child,
    run_child,
    start_child,
)
from tests.support.bubblewrap import in_ci
from tests.support.imports import unmeasured
from tests.support.processes import MARK, alive, wait_until

pytestmark = pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="reads /proc (Linux)")

READY_LOOP = "echo ready; while :; do sleep 0.05; done"
"""A bash child's body once its traps are set: says so, then runs until it is signalled."""


def program(source: str) -> subprocess.Popen[str]:
    """`source` run by Python in a session of its own, its stdout read line by line."""
    return subprocess.Popen(
        [sys.executable, "-c", source],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def line(process: subprocess.Popen[str]) -> str:
    assert process.stdout is not None
    return process.stdout.readline().strip()


def ended(process: subprocess.Popen[str]) -> str:
    """The rest of a program's output once it has exited (0)."""
    out, _ = process.communicate(timeout=60)
    assert process.returncode == 0, out
    return out


STARTS = """
import os, signal, subprocess, sys
from di_code.system import stop_signals
from di_code.system.children import open_child, stop_children

def child(body):
    made = open_child(["bash", "-c", body], stdout=subprocess.PIPE)
    assert made.stdout.readline() == b"ready\\n"
    return made

polite = child("trap 'echo term > {marker}; exit 0' TERM; " + {loop!r})
deaf = child("trap '' TERM; " + {loop!r})
beside = subprocess.Popen(["bash", "-c", {loop!r}], stdout=subprocess.PIPE)  # a library's
assert beside.stdout.readline() == b"ready\\n"  # child, left in di-code's own group
print(polite.pid, deaf.pid, beside.pid, flush=True)
"""


def test_at_exit_sigterm_comes_first_and_sigkill_after_the_grace(tmp_path: Path) -> None:
    marker = tmp_path / "polite"
    stopping = program(
        STARTS.format(marker=marker, loop=READY_LOOP)
        + "stop_children(grace=0.5)\nprint('di-code still runs', flush=True)\n"
    )
    pids = [int(pid) for pid in line(stopping).split()]
    assert ended(stopping).strip() == "di-code still runs"  # its own group: not itself
    assert marker.read_text() == "term\n"  # asked first, and it stopped
    for pid in pids:  # the deaf one killed after the grace; the one in di-code's group too
        wait_until(lambda pid=pid: not alive(pid), f"child {pid} to end")


def test_after_a_stop_signal_a_deaf_child_does_not_hold_the_exit(tmp_path: Path) -> None:
    """The stop's bound (stop_signals.CHILDREN_WITHIN), not the 600 s grace, ends the wait."""
    stopping = program(
        STARTS.format(marker=tmp_path / "polite", loop=READY_LOOP)
        + "stop_signals.install()\n"
        + "with stop_signals.responding(lambda number: None):\n"
        + "    os.kill(os.getpid(), signal.SIGTERM)\n"
        + "stop_children(grace=600)\nprint('stopped', flush=True)\n"
    )
    pids = [int(pid) for pid in line(stopping).split()]
    assert ended(stopping).strip() == "stopped"
    assert not any(map(alive, pids))


HOLDS_THE_GIL = """
import re, threading
def backtrack():  # one C call holds the GIL about a second; the next starts at once
    while True:
        re.match(r"(a+)+$", "a" * 24 + "b")
threading.Thread(target=backtrack, daemon=True).start()
"""


def test_ending_at_once_beside_a_thread_that_holds_the_gil_kills_every_child(
    tmp_path: Path,
) -> None:
    """end_now's work (a /proc walk: hundreds of system calls) is a copy's of the process, which
    that thread is not in: here, each call would let it hold the GIL another second."""
    ending = subprocess.Popen(
        [
            sys.executable,
            "-c",
            STARTS.format(marker=tmp_path / "polite", loop=READY_LOOP)
            + HOLDS_THE_GIL
            + "stop_signals.end_now(signal.SIGTERM)\n",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env=unmeasured(None),  # coverage.py saves its data at os._exit: many calls, each a wait
    )
    pids = [int(pid) for pid in line(ending).split()]
    _, stderr = ending.communicate(timeout=60)  # the walk in the process itself: minutes
    assert ending.returncode == 128 + signal.SIGTERM
    assert stderr == "di-code: terminated\n"  # said once, by the copy
    for pid in pids:  # the one in di-code's own group too: the copy spares only itself
        wait_until(lambda pid=pid: not alive(pid), f"child {pid} to end")


def test_a_killed_tree_ends_what_left_the_group_and_what_ignored_the_grace(
    tmp_path: Path,
) -> None:
    left = tmp_path / "left"
    process = open_child(
        ["bash", "-c", f"trap '' TERM; setsid sleep 300 & echo $! > {left}; {READY_LOOP}"],
        stdout=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stdout.readline() == b"ready\n"
    wait_until(lambda: left.read_text().endswith("\n"), "the sleep that left the group")
    outside = int(left.read_text())
    kill_tree(process, grace=0.2)
    assert process.returncode == -signal.SIGKILL  # TERM ignored: killed after the grace
    wait_until(lambda: not alive(outside), "the sleep in its own session to end")


def test_a_killed_tree_asks_first_and_a_child_that_listens_stops() -> None:
    process = open_child(["sleep", "300"])
    kill_tree(process, grace=30)
    assert process.returncode == -signal.SIGTERM


def test_a_child_a_library_starts_dies_with_its_parent_even_by_sigkill() -> None:
    parent = program(
        "import subprocess, time\n"
        "from di_code.system.children import dying_argv\n"
        "child = subprocess.Popen(dying_argv(['sleep', '300']))\n"
        "print(child.pid, flush=True)\n"
        "time.sleep(300)\n"
    )
    pid = int(line(parent))
    wait_until(lambda: Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"sleep"), "exec")
    parent.kill()
    parent.wait()
    wait_until(lambda: not alive(pid), "the library's child to die with its parent")


def test_a_library_child_that_cannot_start_says_why_in_one_line() -> None:
    failed = subprocess.run(
        dying_argv(["no-such-program-di-code"]), capture_output=True, text=True, check=False
    )
    assert failed.returncode == 127
    assert failed.stderr.splitlines() == [
        "cannot start no-such-program-di-code: No such file or directory"
    ]


def test_a_batch_task_hears_when_its_keeper_is_gone(tmp_path: Path) -> None:
    """set_death_signal: the task (batch_child) gets SIGTERM, not a silent SIGKILL."""
    heard = tmp_path / "heard"
    task = (
        "import os, signal, sys, pathlib\n"
        "from di_code.system.children import set_death_signal\n"
        "def heard(*_):\n"
        f"    pathlib.Path({str(heard)!r} + '.new').write_text('term')\n"
        f"    os.replace({str(heard)!r} + '.new', {str(heard)!r})\n"
        "    sys.exit(0)\n"
        "signal.signal(signal.SIGTERM, heard)\n"
        "set_death_signal(signal.SIGTERM)\n"
        "print('ready', flush=True)\n"
        "signal.pause()\n"
    )
    keeper = program(
        "import subprocess, sys, time\n"
        f"task = subprocess.Popen([sys.executable, '-c', {task!r}], stdout=subprocess.PIPE)\n"
        "print(task.stdout.readline().decode().strip(), flush=True)\n"
        "time.sleep(300)\n"
    )
    assert line(keeper) == "ready"
    keeper.kill()
    keeper.wait()
    wait_until(heard.exists, "the task to hear of its keeper's end")  # written whole, then named
    assert heard.read_text() == "term"


def test_what_left_its_parent_is_found_by_the_mark_it_carries(tmp_path: Path) -> None:
    mark = f"carrying-{os.getpid()}-{tmp_path.name}"
    pid_file = tmp_path / "pid"
    subprocess.run(
        ["bash", "-c", f"(sleep 300 & echo $! > {pid_file})"],
        env={**os.environ, MARK: mark},
        check=True,
    )
    orphan = int(pid_file.read_text())
    try:
        assert carrying(f"{MARK}={mark}") == [orphan]
        assert carrying(f"{MARK}={mark}-other") == []
    finally:
        os.kill(orphan, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):  # adopted by this process, a subreaper
            os.waitpid(orphan, 0)


async def test_a_child_runs_in_a_group_of_its_own_unless_it_shares_the_terminal() -> None:
    own = await start_child("bash", "-c", "read line", stdin=asyncio.subprocess.PIPE)
    assert os.getpgid(own.pid) == own.pid  # ended with its group, whatever it starts
    await own.communicate(b"\n")
    shared = run_child(["bash", "-c", "ps -o pgid= -p $$"], own_group=False, capture_output=True)
    assert int(shared.stdout) == os.getpgrp()  # the pager: in di-code's group, on its terminal


def test_a_child_that_ended_and_is_not_collected_does_not_hold_the_stop() -> None:
    """An ended child nobody has collected yet (a zombie) is no live group: the stop returns at
    once instead of waiting out its grace (600 s here; the test's 60 s bound only ends a
    hang)."""
    stopping = program(
        "import time\n"
        "from di_code.system.children import open_child, stop_children\n"
        "child = open_child(['true'])\n"
        "def state():\n"
        "    return open(f'/proc/{child.pid}/stat').read().rsplit(')', 1)[1].split()[0]\n"
        "while state() != 'Z':\n"
        "    time.sleep(0.02)\n"
        "stop_children(grace=600)\n"
        "print('stopped', flush=True)\n"
    )
    try:
        assert ended(stopping).strip() == "stopped"
    finally:
        stopping.kill()


NEW_PID_NAMESPACE = (
    "import ctypes, os\n"
    "flags = 0x20000000 if os.geteuid() == 0 else 0x30000000  # CLONE_NEWPID (and NEWUSER)\n"
    "if ctypes.CDLL(None, use_errno=True).unshare(flags) != 0:\n"
    "    print('no namespace:', os.strerror(ctypes.get_errno()), flush=True)\n"
    "    raise SystemExit(0)\n"
)
"""Puts the program's next child in a new pid namespace, as its first process: its parent lies
outside, so it reads its parent's pid as 0."""


def test_a_child_whose_parent_is_not_its_maker_ends_without_running(tmp_path: Path) -> None:
    """The check between fork and exec: a child whose parent is no longer the process that made
    it (di-code died before the exec; it was handed to a reaper) exits 1 without running the
    command. Reached here without a death: the child is the first process of a new pid
    namespace, where its parent, outside it, reads as pid 0."""
    marker = tmp_path / "ran"
    maker = program(
        NEW_PID_NAMESPACE + "from di_code.system.children import run_child\n"
        f"print(run_child(['touch', {str(marker)!r}]).returncode, flush=True)\n"
    )
    told = ended(maker).strip()
    if told.startswith("no namespace"):
        pytest.skip(f"a new pid namespace cannot be made here ({told})")
    assert told == "1"
    assert not marker.exists()


DROPS = (
    "import os\n"
    "def drop():\n"
    "    os.setgroups([])\n"
    "    os.setresgid(65533, 65533, 65533)\n"
    "    os.setresuid(65533, 65533, 65533)\n"
)
"""A program's `drop()`: from root to a user of its own (65533), who owns no other process."""


def require_root() -> None:
    """Return as root, who can make processes of other users; else skip, or fail in CI."""
    if os.geteuid() == 0:
        return
    reason = "only root makes the processes of other users these tests need"
    if in_ci():
        pytest.fail(f"CI cannot run this test: {reason}", pytrace=False)
    pytest.skip(reason)


def test_a_stop_the_kernel_refuses_ends_quietly() -> None:
    """Children that belong to another user (a command run through sudo; here made by root
    before the program drops to a user of its own): the kernel refuses every signal (EPERM),
    to a group of its own as to a member of di-code's own group, and the stop still ends."""
    require_root()
    stopping = program(
        DROPS + "import subprocess\n"
        "from di_code.system.children import open_child, stop_children\n"
        "other = dict(user=65534, group=65534, extra_groups=[], stdout=subprocess.DEVNULL)\n"
        "apart = open_child(['sleep', '300'], **other)\n"
        "beside = subprocess.Popen(['sleep', '300'], **other)  # in di-code's group\n"
        "print(apart.pid, beside.pid, flush=True)\n"
        "drop()\n"
        "stop_children(grace=0.2)\n"
        "print('stopped', flush=True)\n"
    )
    pids = [int(pid) for pid in line(stopping).split()]
    try:
        assert ended(stopping).strip() == "stopped"
        assert all(map(alive, pids))  # each signal was refused
    finally:
        stopping.kill()
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):  # handed to this process, a subreaper
                os.waitpid(pid, 0)


def test_what_carries_a_mark_is_found_past_environments_it_cannot_read(tmp_path: Path) -> None:
    """Not as root, another user's environment (/proc/PID/environ) is closed, pid 1's among
    them: the search goes on past each one it cannot read. (As root, the program makes the
    marked process its new user's, then drops to that user.)"""
    mark = f"past-closed-{os.getpid()}-{tmp_path.name}"
    finder = program(
        DROPS + "import subprocess, time\n"
        "from di_code.system.children import carrying, open_child\n"
        "root = os.geteuid() == 0\n"
        "as_dropped = dict(user=65533, group=65533, extra_groups=[]) if root else {}\n"
        "marked = open_child(\n"
        "    ['sleep', '300'], stdout=subprocess.DEVNULL,\n"
        f"    env={{**os.environ, {MARK!r}: {mark!r}}}, **as_dropped\n"
        ")\n"
        "if root:\n"
        "    drop()\n"
        "try:\n"
        "    open('/proc/1/environ', 'rb').close()\n"
        "    print('pid 1 open', flush=True)\n"
        "    raise SystemExit(0)\n"
        "except PermissionError:\n"
        "    pass\n"
        # its environment opens to its user once its exec is through (a process made by one
        # that changed its user may not be read before)
        "while True:\n"
        "    try:\n"
        "        open(f'/proc/{marked.pid}/environ', 'rb').close()\n"
        "        break\n"
        "    except PermissionError:\n"
        "        time.sleep(0.01)\n"
        f"print(carrying({MARK + '=' + mark!r}) == [marked.pid], flush=True)\n"
    )
    told = ended(finder).strip()
    if told == "pid 1 open":
        pytest.skip("every environment is open to this user: none is skipped")
    assert told == "True"
