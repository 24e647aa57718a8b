"""The command line: parses it, prepares the agent and hands it to a front end (chat, run, acp,
batch), and the small commands (undo, export, trust, the status lists)."""

from di_code import __version__


def version_line() -> str:
    """What `--version` prints: answered by `app.main` before Typer is imported, and by the
    Typer app for any other command line that carries the flag."""
    return f"di-code {__version__}"
