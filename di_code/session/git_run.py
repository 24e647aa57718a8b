"""The one way di-code runs git: configured so that git runs no program a repository names.

No other module starts git (tests/test_guarded_git.py reads the code to hold that).

A repository's `.git/config` (a cloned archive, an embedded bare repository, or one the model
or a sandboxed command wrote) can name programs that git runs on its own: clean/smudge filters,
fsmonitor, hooks, textconv, an external diff, a pager, credential helpers, ssh commands and
lazy fetches of missing objects. Command-line `-c` settings win over every config file, so each
of those is switched off here; filters cannot be blanked by name, so di-code's git never asks
for them (callers hash with `hash-object --no-filters` and read blobs with `cat-file`). The
environment is rebuilt without the `GIT_*` variables that redirect git (`GIT_DIR`,
`GIT_WORK_TREE`, `GIT_CONFIG_*`, `GIT_EXTERNAL_DIFF`, ...); only the private index a caller
names is passed on. No caller can put an option of its own before the subcommand (it would beat
these settings).

Git is a child like any other (di_code.system.children): in a process group of its own, killed
by the kernel when di-code dies, and ended with the other children when di-code stops. It is
never waited on blindly: a git that blocks opening a FIFO (a `.gitignore` made with `mkfifo`
blocks `ls-files --exclude-standard` for ever) is killed with its group within POLL seconds,
and the caller gets Blocked. Names go to git NUL-separated only (`-z`), never a line each.

A clone (`clone`) reaches only the transports README names, checked here and by git's own
`protocol.<name>.allow` settings, so `ext::` (which runs a command) and `fd::` never run.
"""

from __future__ import annotations

import itertools
import os
import re
import stat
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import BinaryIO, NamedTuple

from di_code.system.children import group_members, kill_tree, open_child
from di_code.system.errors import DiCodeError
from di_code.system.fifo_waits import opening_a_fifo

_NO_PROGRAMS = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.attributesFile=/dev/null",
    "core.pager=cat",
    "core.untrackedCache=false",
    "diff.external=",
    "safe.bareRepository=explicit",
    "submodule.recurse=false",
    "gc.auto=0",
    "maintenance.auto=false",
)
TRANSPORTS = ("https", "ssh", "git", "file")
"""What a clone may reach (README, Batch runs); git refuses the rest (`ext::`, `fd::`, ...)."""


def _options(*settings: str) -> tuple[str, ...]:
    return tuple(part for setting in settings for part in ("-c", setting))


SAFE_CONFIG = _options(
    *_NO_PROGRAMS,
    "core.sshCommand=false",
    "core.askPass=",
    "credential.helper=",
    "protocol.allow=never",
)
"""Command-line settings beat the repository's config: none of these names a program."""
CLONE_CONFIG = _options(
    *_NO_PROGRAMS, "protocol.allow=never", *(f"protocol.{name}.allow=always" for name in TRANSPORTS)
)
"""A clone makes a new repository, which names nothing yet: the user's own ssh command and
credential helpers (their ~/.gitconfig) may fetch it, over TRANSPORTS only."""

REF_PREFIX = "refs/di-code/"
"""Where di-code's own refs live (`snapshot_refs`: the snapshots' trees)."""
TIMEOUT_SECONDS = 300
POLL = 0.1
"""Seconds between two looks at a running git (is it blocked on a FIFO? did its caller stop
it?)."""
_USER_SSH = ("GIT_SSH_COMMAND", "GIT_SSH", "GIT_SSH_VARIANT")
"""The user's own ssh settings (a repository cannot set them): kept for a clone only."""
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")
_HELPER = re.compile(r"([A-Za-z0-9][A-Za-z0-9+.-]*)::")
_SCP = re.compile(r"[^\s@/:-][^\s@/:]*@(\[[^\s\]/]+\]|[^\s@/:\[-][^\s@/:]*):\S")
_ALIASES = {"git+ssh": "ssh", "ssh+git": "ssh"}
ALLOWED = "https://, ssh://, git://, file:// or user@host:path"


class GitError(DiCodeError):
    """A git command failed; the message is one line."""

    said: bytes = b""
    """All git wrote to stderr (the message keeps one line of it)."""


class Blocked(GitError):
    """A git command waited on something that may never come (a FIFO): it was killed."""


