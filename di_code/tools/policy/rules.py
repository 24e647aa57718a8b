"""One permission rule (README, "Permissions", Rules): a tool, a bash command prefix, a file or
a host, and how it matches a call; `permissions` weighs the rules and grants together."""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

from msgspec import Struct

from di_code.system.web_address import BadAddress, host_matches, web_address
from di_code.tools.policy.shell_parse import SimpleCommand

Place: TypeAlias = Callable[[str], str]
"""Where a path names a file, for file rules: the same text for the same file."""


class Rule(Struct, frozen=True):
    """`tool` alone, `bash:words` for a bash command prefix, or `write:path` / `edit:path`.
    `mcp__SERVER` names every tool of that server (`mcp__SERVER__TOOL` one, not its extensions)."""

    tool: str
    prefix: str | None = None
    exact: bool = False
    """A grant for one bash line, as typed (`prefix` is the whole line): `rm -f notes.txt`
    approved "always" approves that line again, never another `rm`."""

    def names(self, tool_name: str) -> bool:
        server = tool_name.removeprefix("mcp__").partition("__")[0]  # it has no `__`: mcp_config
        mcp = tool_name.startswith("mcp__") and self.tool == f"mcp__{server}"
        return self.tool == tool_name or mcp

    @classmethod
    def parse(cls, text: str) -> Rule:
        tool, _, prefix = text.partition(":")
        return cls(tool.strip(), prefix.strip() or None)

    def __str__(self) -> str:
        if self.exact:
            return f"{self.tool} (this exact command): {self.prefix}"
        return self.tool if self.prefix is None else f"{self.tool}:{self.prefix}"

    def allows_words(self, words: Sequence[str]) -> bool:
        """`git status -s` starts with `git status`; `git statusx` and `./git status` do not.
        An exact grant allows no words on their own, only its whole line."""
        if self.exact:
            return False
        wanted = (self.prefix or "").split()
        return list(words[: len(wanted)]) == wanted

    def denies(self, command: SimpleCommand) -> bool:
        """A deny rule matches the command or anything it runs; the program by name, a word
        that is an expansion matches any word, an unreadable command matches every rule."""
        wanted = (self.prefix or "").split()
        for layer in command.layers():
            if layer.unreadable:
                return True
            words = layer.words
            if len(words) < len(wanted):
                continue
            names = [layer.program, *words[1 : len(wanted)]]
            wanted_names = [posixpath.basename(wanted[0]), *wanted[1:]]
            if all(
                got is None or got == want for got, want in zip(names, wanted_names, strict=True)
            ):
                return True
        return False

    def covers_path(self, arguments: dict[str, Any], place: Place = posixpath.normpath) -> bool:
        """A file rule names the file, both paths found by `place` (the gate's: as the file
        tools find them, so `@a.py`, `/work/a.py` and a link to it are one file); a fetch rule
        names the URL's host (or a parent domain: `fetch:python.org` covers docs.python.org),
        both normalised by the one place (di_code.system.web_address); a URL whose host cannot
        be named is covered by no rule (the tool refuses it as invalid)."""
        path = arguments.get("path")
        if self.prefix is None:
            return True
        url = arguments.get("url")
        if isinstance(url, str):
            try:
                host = web_address(url).host
            except BadAddress:
                return False
            return host_matches(host, self.prefix)
        return isinstance(path, str) and place(path) == place(self.prefix)
