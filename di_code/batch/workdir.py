"""The batch's own folder (`OUT.work`, or `--workdir`): one batch at a time.

Each task's checkout is `checkouts/ID` there, and a task's start first removes what a killed
run left at its place: a second batch on the same folder would delete the first one's
checkouts under its running tasks. So the folder is locked (an exclusive `flock` on
`batch.lock` in it) while its batch runs, and a second batch is refused with one line; the
lock goes with the driver however it ends, even by SIGKILL.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from di_code.system.errors import DiCodeError
from di_code.system.private_files import open_private

LOCK_NAME = "batch.lock"


class WorkdirBusy(DiCodeError):
    """Another batch holds the folder."""

    exit_code = 2


def hold_workdir(workdir: Path) -> int:
    """Lock `workdir` (made if missing) for this batch; the descriptor holds the lock until it
    is closed. WorkdirBusy when another batch holds it."""
    workdir.mkdir(parents=True, exist_ok=True)
    fd = open_private(workdir / LOCK_NAME, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise WorkdirBusy(f"{workdir} is in use by another batch") from None
    return fd
