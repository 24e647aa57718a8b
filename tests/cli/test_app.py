"""The Typer app itself: help without heavy imports, version, usage errors exit 2."""

from __future__ import annotations

import subprocess
import sys

from di_code import __version__

HEAVY = ("httpx", "jsonschema", "prompt_toolkit", "rich.markdown")

HELP_IMPORTS = """
import sys
sys.argv = ["di-code", *sys.argv[1:]]
from di_code.cli.app import main
try:
    main()
except SystemExit:
    pass
heavy = [name for name in {heavy!r} if name in sys.modules]
print("HEAVY:", ",".join(heavy))
"""


def run_python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60
    )


def test_help_imports_no_heavy_module() -> None:
    for args in (["--help"], ["run", "--help"], ["chat", "--help"]):
        done = run_python(HELP_IMPORTS.format(heavy=HEAVY), *args)
        assert "Usage: di-code" in done.stdout
        assert done.stdout.rstrip().endswith("HEAVY:"), (args, done.stdout[-200:])


def test_version() -> None:
    done = run_python("from di_code.cli.app import main; main()", "--version")
    assert done.stdout == f"di-code {__version__}\n" and done.returncode == 0


def test_unknown_flag_is_exit_2() -> None:
    done = run_python("from di_code.cli.app import main; main()", "run", "--bogus", "hi")
    assert done.returncode == 2
    assert "No such option: --bogus" in done.stderr
    assert "Traceback" not in done.stderr
