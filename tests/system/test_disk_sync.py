"""The fsync thread (di_code.system.disk_sync): files are synced in order, a failure is told,
and whatever goes wrong on the thread, a wait for it ends."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from di_code.system.disk_sync import Syncs, sync_soon, wait_synced


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
