"""Waiting for a task's process when the driver holds many descriptors: a batch of many jobs
(logs, results, slots, sockets) can have its exit descriptor numbered past 1024, where
`select()` refuses."""

from __future__ import annotations

import io
import os
import resource
import subprocess
import threading
from collections.abc import Iterator

import pytest

from di_code.batch.worker import Live, _StreamReader, _wait

HIGH = 1100


@pytest.fixture
def descriptors_past_1024() -> Iterator[None]:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < HIGH + 64:
        pytest.skip(f"this machine allows {hard} descriptors per process")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, HIGH + 64), hard))
    held = []
    try:
        while (fd := os.open(os.devnull, os.O_RDONLY)) < HIGH:
            held.append(fd)
        held.append(fd)
        yield
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_a_task_whose_exit_descriptor_is_past_1024_is_waited_for(
    descriptors_past_1024: None,
) -> None:
    process = subprocess.Popen(["sleep", "0.2"])
    live = Live()
    status = _wait(process, _StreamReader(io.BytesIO(), live), threading.Event(), live, 30)
    assert (status, process.returncode) == ("done", 0)
