"""One network namespace for all of a session's sandboxed commands without network.

Each sandboxed command runs in a bubblewrap of its own (its own mounts and pid namespace, made
when it starts), but a server a background job started must be reachable by the tests a later
command runs, on 127.0.0.1, and by nothing else. So the session has one private network
namespace, empty but for its loopback, and every such command enters it with `nsenter` before
bubblewrap starts (bubblewrap is then told to leave the network as it finds it).

The namespace is made once, by a bubblewrap with `--unshare-net` that lives only until
di-code has opened the namespace's file (and, where bubblewrap made a user namespace for it, an
unprivileged user's case, the user namespace that owns it: `NS_GET_USERNS`). Those two open
descriptors keep the namespace alive for as long as di-code runs, with no process of its own;
commands name them as `/proc/<di-code's pid>/fd/N`. Whether this works here (nsenter installed,
the kernel letting this user enter) is tried once with a command that does nothing; where it
does not, each command keeps a namespace of its own, as before, and the model is told.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import select
import subprocess
import threading

from di_code.system.children import open_child, run_child
from di_code.tools.process.program_env import KEY_VARIABLES, installed_program, program_env

NS_GET_USERNS = 0xB701
MAKE_TIMEOUT = 10.0


class SessionNetwork:
    """The session's network namespace, made at the first command that needs it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._prefix: list[str] | None = None
        self._tried = False

    @property
    def tried(self) -> bool:
        return self._tried

    @property
    def failed(self) -> bool:
        """Tried, and it cannot be had here: each command keeps a namespace of its own."""
        return self._tried and self._prefix is None

    def prefix(self, bubblewrap: list[str]) -> list[str] | None:
        """`bubblewrap` (the start of a sandbox's command line) run in the namespace: after
        `nsenter ... --`, and where a user namespace had to be entered, with a user namespace
        of its own that maps the user's ids back and drops every capability (entered with
        --preserve-credentials the user is root there, as bubblewrap made it). Made and tried
        on the first call; None where it cannot be had."""
        with self._lock:
            if not self._tried:
                self._tried = True
                self._prefix = _made(bubblewrap)
            return self._prefix


def _made(bubblewrap: list[str]) -> list[str] | None:
    nsenter = installed_program("nsenter")
    if nsenter is None:
        return None
    try:
        net, owner = _namespace(bubblewrap)
    except (OSError, ValueError, KeyError, subprocess.SubprocessError):
        return None
    me = os.getpid()
    prefix = [nsenter, f"--net=/proc/{me}/fd/{net}"]
    if owner is not None:
        prefix += [f"--user=/proc/{me}/fd/{owner}", "--preserve-credentials"]
    prefix += ["--", *bubblewrap]
    if owner is not None:
        prefix += ["--unshare-user", "--uid", str(os.getuid()), "--gid", str(os.getgid())]
    try:
        tried = run_child(
            [*prefix, "--", "/bin/sh", "-c", ":"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=MAKE_TIMEOUT,
            env=program_env(KEY_VARIABLES),
        )
    except (OSError, subprocess.SubprocessError):
        tried = None
    if tried is None or tried.returncode != 0:
        for fd in (net, owner):
            if fd is not None:
                os.close(fd)
        return None
    return prefix


def _namespace(bubblewrap: list[str]) -> tuple[int, int | None]:
    """Descriptors of a new network namespace and, when it is not ours, of the user namespace
    that owns it; the bubblewrap that made it has ended."""
    info_read, info_write = os.pipe()
    try:
        holder = open_child(
            [*bubblewrap, "--unshare-net", "--info-fd", str(info_write), "--",
             "/bin/sh", "-c", "read _"],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(info_write,), env=program_env(KEY_VARIABLES),
        )  # fmt: skip
    finally:
        os.close(info_write)
    try:
        child = int(str(_info(info_read)["child-pid"]))
        net = os.open(f"/proc/{child}/ns/net", os.O_RDONLY | os.O_CLOEXEC)
    finally:
        os.close(info_read)
        assert holder.stdin is not None
        holder.stdin.close()  # its `read` ends: the holder's work is done
        with contextlib.suppress(subprocess.TimeoutExpired):
            holder.wait(MAKE_TIMEOUT)
        if holder.returncode is None:
            holder.kill()
            holder.wait()
    owner = fcntl.ioctl(net, NS_GET_USERNS)
    if os.fstat(owner).st_ino == os.stat("/proc/self/ns/user").st_ino:
        os.close(owner)
        return net, None
    return net, owner


def _info(fd: int) -> dict[str, object]:
    """The JSON object bubblewrap writes on its info descriptor (within MAKE_TIMEOUT)."""
    data = b""
    while True:
        ready, _, _ = select.select([fd], [], [], MAKE_TIMEOUT)
        chunk = os.read(fd, 4096) if ready else b""
        if not chunk:
            raise ValueError("bubblewrap said nothing")
        data += chunk
        with contextlib.suppress(ValueError):
            info: dict[str, object] = json.loads(data)
            return info
