"""The bash sandbox on Linux: each command runs inside bubblewrap (`bwrap`).

The whole file system is mounted read-only, then the workspace roots are mounted again
writable (workspace-write) or left read-only (read-only); /tmp is a private tmpfs, /dev a
minimal one, /proc private. `--unshare-pid` gives the command its own pid namespace, whose
init is bubblewrap's: when the command's shell exits, or when di-code dies (even by SIGKILL:
`--die-with-parent` asks the kernel to kill bubblewrap with its parent), every process in it
is killed, background jobs and `setsid` escapes included. The network is a private, empty
namespace (`--unshare-net`) unless allowed. Protected paths stay read-only, secrets are shown
empty and, without network, the host's socket folders too (`sandbox_mounts.py`).

Whether bubblewrap works here (it is installed, and this kernel lets it make namespaces) is
probed once, with a command that does nothing, the first time someone asks.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Literal

from msgspec import Struct, field

from di_code.system.children import run_child
from di_code.system.errors import DiCodeError
from di_code.tools.process.placeholders import holding
from di_code.tools.process.program_env import KEY_VARIABLES, installed_program, program_env
from di_code.tools.process.sandbox_mounts import PRIVATE_TMP, SandboxPaths, mounts

SandboxMode = Literal["off", "workspace-write", "read-only"]
PROBE_TIMEOUT = 10.0


class Sandbox(Struct, frozen=True):
    """How bash commands are confined: a mode other than off, and whether they may connect."""

    mode: Literal["workspace-write", "read-only"] = "workspace-write"
    network: bool = False
    paths: SandboxPaths = field(default_factory=SandboxPaths)
    """What is hidden, and DI_CODE_HOME (protected)."""
    entered: tuple[str, ...] = ()
    """Without network: bubblewrap's command line start (`nsenter ... -- bwrap ...`) that
    puts the command in its session's network namespace (session_network.py); empty:
    bubblewrap alone, with a network namespace of its own."""

    def describe(self) -> str:
        """What the model must know to work inside it (told in the bash tool's description)."""
        tmp = "/tmp (private, emptied after each command)"
        if self.mode == "workspace-write":
            writable = (
                f"only the working folder(s) and {tmp} are writable, and in them not .git, "
                ".di-code, .mcp.json nor .claude; one of these that does not exist is an empty "
                "read-only stand-in (a device) while the command runs, so that it cannot be "
                "made: git status lists it as untracked; leave it alone"
            )
        else:
            writable = f"the file system is read-only except {tmp}"
        network = "" if self.network else "; there is no network access"
        return (
            f"Commands run in a sandbox: {writable}{network}; credential files (~/.ssh, "
            "~/.aws, ...) look empty; every process it started ends when the command ends, "
            "background ones included: start a server that must outlive the command with "
            "background: true (a job)."
        )

    @contextlib.contextmanager
    def launch(
        self, argv: Sequence[str], roots: Sequence[Path], readable: Sequence[Path] = ()
    ) -> Iterator[list[str]]:
        """`argv` as a bubblewrap command line, held while the command runs: the mount
        points bubblewrap leaves for missing protected paths are removed afterwards."""
        writable = roots if self.mode == "workspace-write" else ()
        with holding(writable):
            yield self.wrap(argv, roots, readable)

    def wrap(
        self,
        argv: Sequence[str],
        roots: Sequence[Path],
        readable: Sequence[Path] = (),
        own: Sequence[tuple[Path, Path]] = (),
    ) -> list[str]:
        """`argv` as a bubblewrap command line confined to `roots`; `readable` folders (the
        spill folder) stay visible read-only even below /tmp, when they exist; each `own`
        (host folder, where it appears) is the program's own, writable (a server's cache)."""
        args = list(self.entered) or bare_bubblewrap()
        if not self.network and not self.entered:
            args.append("--unshare-net")
        writable = self.mode == "workspace-write"
        args += mounts(roots, writable, self.paths, self.network, readable, own)
        return [*args, "--", *argv]


_BASE = (
    "--ro-bind", "/", "/",
    "--dev", "/dev",
    "--proc", "/proc",
    "--ro-bind", "/proc/sys", "/proc/sys",
    "--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger",
    "--tmpfs", PRIVATE_TMP,
    "--unshare-pid",
    "--die-with-parent",
    "--cap-drop", "ALL",
)  # fmt: skip
"""Against a command run by root (CI, a container): `--cap-drop ALL`, since bubblewrap keeps
every capability unless told, and CAP_SYS_ADMIN remounts any read-only bind writable on the
host's file system; the kernel's settings read-only, since root writes /proc/sys (where
`kernel.core_pattern` names a program the kernel runs as the host's root) and
/proc/sysrq-trigger by their files' modes alone, capabilities or not, and the new /proc
bubblewrap mounts left /proc/sys writable (bubblewrap 0.8, run by root)."""


def bare_bubblewrap() -> list[str]:
    """bubblewrap's command line with the options every sandbox has."""
    return [bubblewrap_path() or "bwrap", *_BASE]


def bubblewrap_path() -> str | None:
    return installed_program("bwrap")


@functools.cache
def bubblewrap_works() -> bool:
    """True when bubblewrap is installed and can build the sandbox on this machine."""
    if bubblewrap_path() is None:
        return False
    try:
        done = run_child(
            Sandbox().wrap(["/bin/sh", "-c", ":"], []),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=PROBE_TIMEOUT,
            check=False,
            env=program_env(KEY_VARIABLES),
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


async def probe_off_the_loop(requested: str | None, permission_mode: str, switchable: bool) -> None:
    """Run bubblewrap's probe (a child process, up to PROBE_TIMEOUT) on a thread whenever the
    sandbox choice will ask for it, so that it never runs on the event loop: with a sandbox
    requested, in auto mode, and where the mode may later switch into auto (a chat's
    Shift+Tab, an editor's mode menu). Its answer is cached for the process."""
    if requested == "off" or bubblewrap_path() is None:
        return
    if requested is not None or permission_mode == "auto" or switchable:
        await asyncio.to_thread(bubblewrap_works)


class SandboxUnavailable(DiCodeError):
    """A sandbox was asked for, but bubblewrap is missing or does not work here."""


class SandboxChoice(Struct, frozen=True):
    """The user's choice, read for each command against the permission mode of the moment.

    `requested` is an explicit mode (--sandbox, `[sandbox] mode`), which holds in every
    permission mode. Without one, bash is sandboxed (workspace-write, when bubblewrap works)
    exactly while the mode is auto: there nobody approves the commands, in the other modes
    the user approves each one. So Shift+Tab into auto confines bash, and back to ask frees it.
    """

    requested: SandboxMode | None = None
    network: bool = False
    paths: SandboxPaths = field(default_factory=SandboxPaths)

    def check(self) -> None:
        """Raise SandboxUnavailable when an explicit sandbox cannot be had here."""
        if self.requested not in (None, "off") and not bubblewrap_works():
            raise SandboxUnavailable(
                f"--sandbox {self.requested}: {_why_unavailable()}; "
                "pass --sandbox off to run bash unsandboxed"
            )

    def sandbox(self, permission_mode: str) -> Sandbox | None:
        """The sandbox a command started now runs in (None: unsandboxed)."""
        if self.requested == "off":
            return None
        if self.requested is not None:
            return Sandbox(self.requested, self.network, self.paths)
        if permission_mode == "auto" and bubblewrap_works():
            return Sandbox("workspace-write", self.network, self.paths)
        return None

    def note(self, permission_mode: str) -> str | None:
        """What to tell the user when bash runs unapproved (auto mode) and unsandboxed."""
        if permission_mode != "auto" or self.sandbox(permission_mode) is not None:
            return None
        if self.requested == "off":
            why = "the sandbox is off (--sandbox off or [sandbox] mode)"
        else:
            why = _why_unavailable()
        return f"auto mode runs bash unsandboxed: {why}"


def choose_sandbox(
    requested: SandboxMode | None,
    permission_mode: str,
    network: bool,
    paths: SandboxPaths | None = None,
) -> tuple[SandboxChoice, str | None]:
    """The sandbox choice for bash at start-up, and a note for the user when auto mode runs
    unsandboxed because bubblewrap does not work (who passed --sandbox off knows it). An
    explicit mode that cannot be had is an error (SandboxUnavailable)."""
    choice = SandboxChoice(requested, network, paths or SandboxPaths())
    choice.check()
    return choice, None if requested == "off" else choice.note(permission_mode)


def _why_unavailable() -> str:
    if not sys.platform.startswith("linux"):
        return "the sandbox needs Linux and bubblewrap"
    if bubblewrap_path() is None:
        return "bubblewrap is not installed (apt-get install bubblewrap, dnf install bubblewrap)"
    return (
        "bubblewrap cannot create namespaces here (user namespaces are disabled, or a "
        "container lacks the rights)"
    )
