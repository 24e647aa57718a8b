"""The fsync thread (di_code.system.disk_sync): files are synced in order, a failure is told,
and whatever goes wrong on the thread, a wait for it ends."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from di_code.system.disk_sync import Syncs, start_syncing, sync_soon, wait_synced


def test_a_synced_file_is_waited_for_and_a_failed_sync_is_told(tmp_path: Path) -> None:
    syncs = Syncs()
    with open(tmp_path / "log", "w") as file:
        file.write("line\n")
        file.flush()
        syncs.soon(file.fileno())
    reader, writer = os.pipe()  # fsync of a pipe fails (EINVAL)
    try:
        syncs.soon(writer)
        assert wait_synced(timeout=10)
    finally:
        os.close(reader)
        os.close(writer)
    failure = syncs.failure()
    assert isinstance(failure, OSError)
    assert syncs.failure() is None  # taken once


def test_a_told_failure_that_raises_does_not_leave_the_next_wait_hanging(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    raised: list[BaseException] = []
    monkeypatch.setattr(threading, "excepthook", lambda hook: raised.append(hook.exc_value))

    def teller_that_raises(exc: OSError) -> None:
        raise RuntimeError("a teller's own bug")

    reader, writer = os.pipe()
    try:
        sync_soon(writer, teller_that_raises)
        assert wait_synced(timeout=10)
    finally:
        os.close(reader)
        os.close(writer)
    assert [str(exc) for exc in raised] == ["a teller's own bug"]
    syncs = Syncs()  # and a later file still gets its thread
    reader, writer = os.pipe()
    try:
        syncs.soon(writer)
        assert wait_synced(timeout=10)
    finally:
        os.close(reader)
        os.close(writer)
    assert isinstance(syncs.failure(), OSError)


def test_a_file_handed_over_without_a_thread_is_synced_by_the_wait(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A prompt's file starts no thread (the request would wait for its start); the command's
    end still waits for its sync, which a failure told proves ran."""
    started: list[str] = []
    start = threading.Thread.start

    def noted(thread: threading.Thread) -> None:
        started.append(thread.name)
        start(thread)

    monkeypatch.setattr(threading.Thread, "start", noted)
    syncs = Syncs()
    syncs.deferred = True
    reader, writer = os.pipe()  # fsync of a pipe fails (EINVAL): the failure says it ran
    try:
        syncs.soon(writer)
        assert started == []
        assert wait_synced(timeout=10)
    finally:
        os.close(reader)
        os.close(writer)
    assert started == ["di-code-fsync"]
    assert isinstance(syncs.failure(), OSError)


def test_start_syncing_starts_the_thread_for_files_handed_over_without_one() -> None:
    told = threading.Event()
    reader, writer = os.pipe()
    try:
        sync_soon(writer, lambda exc: told.set(), start=False)
        start_syncing()
        assert told.wait(timeout=10)
        assert wait_synced(timeout=10)  # the thread has ended: the next test starts its own
    finally:
        os.close(reader)
        os.close(writer)


EXIT_WITHOUT_WAIT = """
import atexit, os, sys
atexit.register(lambda: (sys.stdout.flush(), os._exit(0)))  # di-code's last exit handler
from di_code.system.disk_sync import sync_soon
reader, writer = os.pipe()
sync_soon(writer, lambda exc: print("synced:", exc.strerror), start=False)
"""


def test_the_exit_syncs_a_file_no_thread_took() -> None:
    """A run that ends without waiting (an error on its way out) still syncs the prompt: the
    exit handler runs before di-code's last one, which ends the process without teardown."""
    done = subprocess.run(
        [sys.executable, "-c", EXIT_WITHOUT_WAIT], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("synced: Invalid argument"), done.stdout
