"""`--log FILE`: the log lines of a run, each through the one redaction (di_code.ai.redaction),
tracebacks included. Its own module so that `logging` is
loaded only when a log is asked for."""

from __future__ import annotations

import logging

from di_code.ai.redaction import redact


class RedactingFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


def log_to(path: str, level: int = logging.INFO) -> None:
    """Send the process's log records to `path` (appended), with every secret hidden."""
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(RedactingFormatter(logging.BASIC_FORMAT))
    logging.basicConfig(handlers=[handler], level=level)
