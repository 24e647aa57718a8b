"""Workspace confinement: every path a model names must resolve inside one of the roots.

A path is taken relative to the primary root (the working directory); `~` is expanded and a
leading `@` (how users mention files in a prompt) is stripped. The check runs on the realpath,
so `..` and symlinks are followed before deciding; a file that does not exist yet is judged by
the realpath of its nearest existing parent (that is what `os.path.realpath` does).
"""

from __future__ import annotations

import os
from collections.abc import Sequence, Set
from pathlib import Path

from msgspec import Struct, field

from di_code.system.files.resolve import Outside, Target, resolve_path
from di_code.system.names import escape_name, unescaped_path
from di_code.tools.common.errors import ToolError
from di_code.tools.common.files import open_error


class Workspace(Struct, frozen=True):
    roots: tuple[Path, ...]
    """Real paths; the first is the working directory that relative paths start from."""
    files: Set[Path] = field(default_factory=frozenset)
    """Single files outside the roots that are allowed too, by real path (the read tool's:
    bash's full-output files; a live set that grows as they are made)."""

    @classmethod
    def create(
        cls, root: Path, extra_roots: Sequence[Path] = (), files: Set[Path] = frozenset()
    ) -> Workspace:
        return cls(tuple(Path(os.path.realpath(p)) for p in (root, *extra_roots)), files)

    @property
    def root(self) -> Path:
        return self.roots[0]

    def locate(self, raw: str) -> tuple[Path, str]:
        """The real path of `raw` and the path as the model meant it (for messages);
        ToolError if it lies outside every root."""
        target, text = self.resolve(raw)
        target.close()
        return target.path, text

    def resolve(self, raw: str, make_folders: bool = False) -> tuple[Target, str]:
        """The target of `raw` (its folder held open: the caller closes it) and the path as
        the model meant it, written as `escape_name` writes names; ToolError if it lies outside
        every root. With `make_folders` the missing folders are created, only once the path is
        known to be inside."""
        text = clean_path(raw)
        shown = escape_name(text)  # for messages: a newline in a name cannot forge a line
        try:
            path = Path(unescaped_path(os.path.join(self.root, os.path.expanduser(text))))
            return resolve_path(path, self.contains, make_folders), shown
        except Outside:
            raise ToolError(f"Path is outside the workspace: {shown}") from None
        except OSError as exc:
            raise open_error(exc, shown) from exc
        except ValueError:  # a NUL character, which no system call accepts
            raise ToolError("Path contains a NUL character") from None

    def contains(self, path: Path) -> bool:
        """True when the real path `path` lies inside one of the roots, or is one of `files`."""
        return any(path.is_relative_to(root) for root in self.roots) or path in self.files

    def display(self, path: Path) -> str:
        """How a path is shown to the model: relative to the root when inside it, written as
        `escape_name` writes names (a newline in a name cannot forge a line of output)."""
        if path.is_relative_to(self.root):
            return escape_name(path.relative_to(self.root).as_posix() or ".")
        return escape_name(str(path))


def clean_path(raw: str) -> str:
    """The path as the model meant it: without a leading `@`, and `.` for an empty one."""
    text = raw.strip()
    if text.startswith("@"):
        text = text[1:]
    return text or "."
