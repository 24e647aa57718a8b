"""Throwaway installs under .bench/ of the peers di-code is compared with.

Python peers get a venv each under .bench/venvs (their pins never touch di-code's); the npm
peers share one npm prefix, .bench/npm, installed with npm itself. An install that fails
leaves no marker, and the figures that need that peer report it as skipped, never faked.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

PEER_PACKAGES: dict[str, list[str]] = {
    "openai": ["openai", "httpx"],
    "mini": ["mini-swe-agent"],
    "aider": ["aider-chat"],
}
NPM_PACKAGES: dict[str, str] = {
    "pi": "@mariozechner/pi-coding-agent",
    "claude": "@anthropic-ai/claude-code",
    "codex": "@openai/codex",
    "claude-agent-acp": "@agentclientprotocol/claude-agent-acp",
    "codex-acp": "@zed-industries/codex-acp",
}
"""Command name: the npm package that provides it."""
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


@contextlib.contextmanager
def _turn(bench_dir: Path, name: str) -> Iterator[None]:
    """Concurrent runs install `name` one after the other."""
    bench_dir.mkdir(parents=True, exist_ok=True)
    with (bench_dir / f".{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def ensure_peer(bench_dir: Path, name: str) -> Peer:
    """Return the peer's venv, creating it (once) if needed."""
    with _turn(bench_dir, name):
        return _install(bench_dir, name, PEER_PACKAGES[name])


def _install(bench_dir: Path, name: str, packages: list[str]) -> Peer:
    venv = bench_dir / "venvs" / name
    peer = Peer(name, venv)
    steps = [
        [sys.executable, "-m", "venv", "--clear", str(venv)],
        [str(peer.python), "-m", "pip", "install", "-q", *packages],
    ]
    _run_once(bench_dir, name, venv, steps)
    return peer


def ensure_user_install(bench_dir: Path, root: Path) -> Peer:
    """di-code as a user installs it: a regular (not editable) install without extras.

    The README's dev install is editable (setuptools' import finder runs at every start) and
    has the `mcp` extra (whose click makes `import httpx` load httpx's command line); neither
    is what `pip install di-code` gives. The venv and the dependencies are made once; di-code
    itself is installed again at every run, so the figures are of the checkout as it is.
    """
    with _turn(bench_dir, "di-code-user"):
        peer = _install(bench_dir, "di-code-user", [str(root)])
        again = [str(peer.python), "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall"]
        done = subprocess.run([*again, str(root)], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise PeerUnavailable(f"di-code-user: install failed: {done.stderr.strip()[-300:]}")
        return peer


def ensure_npm_peers(bench_dir: Path) -> Path:
    """Install every npm peer into .bench/npm (once); return the folder of their commands.

    All of them in one `npm install`: one resolution, one lock, and a failure says which log to
    read. Without npm on PATH they are skipped with that reason.
    """
    prefix = bench_dir / "npm"
    with _turn(bench_dir, "npm"):
        npm = shutil.which("npm")
        if npm is None:
            raise PeerUnavailable("npm not found on PATH")
        install = [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund"]
        install += ["--no-update-notifier", *NPM_PACKAGES.values()]
        if any(not (prefix / "node_modules" / p).is_dir() for p in NPM_PACKAGES.values()):
            (prefix / ".installed").unlink(missing_ok=True)  # a package added since
        _run_once(bench_dir, "npm", prefix, [install])
    return prefix / "node_modules" / ".bin"


def installed_versions(bench_dir: Path) -> dict[str, str]:
    """The versions of the peers installed under bench_dir (for the results' header)."""
    found = {}
    for name, package in NPM_PACKAGES.items():
        manifest = bench_dir / "npm" / "node_modules" / package / "package.json"
        if manifest.exists():
            found[name] = json.loads(manifest.read_text()).get("version", "?")
    for name in PEER_PACKAGES:
        site = sorted((bench_dir / "venvs" / name / "lib").glob("python3*/site-packages"))
        package = PEER_PACKAGES[name][0].replace("-", "_")
        for info in site[0].glob(f"{package}-*.dist-info") if site else ():
            found[name] = info.name.removesuffix(".dist-info").split("-")[-1]
    node = shutil.which("node")
    if node:
        done = subprocess.run([node, "--version"], capture_output=True, text=True, check=False)
        found["node"] = done.stdout.strip()
    return found


def _run_once(bench_dir: Path, name: str, target: Path, steps: list[list[str]]) -> None:
    """Run the install steps unless `target` holds a success or a failure marker already."""
    marker = target / ".installed"
    if marker.exists():
        return
    failed = target / ".failed"
    if failed.exists():
        raise PeerUnavailable(failed.read_text().strip())
    log = bench_dir / f"install-{name}.log"
    with log.open("w") as out:
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
    marker.write_text(" ".join(steps[-1]) + "\n")


def _fail(failed: Path, reason: str) -> NoReturn:
    failed.parent.mkdir(parents=True, exist_ok=True)
    failed.write_text(reason + "\n")
    raise PeerUnavailable(reason)


if __name__ == "__main__":
    for peer_name in sys.argv[1:]:
        try:
            if peer_name == "npm":
                print(ensure_npm_peers(Path(".bench")))
            else:
                print(ensure_peer(Path(".bench"), peer_name).venv)
        except PeerUnavailable as exc:
            print(exc)
