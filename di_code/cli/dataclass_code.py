"""Compiled code of the methods `dataclasses` writes, kept between runs like bytecode.

Creating a frozen dataclass costs ~0.6 ms on this machine (Python 3.11), 85 % of it compiling
the source text `dataclasses` writes for its `__init__`, `__repr__`, `__eq__`, `__hash__`,
`__setattr__` and `__delattr__`: the same text at every start, and `di-code run` makes ~100 of
them before its first request (~50 ms). Python caches a module's bytecode, not this text's; so
this does the same for it: `install` makes `dataclasses` compile its text through a cache of
code objects, loaded at start from the user's cache folder and saved at exit when something
new was compiled.

The exact text is the key and the interpreter's version heads the file, so a changed class
compiles anew and another interpreter's file is ignored. An unreadable or foreign file, or a
folder that cannot be written, only costs the compiling it would have saved.
"""

from __future__ import annotations

import atexit
import builtins
import contextlib
import dataclasses
import marshal
import os
import sys
from pathlib import Path
from types import CodeType
from typing import Any

MAX_ENTRIES = 3000
"""Past this many texts (old versions of classes, while developing), only those used by the
last run are kept."""


class CodeCache:
    """Each text's code object, kept marshalled until a class asks for it: a cache that holds
    the chat's classes too loads ten times faster than it would unmarshalled whole."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.saved: dict[str, bytes] = _load(path)
        self.used: set[str] = set()
        self.misses = 0

    def compile(self, source: str) -> CodeType:
        """What `compile(source)` gives in `dataclasses` (no `__future__` flags inherited)."""
        self.used.add(source)
        saved = self.saved.get(source)
        if saved is not None:
            with contextlib.suppress(EOFError, ValueError, TypeError):
                code = marshal.loads(saved)
                if isinstance(code, CodeType):
                    return code
        self.misses += 1
        code = compile(source, "<string>", "exec", dont_inherit=True)
        self.saved[source] = marshal.dumps(code)
        return code

    def save(self) -> None:
        """Write the codes if something was compiled, whole or not at all."""
        if not self.misses:
            return
        codes = self.saved
        if len(codes) > MAX_ENTRIES:
            codes = {text: code for text, code in codes.items() if text in self.used}
        temp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(temp, "wb") as out:
                marshal.dump((sys.version, codes), out)
            os.replace(temp, self.path)
        except OSError:  # a read-only install: nothing saved, nothing lost
            temp.unlink(missing_ok=True)


def install(path: Path | None = None) -> CodeCache | None:
    """Make `dataclasses` compile through a cache saved at `path` (default: in the user's cache
    folder); None when this Python's `dataclasses` does not write text for `exec` as 3.11-3.13
    do, or something else already changed how it does."""
    writes_text = hasattr(dataclasses, "_create_fn") or hasattr(dataclasses, "_FuncBuilder")
    if "exec" in vars(dataclasses) or not writes_text:
        return None
    cache = CodeCache(path or default_path())

    def run_text(source: Any, globals: Any = None, locals: Any = None) -> None:
        code = cache.compile(source) if isinstance(source, str) else source
        builtins.exec(code, globals, locals)

    dataclasses.exec = run_text  # type: ignore[attr-defined]  # shadows the builtin there
    atexit.register(cache.save)
    return cache


def default_path() -> Path:
    """`$XDG_CACHE_HOME/di-code/dataclass-code.<interpreter>.marshal` (~/.cache by default):
    the user's own, like ~/.bashrc, which no project can write (the tools are confined to
    the workspace, sandboxed bash too)."""
    folder = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(folder, "di-code", f"dataclass-code.{sys.implementation.cache_tag}.marshal")


def _load(path: Path) -> dict[str, bytes]:
    try:
        with open(path, "rb") as saved:
            version, codes = marshal.load(saved)
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if version != sys.version or not isinstance(codes, dict):
        return {}
    return {
        text: code
        for text, code in codes.items()
        if isinstance(text, str) and isinstance(code, bytes)
    }
