"""Reading a TOML settings file, and the error every configuration problem becomes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from di_code.system.errors import DiCodeError
from di_code.system.files.opener import read_path

MAX_BYTES = 16 * 1024 * 1024
"""A settings file is read through the file opener (a FIFO is refused, never waited on), at
most this much of it."""


class ConfigError(DiCodeError):
    """A configuration problem the user must fix: one line, exit code 2."""

    exit_code = 2


def read_toml(path: Path) -> dict[str, Any]:
    return decode_toml(read_bytes(path), path)


def read_bytes(path: Path) -> bytes:
    try:
        return read_path(path, MAX_BYTES)
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from exc


def decode_toml(data: bytes, path: Path) -> dict[str, Any]:
    """The parsed document; text that is not UTF-8, or not TOML, names the file."""
    import tomllib  # compiles its regexes on import: not for `--help`

    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"cannot read {path}: not UTF-8 text (byte {data[exc.start]:#04x} at offset "
            f"{exc.start})"
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    except RecursionError:  # tomllib's parser recurses per level of nested arrays and tables
        raise ConfigError(f"cannot read {path}: nested too deep to be settings") from None
