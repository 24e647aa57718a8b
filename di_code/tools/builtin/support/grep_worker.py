"""grep's Python fallback in a process of its own, for when ripgrep is missing:
`python -P -m di_code.tools.builtin.support.grep_worker '[QUERY, TIME_LIMIT]'` (grep_search
starts it).

Python's `re` holds the interpreter while it matches, and a catastrophic pattern (`(a+)+$` on a
long line of `a`s and a `b`) matches for longer than anyone waits. In a worker that costs only
the worker: di-code kills it on abort or once it has the hits it wants, and the worker bounds
itself, so it never spins on even when di-code is gone: matching one file may take TIME_LIMIT
seconds, then SIGALRM (which `re` checks while it backtracks) ends it with exit code TOO_SLOW.
Hits go to stdout as ripgrep's JSON lines, flushed after each file that has some, so both
sources are read by the same code. Files come in the walk's (rg's sorted) order.
"""

from __future__ import annotations

import json
import re
import signal
import sys
from pathlib import Path
from typing import Any

from di_code.system.files.opener import open_real, read_at_most
from di_code.tools.builtin.support.grep_query import Hit, Query, compile_query
from di_code.tools.builtin.support.ignore import walk_files

TOO_SLOW = 3
"""The exit code when matching one file took longer than the time limit (rg exits with 0, 1
or 2)."""


FILE_MAX_BYTES = 256 * 1024 * 1024
"""A larger file is skipped by the fallback, which holds one file in memory at a time."""


class _TooSlow(Exception):
    pass


def _alarm(number: int, frame: object) -> None:
    raise _TooSlow


def main(argv: list[str]) -> int:
    try:
        data, time_limit = json.loads(argv[1])
        query = Query.from_json(data)
        signal.signal(signal.SIGALRM, _alarm)
        search(query, float(time_limit))
    except _TooSlow:
        return TOO_SLOW
    except Exception as exc:  # one line for the model, never a traceback
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    return 0


def search(query: Query, time_limit: float) -> None:
    regex = compile_query(query)
    files = [query.top] if query.top.is_file() else walk_files(query.top)
    for path in files:
        if not query.wants(path):
            continue
        signal.setitimer(signal.ITIMER_REAL, time_limit)
        try:
            hits = file_hits(path, regex, query.context)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        if hits:
            sys.stdout.write("".join(json.dumps(_rg_json(hit)) + "\n" for hit in hits))
            sys.stdout.flush()


def file_hits(path: Path, regex: re.Pattern[str], context: int) -> list[Hit]:
    """One file's matching lines and the context lines around them, in line order."""
    try:
        with open_real(path) as f:
            data = read_at_most(f, FILE_MAX_BYTES)
    except OSError:  # gone, swapped for a FIFO or a link, or too large to hold
        return []
    if b"\0" in data:
        return []
    lines = data.decode("utf-8", "replace").split("\n")
    if lines[-1] == "":
        lines.pop()
    lines = [line.removesuffix("\r") for line in lines]
    matches = [i for i, line in enumerate(lines) if regex.search(line)]
    shown: set[int] = set()
    for i in matches:
        shown.update(range(max(0, i - context), min(len(lines), i + context + 1)))
    matched = set(matches)
    return [Hit(path, i + 1, lines[i], i in matched) for i in sorted(shown)]


def _rg_json(hit: Hit) -> dict[str, Any]:
    """A hit as `rg --json` writes it (a name that is not UTF-8 keeps its lone surrogates,
    which JSON escapes and grep_search reads back unchanged)."""
    data = {"path": {"text": str(hit.path)}, "line_number": hit.line, "lines": {"text": hit.text}}
    return {"type": "match" if hit.is_match else "context", "data": data}


if __name__ == "__main__":
    sys.exit(main(sys.argv))
