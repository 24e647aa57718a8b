"""What a di-code process saved in its session files, read the way a test checks it."""

from __future__ import annotations

import json
from pathlib import Path


def saved_stop_reasons(home: Path) -> list[str]:
    """The stop reason of each assistant message saved under `home`'s sessions, in order."""
    reasons = []
    for path in home.glob("sessions/*/*.jsonl"):
        for line in path.read_text().splitlines():
            entry = json.loads(line)
            if entry.get("type") == "message" and entry["message"].get("role") == "assistant":
                reasons.append(entry["message"].get("stop_reason", "stop"))
    return reasons
