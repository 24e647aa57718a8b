"""Throwaway venvs under .bench/venvs for the peers di-code is compared with.

Each peer gets its own venv so its pins never touch di-code's. An install that fails leaves
no marker, and the figures that need that peer report it as skipped, never faked.
"""

from __future__ import annotations

import fcntl
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

PEER_PACKAGES: dict[str, list[str]] = {
    "openai": ["openai", "httpx"],
    "mini": ["mini-swe-agent"],
    "aider": ["aider-chat"],
}
INSTALL_TIMEOUT_S = 900


class PeerUnavailable(Exception):
    """The peer could not be installed; the message says why (shown as the skip reason)."""


@dataclass(frozen=True, slots=True)
class Peer:
    name: str
    venv: Path

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    def bin(self, command: str) -> Path:
        return self.venv / "bin" / command


def ensure_peer(bench_dir: Path, name: str) -> Peer:
    """Return the peer's venv, creating it (once) if needed; concurrent runs wait their turn."""
    bench_dir.mkdir(parents=True, exist_ok=True)
    with (bench_dir / f".{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _install(bench_dir, name)


def _install(bench_dir: Path, name: str) -> Peer:
    venv = bench_dir / "venvs" / name
    peer = Peer(name, venv)
    marker = venv / ".installed"
    if marker.exists():
        return peer
    failed = venv / ".failed"
    if failed.exists():
        raise PeerUnavailable(failed.read_text().strip())
    log = bench_dir / f"install-{name}.log"
    with log.open("w") as out:
        steps = [
            [sys.executable, "-m", "venv", "--clear", str(venv)],
            [str(peer.python), "-m", "pip", "install", "-q", *PEER_PACKAGES[name]],
        ]
        for step in steps:
            try:
                done = subprocess.run(
                    step,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    timeout=INSTALL_TIMEOUT_S,
                    check=False,
                )
            except subprocess.TimeoutExpired:
                _fail(failed, f"{name}: install timed out (see {log})")
            if done.returncode != 0:
                _fail(failed, f"{name}: install failed (see {log})")
    marker.write_text(" ".join(PEER_PACKAGES[name]) + "\n")
    return peer


def _fail(failed: Path, reason: str) -> NoReturn:
    failed.parent.mkdir(parents=True, exist_ok=True)
    failed.write_text(reason + "\n")
    raise PeerUnavailable(reason)


if __name__ == "__main__":
    for peer_name in sys.argv[1:]:
        try:
            print(ensure_peer(Path(".bench"), peer_name).venv)
        except PeerUnavailable as exc:
            print(exc)
