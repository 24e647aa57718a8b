"""A streamed answer put together from `--output-format stream-json`, as a reader shows it."""

from __future__ import annotations

import json


def streamed(stdout: str) -> str:
    """The deltas of stream-json's message updates put together, as a reader shows them."""
    lines = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    updates = [line["event"] for line in lines if line.get("type") == "message_update"]
    return "".join(update.get("delta", "") for update in updates)
