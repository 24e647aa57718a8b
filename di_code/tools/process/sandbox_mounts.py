"""What a sandboxed command sees: the bubblewrap mounts layered over the read-only system.

- Workspace folders are bound writable (workspace-write) or read-only.
- Protected paths (`protected.py`) inside a writable folder are bound read-only again. One
  that does not exist is covered by `/dev/null`, as Codex does, so that it cannot be made;
  bubblewrap then leaves an empty read-only file as the mount point, which `placeholders.py`
  removes when the last command using it ends.
- Secrets are shown empty: an empty tmpfs over a folder, `/dev/null` over a file, for
  `DI_CODE_HOME`, the usual credential files under `~` (SECRETS) and `[sandbox] hide`;
  `[sandbox] reveal` lets one through (a revealed path below a hidden folder is bound back
  read-only).
- Without network, `/run` and `/var/run` (where services keep their sockets: Docker, D-Bus,
  ssh and gpg agents) are empty tmpfs too, like `/tmp`, and every other socket the host's
  `/proc/net/unix` names (listening or datagram) outside the workspace is covered by
  `/dev/null`; the private network namespace already separates abstract sockets.

Mounts are applied shallowest path first, so a deeper mount always wins over the one it lies
in (a secret inside the workspace stays hidden; the workspace stays visible below a hidden
folder).
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Sequence
from pathlib import Path

from msgspec import Struct

from di_code.tools.process.placeholders import placeholder_paths
from di_code.tools.process.protected import protected_entries

SECRETS = (
    ".ssh",
    ".aws",
    ".gnupg",
    ".azure",
    ".kube",
    ".password-store",
    ".config/gcloud",
    ".config/gh",
    ".config/hub",
    ".config/op",
    ".local/share/keyrings",
    ".docker/config.json",
    ".netrc",
    ".git-credentials",
    ".config/git/credentials",
    ".npmrc",
    ".pypirc",
    ".gem/credentials",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".vault-token",
    ".pgpass",
    ".terraform.d/credentials.tfrc.json",
    ".codex/auth.json",
    ".claude/.credentials.json",
)
"""Credential folders and files, relative to the home folder, hidden by default."""
SOCKET_FOLDERS = ("/run", "/var/run")
"""Where local services keep their Unix sockets; emptied when there is no network."""
NULL = "/dev/null"
SKILLS = "skills"
PRIVATE_TMP = "/tmp"


class SandboxPaths(Struct, frozen=True):
    """The paths that are not as they are on the host: `DI_CODE_HOME` (protected and
    hidden), and the user's `[sandbox] hide` and `reveal` lists (absolute paths)."""

    di_code_home: Path | None = None
    hide: tuple[Path, ...] = ()
    reveal: tuple[Path, ...] = ()

    def hidden(self) -> list[Path]:
        """The existing real paths to show empty, but what a reveal lets through."""
        home = Path.home()
        wanted = [*(home / name for name in SECRETS), *self.hide]
        if self.di_code_home is not None:
            wanted.append(self.di_code_home)
        revealed = [_real(path) for path in self.reveal]
        found = []
        for path in dict.fromkeys(map(_real, wanted)):
            if os.path.lexists(path) and not any(path.is_relative_to(r) for r in revealed):
                found.append(path)
        return found

    def revealed(self, hidden: Sequence[Path]) -> list[Path]:
        """Revealed paths that lie inside a hidden folder, to bind back; DI_CODE_HOME's
        skills (instructions and scripts the model is told to use) among them."""
        shown = [*self.reveal]
        if self.di_code_home is not None:
            shown.append(self.di_code_home / SKILLS)
        inside = [_real(path) for path in shown]
        return [p for p in inside if os.path.exists(p) and any(p.is_relative_to(h) for h in hidden)]


Layer = tuple[Path, list[str]]
"""Where a mount lands, and its bubblewrap options."""