class GitStopped(GitError):
    """A git command its caller stopped (a batch's Ctrl-C or task timeout) was ended."""


def git_env(
    index_file: str | None = None,
    *,
    author: tuple[str, str] | None = None,
    keep: tuple[str, ...] = (),
) -> dict[str, str]:
    """The environment without any `GIT_*` variable (they redirect or reconfigure git) but
    those named in `keep`, with the system config, the terminal prompt and optional locks off,
    `index_file` as the index and `author` (name, email) as author and committer if given."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k in keep}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_TERMINAL_PROMPT="0", GIT_PAGER="cat", PAGER="cat")
    env["GIT_NO_LAZY_FETCH"] = "1"  # git >= 2.44: a partial clone never fetches on its own
    env["GIT_OPTIONAL_LOCKS"] = "0"  # `status` never writes the user's index: a stop would
    # leave its `.git/index.lock`, which makes every git command of the user fail
    if index_file is not None:
        env["GIT_INDEX_FILE"] = index_file
    if author is not None:
        for role in ("AUTHOR", "COMMITTER"):
            env[f"GIT_{role}_NAME"], env[f"GIT_{role}_EMAIL"] = author
    return env


def run_git(
    cwd: Path,
    args: Sequence[str],
    *,
    index_file: str | None = None,
    stdin: bytes | BinaryIO = b"",
    author: tuple[str, str] | None = None,
    timeout: float = TIMEOUT_SECONDS,
    stopped: Callable[[], bool] | None = None,
) -> bytes:
    """Run `git <args>` in `cwd` safely and return its output; raises GitError (one line),
    GitStopped once `stopped()` says so (git and all it started are ended at once)."""
    config = SAFE_CONFIG + _options(CASE_SENSITIVE) if _tells_case_apart(cwd) else SAFE_CONFIG
    config += PRIVATE_INDEX if index_file is not None else ()
    config += PACK_WRITER if args and args[0] == "fast-import" else ()
    env = git_env(index_file, author=author)
    if args and args[0] in CONTENT_READERS and not _timeless(args[0], index_file):
        config += _filters_off(cwd, config, env, stopped)
    return _run(cwd, config, args, env, stdin, stopped=stopped, timeout=timeout)


PACK_WRITER = _options(
    "fastimport.unpackLimit=100",
    "transfer.unpackLimit=100",
    "pack.indexVersion=2",
    "pack.depth=50",
)
"""git's defaults for what only a pack writer (the snapshots' `fast-import`) parses: a value git
cannot parse there (`git config fastimport.unpackLimit many`) leaves the user's git working but
failed every snapshot that wrote a blob (undo took back nothing a tool changed after it)."""

PRIVATE_INDEX = _options(
    "core.checkStat=default",
    "core.trustctime=true",
    "core.fileMode=true",
    "core.symlinks=true",
    "core.splitIndex=false",
    "core.sparseCheckout=false",
    "index.sparse=false",
)
"""A private index (GIT_INDEX_FILE) is di-code's record of the files' stat data: git compares
all of it (times, inode, mode, size), every entry whole, whatever the repository's config says;
a change that kept its size is then never taken for no change."""

CONTENT_READERS = frozenset({"status", "diff", "diff-files", "diff-index"})
"""Commands that may read a work-tree file's content to compare it (a file whose stat changed
but not its size), through the clean filter `.gitattributes` names."""


TIMELESS = frozenset({"diff-files"})
"""Content readers that read no file when the index they compare with is of time 0: git reads
a file to compare it only for a "racily clean" entry (stat data that matches, an mtime as late
as the index file's), and with the index's mtime 0 it takes none for one. di-code writes its
private index so (`stat_cache`); its own rules keep an entry's stat data from matching a file
changed since (`index_file`), which git's racy check is for."""


def _timeless(command: str, index_file: str | None) -> bool:
    """Whether `command` compares the work tree with a private index of time 0, a regular file
    (so it reads no file, and runs no filter: no driver needs emptying)."""
    if command not in TIMELESS or index_file is None:
        return False
    try:
        info = os.lstat(index_file)
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and 0 <= info.st_mtime_ns < 1_000_000_000


def _filters_off(
    cwd: Path, config: tuple[str, ...], env: dict[str, str], stopped: Callable[[], bool] | None
) -> tuple[str, ...]:
    """Settings that empty every filter driver the repository's config defines (a filter's
    program runs with git's rights: a model can plant one in `.git/config` and
    `.gitattributes`). GitError when a driver's name cannot be overridden on the command line."""
    listed = ["config", "--null", "--name-only", "--get-regexp", r"^filter\."]
    try:
        names = _run(cwd, config, listed, env, b"", stopped=stopped).split(b"\0")
    except GitStopped:
        raise
    except GitError:
        return ()  # no filter set: `git config` exits 1
    drivers = {name[len(b"filter.") : name.rfind(b".")] for name in names if name}
    if any(b"=" in driver or b"\n" in driver for driver in drivers):
        raise GitError("the repository names a filter that cannot be turned off")
    return _options(
        *(
            f"filter.{os.fsdecode(driver)}.{key}="
            for driver in sorted(drivers)
            for key in ("clean", "smudge", "process")
        )
    )


CASE_SENSITIVE = "core.ignoreCase=false"
"""A repository made on a Mac (or copied from one) says `core.ignoreCase = true`; on a file
system that tells `Data.csv` from `data.csv`, git then hides an untracked file behind a tracked
one of another case, and undo took it for one a tool made when it came into view."""


def _tells_case_apart(top: Path) -> bool:
    """Whether the file system of work tree `top` tells names apart by case: its `.GIT` is not
    its `.git` (asked only at a work tree's top; elsewhere git's own setting stands)."""
    try:
        real = os.lstat(top / ".git")
    except OSError:
        return False
    try:
        other = os.lstat(top / ".GIT")
    except OSError:
        return True
    return (other.st_dev, other.st_ino) != (real.st_dev, real.st_ino)


def clone(
    source: str, where: Path, *, shared: bool = False, stopped: Callable[[], bool] | None = None
) -> None:
    """Clone `source` (a URL of TRANSPORTS, or a local repository's absolute path) into the new
    folder `where`, checking nothing out and copying no template (hooks); `shared` borrows a
    local repository's objects instead of copying them (nothing is written there). A server
    may never answer: once `stopped()` says so, git and all it started are ended (GitStopped)."""
    if not source.startswith("/") and remote_transport(source) is None:
        raise GitError(f"{source!r} is neither an absolute path nor a git URL")
    options = ["--no-checkout", "--quiet", "--template=", *(["--shared"] if shared else [])]
    env = git_env(keep=_USER_SSH)
    command = ["clone", *options, "--", source, str(where)]
    _run(where.parent, CLONE_CONFIG, command, env, b"", stopped=stopped)


def remote_transport(repo: str) -> str | None:
    """The transport a clone of `repo` takes (one of TRANSPORTS), or None for a local path;
    GitError (one line, naming the repo) for any other: a `NAME::` remote helper (`ext::` runs
    a command, `fd::`), another URL scheme, or an scp-like address git could take as options."""
    shown = repr(repo if len(repo) <= 100 else repo[:100] + "…")
    helper, scheme = _HELPER.match(repo), _SCHEME.match(repo)
    name = helper.group(1) if helper else scheme.group(1).lower() if scheme else None
    if name is not None:
        transport = None if helper else _ALIASES.get(name, name)
        if transport not in TRANSPORTS:
            raise GitError(f"repo {shown}: transport {name!r} is not allowed (only {ALLOWED})")
        return transport
    before_colon = repo.partition(":")[0]
    if ":" in repo and "/" not in before_colon and "@" in before_colon:
        if _SCP.match(repo) is None:
            raise GitError(f"repo {shown} is not a git URL di-code clones (only {ALLOWED})")
        return "ssh"
    return None


def _run(
    cwd: Path,
    config: tuple[str, ...],
    args: Sequence[str],
    env: dict[str, str],
    stdin: bytes | BinaryIO,
    *,
    stopped: Callable[[], bool] | None = None,
    timeout: float = TIMEOUT_SECONDS,
) -> bytes:
    if not args or args[0].startswith("-"):
        raise ValueError("a git subcommand comes first: an option before it beats this runner's")
    if stopped is not None and stopped():
        raise GitStopped(f"git {args[0]} was stopped")
    if isinstance(stdin, bytes) and stdin:
        with tempfile.TemporaryFile(prefix="di-code-git-") as fed:
            fed.write(stdin)
            fed.seek(0)
            return _run(cwd, config, args, env, fed, stopped=stopped, timeout=timeout)
    try:
        process = open_child(
            ["git", "--no-pager", *config, *args],
            cwd=cwd,
            env=env,
            # a file, not a pipe: nothing is left to write while git is watched
            stdin=subprocess.DEVNULL if isinstance(stdin, bytes) else stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    except OSError as exc:
        raise GitError(f"git {args[0]} failed: {exc}") from None
    out, err = _wait(process, args[0], stopped, timeout)
    if process.returncode != 0:
        lines = err.decode(errors="replace").strip().splitlines() or ["no reason given"]
        fatal = [line for line in lines if line.startswith("fatal: ")]  # not a hint after it
        error = GitError(f"git {args[0]} failed: {(fatal or lines)[-1]}")
        error.said = err
        raise error
    return out


def _wait(
    process: subprocess.Popen[bytes],
    name: str,
    stopped: Callable[[], bool] | None,
    timeout: float,
) -> tuple[bytes, bytes]:
    """git's output, looked in on every POLL seconds: a git its caller stopped (GitStopped),
    blocked opening a FIFO or past `timeout` seconds (Blocked) is killed at once with all it
    started, its group and what left the group (an ssh command's `setsid` child)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return process.communicate(timeout=POLL)
        except subprocess.TimeoutExpired:
            pass
        if stopped is not None and stopped():
            error: GitError = GitStopped(f"git {name} was stopped")
        elif any(map(opening_a_fifo, group_members(process.pid))):  # git or what it started
            error = Blocked(f"git {name} was blocked opening a FIFO")
        elif time.monotonic() > deadline:
            error = Blocked(f"git {name} did not end within {timeout:g} s")
        else:
            continue
        kill_tree(process)
        process.communicate()
        raise error


class Top(NamedTuple):
    """Where a work tree is, and the refs asked for with it."""

    path: Path
    refs: dict[str, str] | None = None
    """The refs under the prefix asked for (name -> the object it points at); None when none
    was asked for, or git's answer did not pair each name with its object."""


def work_tree_top(folder: Path) -> Path | None:
    """The top of the git work tree `folder` is in, or None (no git, not a work tree, a work
    tree that does not hold `folder`, or only a bare repository: one inside a project is never
    taken as the repository)."""
    found = top_and_refs(folder)
    return found.path if found is not None else None


def top_and_refs(folder: Path, prefix: str = "") -> Top | None:
    """`work_tree_top`, with the refs under `prefix` (one snapshot home's) listed by the same
    git process: a prompt's checkpoint needs both, and in a small repository each git process
    costs more than git's work (docs/benchmarks.md, issue 47 item 3)."""
    try:
        return found_top_and_refs(folder, prefix)
    except GitError:
        return None


def found_top(folder: Path, timeout: float = TIMEOUT_SECONDS) -> Path | None:
    """`work_tree_top`, with git's failure raised (its reason: not a repository, one of
    another owner, ...) for a caller that says why."""
    found = found_top_and_refs(folder, "", timeout)
    return found.path if found is not None else None


def found_top_and_refs(
    folder: Path, prefix: str = "", timeout: float = TIMEOUT_SECONDS
) -> Top | None:
    """`found_top`, with the refs under `prefix` if given: `rev-parse` prints their objects,
    then their names (in the same order), then the top, whose name may hold any byte but
    never starts as an object's or a ref's name does (it is absolute)."""
    globbed = [f"--glob={prefix}", "--symbolic-full-name", f"--glob={prefix}"] if prefix else []
    out = run_git(folder, ["rev-parse", *globbed, "--show-toplevel"], timeout=timeout)
    lines = out.decode(errors="surrogateescape").split("\n")
    count = next(n for n, line in enumerate(lines) if not _OBJECT.fullmatch(line))
    names = list(itertools.takewhile(lambda line: line.startswith("refs/"), lines[count:]))
    top_text = "\n".join(lines[count + len(names) :]).removesuffix("\n")  # may end in " "
    if not top_text or not folder.resolve().is_relative_to(top_text):
        return None  # a `core.worktree` elsewhere: never snapshot or restore another folder
    pairs = list(zip(names, lines[:count], strict=False))
    paired = len(names) == count and all(name.endswith(f"/{obj}") for name, obj in pairs)
    return Top(Path(top_text), dict(pairs) if prefix and paired else None)


_OBJECT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
