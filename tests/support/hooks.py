"""Session hooks that log each event they get, and the events read back from that log."""

from __future__ import annotations

import json
from pathlib import Path


def log_hooks(home: Path, log: Path, events: dict[str, str]) -> None:
    """A hook per event (its matcher given) appending its stdin as one line to `log`."""
    command = json.dumps(f"cat >> {log}; echo >> {log}")
    (home / "config.toml").write_text(
        "".join(
            f'[[hooks.{event}]]\nmatcher = "{matcher}"\n'
            f'hooks = [{{ type = "command", command = {command}, timeout = 10 }}]\n'
            for event, matcher in events.items()
        )
    )


def events(log: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
