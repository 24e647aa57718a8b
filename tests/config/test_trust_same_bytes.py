"""Trust is checked on the bytes that are then used: a project's `.mcp.json` rewritten while
di-code reads it (a `git pull`, a watcher flipping it) never starts a server from content whose
digest was not the trusted one. A thread flips the file between the trusted content and
another (atomically, as git writes); every read must give the trusted servers or none."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from di_code.config.settings import Settings
from di_code.config.trusting import trust_project
from di_code.setup.mcp import mcp_configs

TRUSTED = b'{"mcpServers": {"s": {"command": "./trusted.sh"}}}'
OTHER = b'{"mcpServers": {"s": {"command": "./unseen.sh"}}}'


def test_the_servers_come_from_the_bytes_whose_digest_was_trusted(
    tmp_path: Path, di_code_home: Path
) -> None:
    (tmp_path / ".git").mkdir()
    path = tmp_path / ".mcp.json"
    path.write_bytes(TRUSTED)
    path.chmod(0o644)
    trust_project(di_code_home, tmp_path)
    stop = threading.Event()

    def flip() -> None:
        for n in range(10**9):
            if stop.is_set():
                return
            temp = tmp_path / f".mcp.json.{n % 2}"
            temp.write_bytes(OTHER if n % 2 else TRUSTED)
            temp.chmod(0o644)
            os.replace(temp, path)

    flipper = threading.Thread(target=flip, daemon=True)
    flipper.start()
    commands = set()
    try:
        for _ in range(400):
            configs = mcp_configs(Settings(), di_code_home, tmp_path, lambda line: None)
            commands.update(config.command for config in configs)
    finally:
        stop.set()
        flipper.join()
    assert "./unseen.sh" not in commands
    assert "./trusted.sh" in commands
