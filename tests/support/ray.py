"""A Ray head started by the test for the batch tests that run on Ray (the module skips without
Ray)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.local_port import free_port
from tests.support.processes import wait_until

pytest.importorskip("ray", reason="Ray is not installed here: pip install 'di-code[ray]'")


RAY = str(Path(sys.executable).parent / "ray")


def accepts(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


@contextlib.contextmanager
def ray_head_with(env: dict[str, str]) -> Iterator[str]:
    """A Ray head on 127.0.0.1 with one CPU whose workers get `env`; stopped by its process
    group at the end (never `ray stop`, which would stop every Ray on the machine)."""
    temp = tempfile.mkdtemp(prefix="ray-", dir="/tmp")  # short: Ray's socket paths are long
    port = free_port()
    command = [RAY, "start", "--head", "--block", f"--port={port}", f"--temp-dir={temp}"]
    command += ["--node-ip-address=127.0.0.1", "--num-cpus=1", "--include-dashboard=false"]
    head = subprocess.Popen(
        [*command, "--disable-usage-stats"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_until(lambda: accepts(port), "the Ray head")
        yield f"127.0.0.1:{port}"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(head.pid, signal.SIGKILL)
        head.wait()
        shutil.rmtree(temp, ignore_errors=True)
