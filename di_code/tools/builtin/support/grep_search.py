"""The two sources of grep hits, ripgrep's JSON output and a Python scan, made equal.

Both yield the same `Hit`s in the same order (files in `rg --sort path` order, lines in file
order, context lines within `context` of a match) into a `HitSink`, which says when to stop.
ripgrep searches unsorted, on all cores; `InPathOrder` gathers its hits and hands them on in
that order once it is done, keeping only what can still be among the first `limit` + 1 matches
(the one more tells that the limit was reached): the first files holding that many, at most that
many matches a file (`--max-count`, whose trailing context rg still prints). A pattern that
matches everywhere would make that a search of the whole tree where the first files suffice:
past SORTED_AFTER × (limit + 1) matches the search restarts in rg's sorted order (one thread),
which stops at the limit.
The Python scan runs in a worker process (`grep_worker`) that writes rg's JSON lines, read here
as rg's are. Differences left: the regex dialect (Rust's vs Python's `re`, equal for common
patterns), and binary files: the fallback skips any file with a NUL byte, rg stops at the first
NUL it sees. The fallback reads one file at a time into memory, and skips one over 256 MB.
"""

from __future__ import annotations

import base64
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from di_code.system.abort import AbortSignal
from di_code.tools.builtin.support.errors import ToolError
from di_code.tools.builtin.support.grep_query import Hit, HitSink, Query, compile_query
from di_code.tools.builtin.support.grep_worker import TOO_SLOW
from di_code.tools.builtin.support.ripgrep import RipgrepExit, name_filter, read_lines, run_ripgrep

SORTED_AFTER = 20
PATTERN_TIME_LIMIT = 10.0
"""How long the Python fallback may match one file before it gives up on the pattern."""


def path_order(path: Path) -> tuple[str, ...]:
    """The walk's order: by name within each folder, folders entered where they sort."""
    return path.parts


class InPathOrder:
    """Hits arriving file by file in any order, handed on in path order by `drain`."""

    def __init__(self, limit: int) -> None:
        self._wanted = limit + 1
        self._files: dict[Path, list[Hit]] = {}
        self._matches = 0
        self._cutoff: tuple[str, ...] | None = None
        """Files sorting after this one cannot hold any of the matches wanted."""
        self.found = False
        self.matches_seen = 0

    def add(self, hit: Hit) -> None:
        self.found = True
        self.matches_seen += hit.is_match
        if self._cutoff is not None and path_order(hit.path) > self._cutoff:
            return
        self._files.setdefault(hit.path, []).append(hit)
        if hit.is_match:
            self._matches += 1
            if self._matches >= 2 * self._wanted:
                self._prune()

    def _prune(self) -> None:
        """Keep the first files that hold the matches wanted; drop the rest for good."""
        self._matches = 0
        for path in sorted(self._files, key=path_order):
            if self._matches >= self._wanted:
                del self._files[path]
                continue
            self._matches += sum(hit.is_match for hit in self._files[path])
            self._cutoff = path_order(path)

    def drain(self, sink: HitSink) -> None:
        for path in sorted(self._files, key=path_order):
            if not all(map(sink, self._files[path])):
                return


async def search_ripgrep(binary: str, query: Query, signal: AbortSignal, sink: HitSink) -> None:
    hits = InPathOrder(query.limit)
    enough = SORTED_AFTER * (query.limit + 1)

    def gather(raw: bytes) -> bool:
        hit = _hit(raw)
        if hit is not None and query.wants(hit.path):
            hits.add(hit)
        return hits.matches_seen < enough

    outcome = await run_ripgrep(binary, _rg_args(query, sort=False), signal, gather)
    if hits.matches_seen < enough:
        _check(outcome, hits.found, signal)
        hits.drain(sink)
        return

    await run_ripgrep(binary, _rg_args(query, sort=True), signal, _feed(query, sink))


def _feed(query: Query, sink: HitSink) -> Callable[[bytes], bool]:
    """What takes each JSON line, in order: its hit (if it is one, in the glob) to the sink."""

    def feed(raw: bytes) -> bool:
        hit = _hit(raw)
        return hit is None or not query.wants(hit.path) or sink(hit)

    return feed


def _rg_args(query: Query, sort: bool) -> list[str]:
    args = ["--json", "--context", str(query.context), "--max-count", str(query.limit + 1)]
    args += ["--sort", "path"] if sort else []
    args += ["--ignore-case"] if query.ignore_case else ["--case-sensitive"]
    args += ["--fixed-strings"] if query.literal else []
    args += name_filter(query.glob)
    return [*args, "--regexp", query.pattern, "--", str(query.top)]


def _hit(raw: bytes) -> Hit | None:
    """The match or context line in one line of rg's JSON output, if it is one."""
    message = json.loads(raw)
    if message.get("type") not in ("match", "context"):
        return None
    data = message["data"]
    return Hit(
        Path(_path(data["path"])),
        int(data["line_number"]),
        _text(data["lines"]).removesuffix("\n").removesuffix("\r"),
        message["type"] == "match",
    )


def _check(outcome: RipgrepExit, found: bool, signal: AbortSignal) -> None:
    if outcome.returncode == 2 and not found and not signal.aborted:
        raise ToolError(f"grep failed: {outcome.error or 'ripgrep exited with code 2'}")


def _path(field: dict[str, Any]) -> str:
    """A path as os functions give it: bytes that are not UTF-8 kept as lone surrogates."""
    return str(field["text"]) if "text" in field else os.fsdecode(base64.b64decode(field["bytes"]))


def _text(field: dict[str, Any]) -> str:
    if "text" in field:
        return str(field["text"])
    return base64.b64decode(field["bytes"]).decode("utf-8", "replace")


async def search_python(
    query: Query, signal: AbortSignal, sink: HitSink, time_limit: float = PATTERN_TIME_LIMIT
) -> None:
    """The Python scan, in a worker process (`grep_worker`): Python's `re` holds the whole
    interpreter while it matches, so a catastrophic pattern run here would freeze di-code,
    Ctrl-C included. The worker is killed on abort or once the sink wants no more, and it
    gives up by itself when matching one file takes longer than `time_limit` seconds."""
    compile_query(query)  # an invalid pattern is an error before any process starts
    argv = [sys.executable, "-P", "-m", "di_code.tools.builtin.support.grep_worker"]
    argv.append(json.dumps([query.to_json(), time_limit]))
    outcome = await read_lines(argv, signal, _feed(query, sink))
    if outcome.returncode == TOO_SLOW:
        raise ToolError(f"grep: the pattern took too long (over {time_limit:g} s) — simplify it")
    if outcome.returncode > 0 and not signal.aborted:
        raise ToolError(f"grep failed: {outcome.error or f'exit code {outcome.returncode}'}")
