"""di_code.system.children called in the test's own process (the other tests run it in a program
of their own): what the kernel holds for each child it starts (the death signal, a session of
its own), the groups it reads from /proc, and a stop that ends every child this process left.
The stop ends whatever this test process started: no fixture here keeps a child for longer."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from di_code.system.children import (
    descendants,
    dying_argv,
    group_members,
    open_child,
    run_child,
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
    for child in (polite, deaf):
        assert child.stdout is not None and child.stdout.readline() == b"ready\n"
    stop_children(grace=0.5)
    assert marker.read_text() == "term\n"
    assert polite.wait(timeout=60) == 0  # it heard TERM and left on its own
    assert deaf.wait(timeout=60) == -signal.SIGKILL
    for child in (polite, deaf):
        wait_until(lambda child=child: not alive(child.pid), f"child {child.pid} to end")
