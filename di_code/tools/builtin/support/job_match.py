"""Waiting for a regular expression in a job's output, line by line, in bounded time.

The pattern is the model's: a catastrophic one (`(a+)+$` on a long line of `a`s) would match
for longer than anyone waits, and Python's `re` holds the interpreter (and so the event loop)
while it does. So each line is searched in its last MATCH_LINE characters only, each line once
(the scan goes on from the last whole line it saw; the unfinished last line, a prompt such as
`>>> `, is searched again when it grows), and on the main thread a search is bounded
(di_code.system.time_bound): past MATCH_TIME the wait fails with a one-line error instead of
freezing di-code.
"""

from __future__ import annotations

import re

from di_code.system.time_bound import TookTooLong, time_bound
from di_code.tools.builtin.support.job_log import JobLog
from di_code.tools.common.errors import ToolError

MATCH_LINE = 4096
MATCH_TIME = 1.0


class Matcher:
    def __init__(self, pattern: str, cursor: int) -> None:
        try:
            self._pattern = re.compile(pattern)
        except (re.error, RecursionError, OverflowError) as exc:
            raise ToolError(f"pattern is not a regular expression: {exc}") from None
        self._scanned = cursor

    def seen(self, log: JobLog) -> bool:
        """Whether the pattern is in a line that came after the last one scanned."""
        new = log.read_since(self._scanned)
        data = new.data
        whole = data.rfind(b"\n") + 1
        self._scanned = new.end - (len(data) - whole)
        lines = data.decode("utf-8", "replace").split("\n")
        try:
            with time_bound(MATCH_TIME):
                return any(self._pattern.search(line[-MATCH_LINE:]) for line in lines)
        except TookTooLong:
            raise ToolError(
                f"pattern took more than {MATCH_TIME:g} s on one line: write a simpler one"
            ) from None
