"""di_code.system.children called in the test's own process (the other tests run it in a program
of their own): what the kernel holds for each child it starts (the death signal, a session of
its own), the groups it reads from /proc, and a stop that ends every child this process left.
The stop ends whatever this test process started: no fixture here keeps a child for longer."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from di_code.system.children import (
    ChildrenLoop,
    descendants,
    dying_argv,
    group_members,
    kill_tree,
    let_go,
    open_child,
    run_child,
    set_death_signal,
    start_child,
    stop_children,
)
from tests.support.processes import alive, wait_until

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl, /proc")

TELLS = (
    "import ctypes, os\n"
    "death = ctypes.c_int()\n"
    "ctypes.CDLL(None).prctl(2, ctypes.byref(death))\n"  # PR_GET_PDEATHSIG
    "print(death.value, os.getsid(0) == os.getpid(), flush=True)\n"
)
"""A child that prints the signal the kernel sends it when its parent ends, and whether it
leads a session of its own."""
HELD = (9, True)  # SIGKILL, its own session and group


def told(out: bytes) -> tuple[int, bool]:
    death, own = out.split()
    return int(death), own == b"True"


def test_a_child_run_and_waited_on_dies_with_di_code_in_a_group_of_its_own() -> None:
    done = run_child([sys.executable, "-c", TELLS], capture_output=True, check=True)
    assert told(done.stdout) == HELD


def test_a_child_sharing_the_terminal_stays_in_di_codes_group() -> None:
    done = run_child([sys.executable, "-c", TELLS], own_group=False, capture_output=True)
    assert told(done.stdout) == (9, False)


def test_a_child_watched_by_its_caller_dies_with_di_code_in_a_group_of_its_own() -> None:
    process = open_child([sys.executable, "-c", TELLS], stdout=subprocess.PIPE)
    out, _ = process.communicate(timeout=60)
    assert told(out) == HELD


async def test_an_asyncio_child_dies_with_di_code_in_a_group_of_its_own() -> None:
    process = await start_child(sys.executable, "-c", TELLS, stdout=asyncio.subprocess.PIPE)
    out, _ = await process.communicate()
    assert told(out) == HELD


def test_a_child_a_library_starts_is_given_the_death_signal_by_the_launcher() -> None:
    done = subprocess.run(
        dying_argv([sys.executable, "-c", TELLS]), capture_output=True, check=True, timeout=60
    )
    assert told(done.stdout)[0] == 9


def test_a_group_is_read_with_each_live_member_and_the_tree_below_a_child(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    process = open_child(
        ["bash", "-c", f"sleep 300 & echo $! > {pid_file}; wait"], stdout=subprocess.DEVNULL
    )
    wait_until(lambda: pid_file.exists() and pid_file.read_text().endswith("\n"), "the sleep")
    sleep = int(pid_file.read_text())
    assert sorted(group_members(process.pid)) == sorted([process.pid, sleep])
    assert sleep in descendants(process.pid)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    wait_until(lambda: group_members(process.pid) == [], "the group to be empty")


def test_a_stop_asks_each_child_first_then_kills_one_that_does_not_listen(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "polite"
    ready = "echo ready; while :; do sleep 0.05; done"
    polite = open_child(
        ["bash", "-c", f"trap 'echo term > {marker}; exit 0' TERM; {ready}"],
        stdout=subprocess.PIPE,
    )
    deaf = open_child(["bash", "-c", f"trap '' TERM; {ready}"], stdout=subprocess.PIPE)
    # a library's child, left in this process's own group: ended one by one, not by its group
    beside = subprocess.Popen(["bash", "-c", ready], stdout=subprocess.PIPE)
    for child in (polite, deaf, beside):
        assert child.stdout is not None and child.stdout.readline() == b"ready\n"
    stop_children(grace=0.5)
    assert marker.read_text() == "term\n"
    assert polite.wait(timeout=60) == 0  # it heard TERM and left on its own
    assert deaf.wait(timeout=60) == -signal.SIGKILL
    assert beside.wait(timeout=60) == -signal.SIGTERM
    for child in (polite, deaf, beside):
        wait_until(lambda child=child: not alive(child.pid), f"child {child.pid} to end")


def test_a_job_in_a_group_of_its_own_within_the_childs_session_is_read_by_its_group(
    tmp_path: Path,
) -> None:
    """bash with job control puts `sleep` in a group of its own (not a session): the group is
    read from /proc's group field, not the session's."""
    pid_file = tmp_path / "pid"
    process = open_child(
        ["bash", "-c", f"set -m; sleep 300 & echo $! > {pid_file}; wait"],
        stdout=subprocess.DEVNULL,
    )
    wait_until(lambda: pid_file.exists() and pid_file.read_text().endswith("\n"), "the sleep")
    sleep = int(pid_file.read_text())
    try:
        assert group_members(sleep) == [sleep]
    finally:
        os.killpg(sleep, signal.SIGKILL)
        kill_tree(process)


def test_a_program_whose_name_holds_a_parenthesis_is_read_whole(tmp_path: Path) -> None:
    """/proc's stat shows the name in parentheses: one that holds `) ` must not shift the
    fields read after it."""
    odd = tmp_path / "x) S 1 1"
    shutil.copy(shutil.which("sleep") or "/bin/sleep", odd)
    process = open_child([str(odd), "300"])
    try:
        assert group_members(process.pid) == [process.pid]
    finally:
        kill_tree(process)


def test_every_branch_of_a_tree_is_below_it(tmp_path: Path) -> None:
    """Two subshells, each with a sleep below it: the walk down keeps both branches."""
    pids = tmp_path / "pids"
    process = open_child(
        ["bash", "-c", f"for n in 1 2; do (sleep 300 & echo $! >> {pids}; wait) & done; wait"],
        stdout=subprocess.DEVNULL,
    )
    wait_until(lambda: pids.exists() and len(pids.read_text().split()) == 2, "the two sleeps")
    sleeps = [int(pid) for pid in pids.read_text().split()]
    below = descendants(process.pid)
    kill_tree(process)
    assert set(sleeps) <= set(below) and len(below) == 4  # two subshells, two sleeps


def test_a_killed_tree_without_a_grace_ends_what_left_the_group(tmp_path: Path) -> None:
    left = tmp_path / "left"
    process = open_child(
        ["bash", "-c", f"setsid sleep 300 & echo $! > {left}; wait"], stdout=subprocess.DEVNULL
    )
    wait_until(lambda: left.exists() and left.read_text().endswith("\n"), "the sleep")
    outside = int(left.read_text())
    kill_tree(process)
    assert process.returncode == -signal.SIGKILL  # not asked first: no grace
    wait_until(lambda: not alive(outside), "the sleep in its own session to end")


def test_what_a_child_starts_while_it_is_asked_to_stop_is_killed_too(tmp_path: Path) -> None:
    """The tree is read again after the grace: a child that answers TERM by starting a
    process in a session of its own (and then ignores the stop) leaves nothing behind."""
    left = tmp_path / "left"
    process = open_child(
        [
            "bash",
            "-c",
            f"trap 'setsid sleep 300 & echo $! > {left}' TERM; echo ready; "
            "while :; do sleep 0.05; done",
        ],
        stdout=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stdout.readline() == b"ready\n"
    kill_tree(process, grace=2)
    assert process.returncode == -signal.SIGKILL
    outside = int(left.read_text())
    wait_until(lambda: not alive(outside), "the sleep started during the grace to end")


def test_a_tree_already_ended_and_collected_is_killed_without_error() -> None:
    process = open_child(["true"])
    process.wait()
    kill_tree(process, grace=1)
    assert process.returncode == 0


def test_a_child_that_ended_and_is_not_yet_collected_is_no_member() -> None:
    process = open_child(["true"])
    wait_until(lambda: not alive(process.pid), "the child to end (a zombie until collected)")
    assert group_members(process.pid) == []
    assert process.wait() == 0


def death_signal() -> int:
    """The signal the kernel sends this process when its parent ends (PR_GET_PDEATHSIG)."""
    death = ctypes.c_int()
    ctypes.CDLL(None).prctl(2, ctypes.byref(death))
    return death.value


def test_a_batch_task_asks_for_its_death_signal_itself() -> None:
    """set_death_signal, read back from the kernel in this process (its own value put back
    after, with prctl directly)."""
    before = death_signal()
    try:
        set_death_signal(signal.SIGTERM)
        assert death_signal() == signal.SIGTERM
    finally:
        ctypes.CDLL(None).prctl(1, before)  # PR_SET_PDEATHSIG


def test_the_launcher_runs_whatever_python_environment_the_command_is_given(
    tmp_path: Path,
) -> None:
    """A project's PYTHONPATH (here: one that holds its own `ctypes`) reaches the command
    the launcher starts, never the launcher itself (`python -I`)."""
    (tmp_path / "ctypes.py").write_text("raise SystemExit('the project ran in the launcher')\n")
    done = subprocess.run(
        dying_argv(["sh", "-c", 'echo "$PYTHONPATH"']),
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, f"{tmp_path}\n", "")


def test_a_tree_member_collected_during_the_grace_is_no_error() -> None:
    """The tree is read before the grace: a child that passes the stop on to its own child
    and collects it (as a batch task's keeper does) leaves a pid that is gone by the kill."""
    process = open_child(
        [
            "bash",
            "-c",
            "sleep 300 & child=$!; trap 'kill $child; wait $child; exit 0' TERM; echo ready; wait",
        ],
        stdout=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stdout.readline() == b"ready\n"
    kill_tree(process, grace=60)  # returns as soon as it has left: 60 s only bounds a hang
    assert process.returncode == 0


def test_a_tree_member_that_left_the_tree_during_the_grace_is_killed_too(tmp_path: Path) -> None:
    """A child that answers TERM by killing the subshell above a process in a session of its
    own: that process is handed to this process (a subreaper), out of the tree the kill reads
    after the grace. The tree read before it still names it."""
    left = tmp_path / "left"
    process = open_child(
        [
            "bash",
            "-c",
            f"(setsid sleep 300 & echo $! > {left}; wait) & keeper=$!; "
            "trap 'kill -9 $keeper' TERM; echo ready; while :; do sleep 0.05; done",
        ],
        stdout=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stdout.readline() == b"ready\n"
    wait_until(lambda: left.exists() and left.read_text().endswith("\n"), "the sleep")
    outside = int(left.read_text())
    kill_tree(process, grace=2)
    assert process.returncode == -signal.SIGKILL  # TERM trapped: killed after the grace
    try:
        wait_until(lambda: not alive(outside), "the sleep that left the tree to end")
    finally:  # handed to this process: collected here (killed first if the test failed)
        with contextlib.suppress(ProcessLookupError):
            os.kill(outside, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(outside, 0)


COUNTS_TERM = (
    "import signal, time\n"
    "signal.signal(signal.SIGTERM, lambda *_: print('term', flush=True))\n"
    "print('ready', flush=True)\n"
    "while True:\n"
    "    time.sleep(1)\n"
)
"""A child that stays after SIGTERM and prints a line for each one it receives."""


def test_a_stop_asks_each_group_once() -> None:
    """TERM once per group, then SIGKILL after the grace: to many programs (di-code among
    them) a second stop signal means "end now, skip the clean-up"."""
    process = open_child([sys.executable, "-c", COUNTS_TERM], stdout=subprocess.PIPE)
    assert process.stdout is not None and process.stdout.readline() == b"ready\n"
    stop_children(grace=1)
    assert process.wait(timeout=60) == -signal.SIGKILL
    assert process.stdout.read().splitlines() == [b"term"]


def test_a_loop_s_end_ends_the_children_left_running_on_it_and_closes_every_one() -> None:
    """`ChildrenLoop` knows the children started on it, by di-code (`start_child`) or by a
    library's exec or shell; `let_go` at its end ends the one still running (its end heard:
    a return code) and closes every transport, so none is finalized after the loop closed."""
    loop = ChildrenLoop()

    async def started() -> tuple[asyncio.subprocess.Process, ...]:
        running = await start_child("sleep", "1000")
        library = await asyncio.create_subprocess_exec("true")
        shell = await asyncio.create_subprocess_shell("exit 3")
        await library.wait()
        await shell.wait()
        return running, library, shell

    try:
        running, library, shell = loop.run_until_complete(started())
        assert len(loop.made) == 3
        let_go(loop)
        assert running.returncode is not None
        assert (library.returncode, shell.returncode) == (0, 3)
        assert all(transport.is_closing() for transport in loop.made)
    finally:
        loop.close()
    assert not alive(running.pid)


def test_a_loop_whose_children_all_ended_is_let_go_without_a_stop() -> None:
    """Nothing running: no stop is sent (a stop would wait its grace for nothing), the
    transports are closed all the same."""
    loop = ChildrenLoop()
    ended = loop.run_until_complete(asyncio.create_subprocess_exec("true"))
    loop.run_until_complete(ended.wait())
    try:
        let_go(loop)
        assert all(transport.is_closing() for transport in loop.made)
    finally:
        loop.close()