def mounts(
    roots: Sequence[Path],
    writable: bool,
    paths: SandboxPaths,
    network: bool,
    readable: Sequence[Path] = (),
    own: Sequence[tuple[Path, Path]] = (),
) -> list[str]:
    """The mount options for these workspace folders, in the order bubblewrap needs; `own`
    (host folder, target) are bound writable over whatever hides their target."""
    bind = "--bind" if writable else "--ro-bind"
    layers: list[Layer] = [(root, [bind, str(root), str(root)]) for root in roots]
    if writable:
        layers += _protected(roots, paths.di_code_home)
    hidden = paths.hidden()
    for path in hidden:
        # A device bind (not --ro-bind, which forbids devices): the file reads as empty.
        hide = ["--tmpfs", str(path)] if path.is_dir() else ["--dev-bind", NULL, str(path)]
        layers.append((path, hide))
    if not network:
        layers += _sockets([*roots, *hidden])
    layers += [(path, ["--ro-bind", str(path), str(path)]) for path in paths.revealed(hidden)]
    # Last: what lies below /tmp or a hidden folder (the spill folder) is still visible.
    layers += [(folder, ["--ro-bind-try", str(folder), str(folder)]) for folder in readable]
    layers += [(target, ["--bind", str(source), str(target)]) for source, target in own]
    layers.sort(key=lambda layer: len(layer[0].parts))  # stable: same depth keeps this order
    return [arg for _, args in layers for arg in args]


def _protected(roots: Sequence[Path], di_code_home: Path | None) -> list[Layer]:
    """Protected paths in the writable roots bound read-only; a missing one at the top of a
    root covered by /dev/null (a missing DI_CODE_HOME is di-code's to make)."""
    coverable = {path for root in roots for path in placeholder_paths(root)}
    layers: list[Layer] = []
    entries = protected_entries(roots, di_code_home)
    for real in dict.fromkeys(_real(path) for path, _ in entries):
        if not any(real.is_relative_to(root) for root in roots):
            continue  # read-only already
        if os.path.lexists(real):
            layers.append((real, ["--ro-bind", str(real), str(real)]))
        elif real in coverable:
            layers.append((real, ["--ro-bind", NULL, str(real)]))
    return layers


def _sockets(visible: Sequence[Path]) -> list[Layer]:
    """Empty socket folders, and /dev/null over every other bound socket of the host but
    those in `visible` folders (the workspace; hidden ones are empty already)."""
    emptied = [_real(Path(name)) for name in SOCKET_FOLDERS]
    layers: list[Layer] = [
        (folder, ["--tmpfs", str(folder)]) for folder in dict.fromkeys(emptied) if folder.is_dir()
    ]
    skip = [*visible, *emptied, Path(PRIVATE_TMP)]
    for path in host_sockets():
        if not any(path.is_relative_to(folder) for folder in skip):
            layers.append((path, ["--ro-bind", NULL, str(path)]))
    return layers


def host_sockets(table: str = "/proc/net/unix") -> list[Path]:
    """The real paths of the Unix sockets bound in this network namespace: listening ones,
    and datagram ones, which never listen yet take what is sent to their path."""
    try:
        with open(table, encoding="utf-8", errors="surrogateescape", newline="") as file:
            lines = file.read().split("\n")[1:]
    except OSError:
        return []
    found: dict[str, Path | None] = {}  # by name: a server's is listed once per client
    for at, line in enumerate(lines):
        record = _RECORD.match(line)
        if record is None or not line.startswith("/", record.end()):
            continue
        name, at = line[record.end() :], at + 1
        while at < len(lines) and lines[at] and not _RECORD.match(lines[at]):
            name, at = f"{name}\n{lines[at]}", at + 1  # a name's newline: it goes on
        if name not in found:
            found[name] = _socket_named(name, lines[at : at + MAX_LOOKALIKES])
    return list(dict.fromkeys(path for path in found.values() if path is not None))


_RECORD = re.compile(
    r"[0-9a-f]+: [0-9A-F]{8} [0-9A-F]{8} [0-9A-F]{8} [0-9A-F]{4} [0-9A-F]{2} +\d+(?: |$)"
)
"""The start of a socket's line in /proc/net/unix (Num RefCount Protocol Flags Type St
Inode), and the space before its path if it has one."""
SUN_PATH = 108
"""The longest socket path, in bytes."""
MAX_LOOKALIKES = 2
"""A name longer than SUN_PATH cannot span more lines that look like records (about 70
characters each)."""


def _socket_named(name: str, following: Sequence[str]) -> Path | None:
    """The real path of the socket a record of the table names. The kernel prints a name raw,
    so one holding a newline runs onto the following lines, and those may look like records
    themselves: when the name alone is no socket, it is tried joined with them, one by one, as
    long as a socket's path can be."""
    for more in (None, *following):
        if more is not None:
            name = f"{name}\n{more}"
        if len(name.encode("utf-8", "surrogateescape")) > SUN_PATH:
            return None
        path = _real(Path(name))
        with contextlib.suppress(OSError):
            if stat.S_ISSOCK(os.lstat(path).st_mode):
                return path
    return None


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))
