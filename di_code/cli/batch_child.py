"""The process of one `di-code batch` task: `di-code run` under a keeper that leaves nothing.

The keeper ends with the driver (the kernel sends it SIGTERM when the driver's thread that
started it dies, even by SIGKILL) and passes SIGTERM, SIGINT and SIGHUP on to `run`, which
aborts and stops bash's process groups. It is also the task's subreaper: a process that
leaves its group and loses its parent (a `setsid` job, a sandbox whose parent went first) is
handed to the keeper instead of init, and whatever of those is still there when `run` ends is
killed. So a task, however it ends, leaves nothing running. `run` is forked, not started anew:
no second interpreter start. Run as `python -m di_code.cli.batch_child run ...` (Linux; on
other systems `run` runs as it is), or as `... batch_child exec PROGRAM ARGS...` for a task's
check: the same keeper around a program, so a check's daemon dies at its timeout and with the
driver too.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
from pathlib import Path

from di_code.system.children import set_death_signal

PR_SET_CHILD_SUBREAPER = 36
PASSED_ON = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def _prctl(option: int, value: int) -> None:
    ctypes.CDLL(None, use_errno=True).prctl(option, value)


def main() -> int:
    if not sys.platform.startswith("linux"):
        return _run()
    set_death_signal(signal.SIGTERM)
    expected = os.environ.pop("DI_CODE_BATCH_PARENT", "")
    if expected and os.getppid() != int(expected):  # the driver died before the line above
        return 128 + signal.SIGTERM
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    child = os.fork()
    if child == 0:
        set_death_signal(signal.SIGTERM)  # the keeper gone: `run` stops too
        return _run()
    for number in PASSED_ON:
        signal.signal(number, lambda number, _frame: _pass_on(child, number))
    _, status = os.waitpid(child, 0)
    _end_orphans()
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code


def _run() -> int:
    if sys.argv[1:2] == ["exec"]:
        os.execvp(sys.argv[2], sys.argv[2:])
    from di_code.cli.app import main as run_main

    run_main()
    return 0


def _pass_on(child: int, number: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(child, number)


def _end_orphans() -> None:
    """Kill and reap the processes handed to this keeper, until none is left (an orphan's own
    children come to the keeper in turn when it dies)."""
    me = str(os.getpid())
    while orphans := _children_of(me):
        for pid in orphans:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for pid in orphans:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)


def _children_of(parent: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if stat[stat.rfind(")") + 2 :].split()[1] == parent:
                found.append(int(entry.name))
    return found


if __name__ == "__main__":
    sys.exit(main())
