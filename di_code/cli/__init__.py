"""di_code.cli layer."""

from di_code import __version__


def version_line() -> str:
    """What `--version` prints: answered by `app.main` before Typer is imported, and by the
    Typer app for any other command line that carries the flag."""
    return f"di-code {__version__}"
