"""Where `run`'s prompt comes from: the argument, piped stdin, or both (SPEC §5)."""

from __future__ import annotations

from typing import TextIO

from di_code.config.settings import ConfigError

NO_PROMPT = "no prompt: pass it as an argument, pipe it on stdin, or use - to read stdin"


class UsageError(ConfigError):
    """The command line itself is wrong: exit code 2, like a configuration error."""


def read_prompt(argument: str | None, stdin: TextIO) -> str:
    """The argument; stdin when it is not a terminal (appended in a <stdin> block); `-` = stdin."""
    if argument == "-":
        prompt = stdin.read()
    elif stdin.isatty():
        prompt = argument or ""
    else:
        piped = stdin.read()
        if argument and piped.strip():
            prompt = f"{argument}\n\n<stdin>\n{piped.rstrip()}\n</stdin>"
        else:
            prompt = argument or piped
    if not prompt.strip():
        raise UsageError(NO_PROMPT)
    return prompt
