"""What `run` and `chat` do once their command line is parsed, by Typer (commands.py) or by
the saved grammar (quick_parse.py): one body each, and the guard every command runs in.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

from di_code.cli.flags import CliOptions

EXIT_USAGE = 2


def run_body(
    prompt: str | None, output_format: str, image: Sequence[str] | None, options: CliOptions
) -> int:
    def body() -> int:
        from di_code.cli.run import run_command

        return run_command(prompt, output_format, options, tuple(image or ()))

    return guarded(body, options)


def chat_body(options: CliOptions) -> int:
    def body() -> int:
        from di_code.cli.chat import run_chat

        return run_chat(options)

    return guarded(body, options)


def guarded(body: Callable[[], int], options: CliOptions) -> int:
    """Run a command body; turn user errors into one line and exit 2, bugs into exit 1.

    The body imports what it needs itself: modules that keep `sys.stderr` as a default
    argument must see the redacting stream installed here."""
    from di_code.ai.redaction import redact_output  # not needed by `--help`
    from di_code.config.settings import ConfigError

    redact_output()  # from here on, whatever leaves the process has the known secrets hidden
    try:
        return body()
    except ConfigError as exc:
        print(f"di-code: {_shown(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        if options.verbose:
            raise
        print(f"di-code: internal error: {_shown(exc)} (--verbose shows details)", file=sys.stderr)
        return 1


def _shown(error: Exception) -> str:
    """The message through the sanitizer: it may quote files, servers, the command line."""
    from di_code.ui.safe_text import visible  # only on an error: `run` does not load the UI

    return visible(str(error))
