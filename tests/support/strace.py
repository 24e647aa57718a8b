"""strace, to watch or tamper with a child's system calls (its fsyncs): whether it works here."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess

STRACE = shutil.which("strace")
MISSING = "strace is missing or cannot trace here (apt-get install strace)"


@functools.cache
def strace_works() -> bool:
    """Whether strace can trace a child here (a container may forbid ptrace)."""
    if STRACE is None:
        return False
    probe = [STRACE, "-f", "--seccomp-bpf", "-qq", "-o", os.devnull, "-e", "trace=fsync", "true"]
    return subprocess.run(probe, capture_output=True, timeout=30).returncode == 0
