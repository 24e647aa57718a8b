"""grep's hits, from ripgrep's JSON output, in the walk's order.

Hits come as `Hit`s in `rg --sort path` order (files by name within each folder, lines in file
order, context lines within `context` of a match) into a `HitSink`, which says when to stop.
ripgrep searches unsorted, on all cores; `InPathOrder` gathers its hits and hands them on in
that order once it is done, keeping only what can still be among the first `limit` + 1 matches
(the one more tells that the limit was reached): the first files holding that many, at most that
many matches a file (`--max-count`, whose trailing context rg still prints). A pattern that
matches everywhere would make that a search of the whole tree where the first files suffice:
past SORTED_AFTER × (limit + 1) matches the search restarts in rg's sorted order (one thread),
which stops at the limit.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from di_code.system.abort import AbortSignal
from di_code.tools.builtin.support.ripgrep import (
    RipgrepExit,
    SearchFolder,
    glob_args,
    listed_files,
    overrides_gitignore,
    run_ripgrep,
)
from di_code.tools.common.errors import ToolError

SORTED_AFTER = 20


@dataclass(frozen=True, slots=True)
class Hit:
    path: Path
    line: int
    text: str
    is_match: bool


HitSink = Callable[[Hit], bool]
"""Takes one hit; returns False when no more are wanted."""


@dataclass(frozen=True, slots=True)
class OneFile:
    """A file named to grep, opened through the file opener: rg reads it on its stdin, so a link
    swapped in for its name after the workspace check is never followed."""

    name: str
    fd: int


@dataclass(frozen=True, slots=True)
class Query:
    pattern: str
    folder: SearchFolder
    file: OneFile | None
    """The one file in `folder` to search, or None for the whole folder."""
    glob: str | None
    ignore_case: bool
    literal: bool
    context: int
    limit: int
    """Matches wanted in all; the sink may stop earlier."""


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


async def search(binary: str, query: Query, signal: AbortSignal, sink: HitSink) -> None:
    folder, file = query.folder, query.file
    if file is None:
        paths, glob, stdin = (".",), query.glob, subprocess.DEVNULL
    else:  # a file named is searched as it is, whatever the glob
        paths, glob, stdin = ("-",), None, file.fd
    listed = await listed_files(binary, folder, signal) if overrides_gitignore(glob) else None
    hits = InPathOrder(query.limit)
    enough = SORTED_AFTER * (query.limit + 1)

    def wanted(raw: bytes) -> Hit | None:
        hit = _hit(raw, folder.path, file)
        return hit if hit is not None and (listed is None or hit.path in listed) else None

    def gather(raw: bytes) -> bool:
        hit = wanted(raw)
        if hit is not None:
            hits.add(hit)
        return hits.matches_seen < enough

    def feed(raw: bytes) -> bool:
        hit = wanted(raw)
        return hit is None or sink(hit)

    async def run(sort: bool, on_item: Callable[[bytes], bool]) -> RipgrepExit:
        if file is not None:  # each run reads the file from its start
            os.lseek(file.fd, 0, os.SEEK_SET)
        return await run_ripgrep(
            binary, _rg_args(query, glob, sort), folder, signal, on_item, paths=paths, stdin=stdin
        )

    outcome = await run(False, gather)
    if hits.matches_seen < enough:
        _check(outcome, hits.found, signal)
        hits.drain(sink)
        return
    await run(True, feed)


def _rg_args(query: Query, glob: str | None, sort: bool) -> list[str]:
    args = ["--json", "--context", str(query.context), "--max-count", str(query.limit + 1)]
    args += ["--sort", "path"] if sort else []
    args += ["--ignore-case"] if query.ignore_case else ["--case-sensitive"]
    args += ["--fixed-strings"] if query.literal else []
    return [*args, *glob_args(glob), "--regexp", query.pattern]


def _hit(raw: bytes, folder: Path, file: OneFile | None) -> Hit | None:
    """The match or context line in one line of rg's JSON output, if it is one (`file` for
    what rg read on stdin)."""
    message = json.loads(raw)
    if message.get("type") not in ("match", "context"):
        return None
    data = message["data"]
    return Hit(
        folder / (file.name if file is not None else _path(data["path"])),
        int(data["line_number"]),
        _text(data["lines"]).removesuffix("\n").removesuffix("\r"),
        message["type"] == "match",
    )


def _check(outcome: RipgrepExit, found: bool, signal: AbortSignal) -> None:
    if outcome.failed and not found and not signal.aborted:
        raise ToolError(f"grep failed: {outcome.error}")


def _path(field: dict[str, Any]) -> str:
    """A path as os functions give it: bytes that are not UTF-8 kept as lone surrogates."""
    return str(field["text"]) if "text" in field else os.fsdecode(base64.b64decode(field["bytes"]))


def _text(field: dict[str, Any]) -> str:
    if "text" in field:
        return str(field["text"])
    return base64.b64decode(field["bytes"]).decode("utf-8", "replace")
