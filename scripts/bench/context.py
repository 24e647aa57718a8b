"""What every figure gets: where things live, how hard to try, and the peers' venvs."""

from __future__ import annotations

import importlib.util
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from scripts.bench.peers import (
    NPM_PACKAGES,
    Peer,
    ensure_npm_peers,
    ensure_peer,
    ensure_user_install,
)


@dataclass(frozen=True)
class Bench:
    root: Path
    """The repository: its .venv runs di-code."""
    out: Path
    """.bench/: results, peers' venvs, scratch files."""
    quick: bool = False
    repeats: int = 5
    verbose: bool = True
    _peers: dict[str, Peer] = field(default_factory=dict, repr=False)
    _npm_bin: list[Path] = field(default_factory=list, repr=False)

    @property
    def python(self) -> Path:
        return self.root / ".venv" / "bin" / "python"

    def bin(self, command: str) -> Path:
        return self.root / ".venv" / "bin" / command

    def has(self, module: str) -> bool:
        """Whether a di-code module exists yet (parts land while the harness is written)."""
        try:
            return importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:
            return False

    def scale(self, full: int, quick: int) -> int:
        return quick if self.quick else full

    def peer(self, name: str) -> Peer:
        """The peer's venv (installed on first use); raises PeerUnavailable."""
        if name not in self._peers:
            self.log(f"  preparing peer venv {name} ...")
            self._peers[name] = ensure_peer(self.out, name)
        return self._peers[name]

    def user_install(self) -> Peer:
        """di-code installed as a user would (regular, no extras); raises PeerUnavailable."""
        if "di-code-user" not in self._peers:
            self.log("  installing di-code as a user would (regular, no extras) ...")
            self._peers["di-code-user"] = ensure_user_install(self.out, self.root)
        return self._peers["di-code-user"]

    def npm_bin(self, command: str) -> Path:
        """An npm peer's command (all of them installed on first use); raises PeerUnavailable."""
        if command not in NPM_PACKAGES:
            raise KeyError(command)
        if not self._npm_bin:
            self.log("  preparing npm peers (pi, claude, codex, the ACP adapters) ...")
            self._npm_bin.append(ensure_npm_peers(self.out))
        return self._npm_bin[0] / command

    @contextmanager
    def scratch_home(self) -> Iterator[Path]:
        """A throwaway HOME under .bench/homes, removed afterwards.

        Not under /tmp: Codex refuses to put its helper commands (its sandbox launcher among
        them) under a temporary folder, and its shell tool then fails on every call.
        """
        parent = self.out / "homes"
        parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="home-", dir=parent) as home:
            yield Path(home)

    def log(self, message: str) -> None:
        if self.verbose:
            print(message, file=sys.stderr, flush=True)
