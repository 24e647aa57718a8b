"""How a language server is started: through the launcher (di_code.tools.process.launcher),
which runs it in the sandbox where bubblewrap works and through di_code.system.children, in a
process group of its own with PR_SET_PDEATHSIG, so it dies with di-code however di-code ends;
with the environment bash's commands get (no provider keys)."""

from __future__ import annotations

import asyncio
import errno
import os
import shutil
import signal
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from msgspec import Struct, field

from di_code.system.children import signal_group
from di_code.tools.lsp.servers import ServerSpec, pinned_settings
from di_code.tools.process import launcher
from di_code.tools.process.program_env import KEY_VARIABLES, path_outside, program_env
from di_code.tools.process.sandbox_mounts import SandboxPaths

UNTRUSTED_PROGRAM = "not found outside this untrusted project's folders"


def default_cache() -> Path:
    return Path.home() / ".cache" / "di-code-lsp"


class ServerStarter(Struct, frozen=True):
    """What every server of a session starts with."""

    hidden: Collection[str] = KEY_VARIABLES
    """Variables kept from the servers' environment (the provider keys: program_env)."""
    paths: SandboxPaths = field(default_factory=SandboxPaths)
    """What the sandbox hides besides the home folder (DI_CODE_HOME, `[sandbox] hide`)."""
    cache: Path = field(default_factory=default_cache)
    """Where each server's own cache folder is (`cache_of`), its `~/.cache` in the sandbox."""

    trusted: bool = False
    """Whether the user trusts the project (di-code trust): an untrusted one's servers get
    the settings that keep them from running its programs, or wait (servers.UNTRUSTED)."""

    def cache_of(self, name: str) -> Path:
        """A server's own cache folder: one for trusted projects, another for untrusted ones,
        so that nothing an untrusted project's server writes is read by a trusted one's."""
        return self.cache / (name if self.trusted else f"{name}.untrusted")

    def settings(self, spec: ServerSpec) -> Mapping[str, Any]:
        """What the server is told in workspace/configuration, by section."""
        return {} if self.trusted else pinned_settings(spec)

    async def start(
        self, name: str, argv: tuple[str, ...], root: Path, workspace: Path
    ) -> asyncio.subprocess.Process:
        """The server's process, working in `root`, its stdin and stdout piped, stderr
        discarded (nobody reads it, and a full pipe would stall the server); OSError when it
        cannot start. In an untrusted project, programs are looked for on a PATH without the
        workspace's folders (an activated `.venv/bin`, `node_modules/.bin`, a relative entry):
        the server, and the interpreter its `#!` line names, are never the project's."""
        env = program_env(self.hidden)
        if not self.trusted:
            env["PATH"] = path_outside(env.get("PATH", os.defpath), [workspace])
            if shutil.which(argv[0], path=env["PATH"]) is None:
                raise FileNotFoundError(errno.ENOENT, UNTRUSTED_PROGRAM)
        return await launcher.start_server(
            argv,
            [workspace],
            self.cache_of(name),
            self.paths,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            cwd=root,
            env=env,
        )


def kill_group(pid: int) -> None:
    """SIGKILL the server's whole group (what it started too); gone already is fine."""
    signal_group(pid, signal.SIGKILL)
