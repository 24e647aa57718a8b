"""What grep searches for and what it finds, shared by di-code and grep's worker process
(`grep_worker`), which imports only this, the walk and the glob matcher: no asyncio, so it
starts quickly."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from di_code.tools.builtin.support.errors import ToolError
from di_code.tools.builtin.support.ignore import compile_glob


@dataclass(frozen=True, slots=True)
class Hit:
    path: Path
    line: int
    text: str
    is_match: bool


HitSink = Callable[[Hit], bool]
"""Takes one hit; returns False when no more are wanted."""


@dataclass(frozen=True, slots=True)
class Query:
    pattern: str
    top: Path
    glob: str | None
    ignore_case: bool
    literal: bool
    context: int
    limit: int
    """Matches wanted in all; the sink may stop earlier."""

    def __post_init__(self) -> None:
        if self.glob is not None:
            compile_glob(self.glob)  # an invalid glob is a ToolError before any search

    def to_json(self) -> dict[str, Any]:
        """The query for grep's worker process (`from_json` reads it back)."""
        return {**asdict(self), "top": str(self.top)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Query:
        return cls(**{**data, "top": Path(data["top"])})

    def wants(self, path: Path) -> bool:
        """The glob filter, on the path relative to the searched folder."""
        if self.glob is None or path == self.top:
            return True
        return compile_glob(self.glob).matches(path.relative_to(self.top).as_posix())


def compile_query(query: Query) -> re.Pattern[str]:
    pattern = re.escape(query.pattern) if query.literal else query.pattern
    try:
        return re.compile(pattern, re.IGNORECASE if query.ignore_case else 0)
    except re.error as exc:
        raise ToolError(f"Invalid regex: {exc}") from None
