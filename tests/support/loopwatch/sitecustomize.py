"""Imported at start-up by every Python process started under the loop watch (its folder
is first on PYTHONPATH): once asyncio is imported, the event-loop callbacks that held their loop
go to DI_CODE_LOOP_WATCH_LOG (tests/support/loop_watch.py says why)."""

import os
import sys

if os.environ.get("DI_CODE_LOOP_WATCH_LOG"):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__)))))
    from tests.support.loop_watch import LOG_VARIABLE, InstallWhenImported

    sys.meta_path.insert(0, InstallWhenImported(os.environ[LOG_VARIABLE]))
    del sys.path[0]
