"""The one launcher for programs that read the workspace: bash's commands, language servers,
hooks and MCP stdio servers. What each kind runs in is decided here, in one place:

- bash's commands: the sandbox of the moment (`BashPolicy.sandbox`: the user's choice and the
  permission mode), built by `confined`;
- language servers: always in the sandbox where bubblewrap works (`server_sandbox`): the
  workspace read-only, the home folder hidden but for the server's own cache and the folder
  its program is installed in, no network. A server reads the repository and may run what it
  names (an interpreter in `.venv`, `build.rs`, a `node_modules/typescript`);
- hooks and MCP stdio servers: unsandboxed. They are commands the user wrote, or a project's
  that the user trusted (di_code.config.trust), and they are meant to act on the machine;
- a batch task's check: unsandboxed, the user's own command judging the task's work, as CI
  would (di_code.batch.check).

Every such child goes through here, and from here through di_code.system.children
(di_code.system.children), so each dies with di-code; tests/test_guarded_children.py fails when one
is started around it. git is di_code.session.git_run's (a lower layer; it passes git the
configuration that runs none of a repository's programs).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from di_code.system.children import dying_argv, open_child, start_child
from di_code.system.files.opener import open_path
from di_code.tools.process.sandbox import Sandbox, bubblewrap_works
from di_code.tools.process.sandbox_mounts import PRIVATE_TMP, SandboxPaths


@contextlib.contextmanager
def confined(
    argv: Sequence[str],
    roots: Sequence[Path],
    sandbox: Sandbox | None,
    readable: Sequence[Path] = (),
) -> Iterator[list[str]]:
    """The command line `argv` starts with, held while it runs: inside `sandbox` (confined to
    `roots`, the `readable` folders visible), or as it is when there is none."""
    if sandbox is None:
        yield list(argv)
        return
    with sandbox.launch(argv, roots, readable) as wrapped:
        yield wrapped


async def start_program(argv: Sequence[str], **options: Any) -> asyncio.subprocess.Process:
    """A command line `confined` made (or a hook's), started through di_code.system.children."""
    return await start_child(*argv, **options)


def open_user_command(argv: Sequence[str], **options: Any) -> subprocess.Popen[bytes]:
    """A command the user wrote, waited on by its caller (a batch task's check): unsandboxed,
    started through di_code.system.children."""
    return open_child(argv, **options)


def trusted_command_argv(argv: Sequence[str]) -> list[str]:
    """An MCP stdio server's command line (the SDK starts it): unsandboxed, as the user or a
    trusted project wrote it, made to die with di-code."""
    return dying_argv(argv)


def server_sandbox(paths: SandboxPaths) -> Sandbox | None:
    """The sandbox every language server runs in, None where bubblewrap does not work."""
    if not bubblewrap_works():
        return None
    home = Path.home()
    return Sandbox("read-only", network=False, paths=SandboxPaths(
        paths.di_code_home, (*paths.hide, home), paths.reveal
    ))  # fmt: skip


async def start_server(
    argv: Sequence[str],
    roots: Sequence[Path],
    cache: Path,
    paths: SandboxPaths,
    env: dict[str, str],
    **options: Any,
) -> asyncio.subprocess.Process:
    """A language server, in `server_sandbox` where bubblewrap works: `cache` (a folder of
    di-code's) is its home's `.cache`, writable; its program's install folder stays visible;
    `TMPDIR` is the sandbox's private /tmp. The command line is made on a thread: it probes
    bubblewrap (once) and looks at the file system."""
    wrapped = await asyncio.to_thread(_server_argv, argv, roots, cache, paths, env)
    if wrapped is None:
        return await start_child(*argv, env=env, **options)
    return await start_child(*wrapped, env={**env, "TMPDIR": PRIVATE_TMP}, **options)


def _server_argv(
    argv: Sequence[str],
    roots: Sequence[Path],
    cache: Path,
    paths: SandboxPaths,
    env: dict[str, str],
) -> list[str] | None:
    """The server's command line in its sandbox; None where bubblewrap does not work."""
    sandbox = server_sandbox(paths)
    if sandbox is None:
        return None
    cache.mkdir(parents=True, exist_ok=True)
    own = ((cache, Path.home() / ".cache"),)
    installed = _installed(argv[0], env.get("PATH", os.defpath)) + _named(argv[1:])
    return sandbox.wrap(argv, roots, installed, own)


def _installed(program: str, path: str) -> list[Path]:
    """The folders below a hidden folder (home, /tmp) that a program and the interpreter of its
    `#!` line are installed in (`~/.local` for `~/.local/bin/x`, `~/.pyenv/versions/3.12` for a
    script run by its python, a venv in /tmp by its link and by what it links to), to keep them
    visible below the hidden folder."""
    found: list[Path] = []
    for _ in range(MAX_INTERPRETERS):
        located = shutil.which(program, path=path)
        if located is None:
            break
        real = Path(os.path.realpath(located))
        found += _kept(Path(os.path.abspath(located)), real)
        program = _interpreter(real) or ""
        if not program:
            break
    return found


def _named(args: Sequence[str]) -> list[Path]:
    """The install folders of the files a server's arguments name below a hidden folder (the
    script `python /tmp/x/server.py` runs)."""
    return _kept(*(Path(arg) for arg in args if os.path.isabs(arg) and os.path.isfile(arg)))


def _kept(*paths: Path) -> list[Path]:
    """The install folder of each path that lies below a folder the sandbox hides."""
    hidden = (Path.home(), Path(PRIVATE_TMP))
    return [_install_folder(path, base) for path in paths for base in hidden
            if path.is_relative_to(base)]  # fmt: skip


def _install_folder(program: Path, hidden: Path) -> Path:
    """The folder below `hidden` a program is installed in: its folder's parent (`~/.local`
    for `~/.local/bin/x`), its folder when that parent is the hidden folder itself (`~/bin` for
    `~/bin/x`), the program alone when it lies right in the hidden folder: never the hidden
    folder, nor anything above it."""
    for folder in (program.parent.parent, program.parent):
        if folder != hidden and folder.is_relative_to(hidden):
            return folder
    return program


MAX_INTERPRETERS = 3
"""A program, its interpreter, and that one's (a `#!/usr/bin/env node`)."""


def _interpreter(script: Path) -> str | None:
    """The program a script's `#!` line runs (through `env`, the program env looks up)."""
    try:
        with open_path(script) as file:
            first = file.readline(MAX_SHEBANG)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode("utf-8", "replace").split()
    if words and Path(words[0]).name == "env":
        words = [w for w in words[1:] if not w.startswith("-")]
    return words[0] if words else None


MAX_SHEBANG = 256
