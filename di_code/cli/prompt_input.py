"""Where `run`'s prompt comes from: the argument, piped stdin, or both."""

from __future__ import annotations

from typing import TextIO

from di_code.ai.codec import encodable
from di_code.config.settings import ConfigError

NO_PROMPT = "no prompt: pass it as an argument, pipe it on stdin, or use - to read stdin"


class UsageError(ConfigError):
    """The command line itself is wrong: exit code 2, like a configuration error."""


def read_prompt(argument: str | None, stdin: TextIO) -> str:
    """The argument; stdin when it is not a terminal (appended in a <stdin> block); `-` = stdin.

    Where the prompt comes in: bytes that are not UTF-8, in the argument (which Python reads as lone
    surrogates) or on stdin, become U+FFFD here, so the model and the session get valid text."""
    if argument == "-":
        prompt = _piped(stdin)
    elif stdin.isatty():
        prompt = encodable(argument or "")
    else:
        piped = _piped(stdin)
        argument = encodable(argument) if argument else argument
        if argument and piped.strip():
            prompt = f"{argument}\n\n<stdin>\n{piped.rstrip()}\n</stdin>"
        else:
            prompt = argument or piped
    if not prompt.strip():
        raise UsageError(NO_PROMPT)
    return prompt


def _piped(stdin: TextIO) -> str:
    """All of stdin, bytes that are not UTF-8 as U+FFFD."""
    raw = getattr(stdin, "buffer", None)
    return raw.read().decode("utf-8", "replace") if raw is not None else encodable(stdin.read())
