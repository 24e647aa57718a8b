"""Which modules a piece of code imports, seen from a fresh interpreter.

Start-up time is mostly import time, and a benchmark is not a test: these helpers lock the
gains in by asserting what is *not* imported, which does not depend on the machine's speed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable, Mapping

COVERAGE_VARIABLES = ("COVERAGE_PROCESS_CONFIG", "COVERAGE_PROCESS_START")
"""How coverage.py's .pth file knows to measure a new interpreter (pyproject.toml's
`patch = subprocess`, which CI turns on)."""


def unmeasured(env: Mapping[str, str] | None) -> dict[str, str]:
    """`env` (None: this process's) without coverage.py's variables: an interpreter whose
    modules a test counts must not load coverage's own."""
    return {
        name: value
        for name, value in (os.environ if env is None else env).items()
        if name not in COVERAGE_VARIABLES
    }


def when_main_ends(expression: str) -> str:
    """Prelude code that evaluates `expression` once the main thread is done, on a thread
    Python waits for before the exit handlers. (An exit handler would not do: di-code's last
    one, registered as `main` starts, ends the process, so a handler registered before `main`
    never runs.)"""
    return (
        "import threading as _threading\n"
        "_threading.Thread(target=lambda: (_threading.main_thread().join(), "
        f"{expression})).start()\n"
    )


_REPORT = "import json as _json, sys as _sys\n" + when_main_ends(
    'print("\\nMODULES:" + _json.dumps(sorted(n for n, m in _sys.modules.items() if m)))'
)

CLI_MAIN = """
import sys
sys.argv = ["di-code", *sys.argv[1:]]
from di_code.cli.app import main
try:
    main()
except SystemExit:
    pass
"""


def run_main(
    prelude: str, *args: str, env: Mapping[str, str], cwd: str
) -> subprocess.CompletedProcess[str]:
    """`di-code ARGS` in a fresh interpreter, after `prelude` (which may watch it: an exit
    handler that prints what it saw, say)."""
    return subprocess.run(
        [sys.executable, "-c", prelude + CLI_MAIN, *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=unmeasured(env),
        cwd=cwd,
    )


def loaded_modules(
    code: str, *args: str, env: Mapping[str, str] | None = None, cwd: str | None = None
) -> tuple[set[str], str]:
    """Run `code` in a fresh interpreter; the modules it left loaded, and its stdout before."""
    done = subprocess.run(
        [sys.executable, "-c", _REPORT + code, *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=unmeasured(env),
        cwd=cwd,
    )
    head, marker, tail = done.stdout.rpartition("\nMODULES:")
    assert marker, f"no module report (exit {done.returncode}): {done.stderr[-500:]}"
    return set(json.loads(tail)), head


def offenders(loaded: Iterable[str], forbidden: Iterable[str]) -> list[str]:
    """The loaded modules that are, or are inside, a forbidden module or package."""
    return sorted(
        name
        for name in loaded
        if any(name == bad or name.startswith(bad + ".") for bad in forbidden)
    )
