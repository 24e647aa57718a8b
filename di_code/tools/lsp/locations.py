"""Places a server names (locations, symbols), as the model reads them: `path:line:col` with
that line's text, 1-based, sorted, at most MAX_RESULTS. Runs in a worker thread (it reads
the files the lines come from).

A place counts only where its real path lies in the workspace, judged through the file opener
as `read` judges a path: a server names `vendor/lib.py` where `vendor` links out of the
workspace, and that place (and its line) is left out as `read` refuses it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from di_code.system.files.opener import open_real, read_at_most
from di_code.system.files.resolve import Outside, resolve_path
from di_code.tools.common.workspace import Workspace

MAX_RESULTS = 100
MAX_LINE = 200
MAX_SOURCE = 2_000_000
"""A result's file is read for its line's text up to this size (else the text is left out)."""
_LINE_END = re.compile(r"\r\n|\r|\n")
"""Where a server's lines end (the LSP spec): a form feed, a vertical tab or U+2028, where
`splitlines()` would also end one, is text on its line."""


def uri_path(uri: str) -> Path | None:
    parsed = urlparse(uri)
    return Path(unquote(parsed.path)) if parsed.scheme == "file" else None


def confined(space: Workspace, uri: str) -> Path | None:
    """The real path `uri` names when it lies in the workspace, links followed as `read`
    follows them; None for anything else."""
    path = uri_path(uri)
    if path is None or not path.is_absolute():
        return None
    try:
        with resolve_path(path, space.contains) as target:
            return target.path
    except (Outside, OSError, ValueError):  # ValueError: a NUL in the name
        return None


def inside(space: Workspace, uris: list[str]) -> dict[str, Path]:
    """The real paths of those `uris` that lie in the workspace (`confined`)."""
    found = {uri: confined(space, uri) for uri in set(uris)}
    return {uri: path for uri, path in found.items() if path is not None}


def place_lines(space: Workspace, places: list[tuple[str, int, int, str]]) -> list[str]:
    """One line per (uri, 0-based line, 0-based character, label) in the workspace,
    deduplicated and sorted; the label (a symbol's kind and name) replaces the line's text
    when given."""
    cache: dict[Path, list[str]] = {}
    real = inside(space, [uri for uri, _, _, _ in places])
    rows = []
    for uri, line, character, label in set(places):
        path = real.get(uri)
        if path is None:
            continue
        shown = space.display(path)
        text = label[:MAX_LINE] or _line(cache, path, line)
        rows.append((shown, line + 1, character + 1, text))
    rows.sort()
    out = [f"{shown}:{line}:{col}: {text}" for shown, line, col, text in rows[:MAX_RESULTS]]
    if len(rows) > MAX_RESULTS:
        out.append(f"... and {len(rows) - MAX_RESULTS} more")
    return out


def _line(cache: dict[Path, list[str]], path: Path, line: int) -> str:
    if path not in cache:
        try:
            with open_real(path) as file:  # no link followed: the path was judged as it is
                text = read_at_most(file, MAX_SOURCE).decode("utf-8", errors="replace")
            cache[path] = _LINE_END.split(text)
        except OSError:
            cache[path] = []
    lines = cache[path]
    text = lines[line].strip() if 0 <= line < len(lines) else ""
    return text[:MAX_LINE]


def locations(result: Any) -> list[tuple[str, int, int, str]]:
    """Location | Location[] | LocationLink[] | None as (uri, line, character, '')."""
    if result is None:
        return []
    items = result if isinstance(result, list | tuple) else [result]
    out = []
    for item in items:
        uri = getattr(item, "uri", None) or getattr(item, "target_uri", None)
        span = getattr(item, "range", None) or getattr(item, "target_selection_range", None)
        if uri and span is not None:
            out.append((uri, span.start.line, span.start.character, ""))
    return out


def symbols(result: Any, uri: str | None = None) -> list[tuple[str, int, int, str]]:
    """DocumentSymbol trees (flattened, `uri` given) or SymbolInformation/WorkspaceSymbol
    lists, as (uri, line, character, 'kind name')."""
    out: list[tuple[str, int, int, str]] = []
    for item in result or []:
        kind = getattr(getattr(item, "kind", None), "name", "symbol").lower()
        label = f"{kind} {item.name}"
        location = getattr(item, "location", None)
        if location is not None and hasattr(location, "range"):
            start = location.range.start
            out.append((location.uri, start.line, start.character, label))
        elif location is not None:
            out.append((location.uri, 0, 0, label))
        elif uri is not None:
            start = item.selection_range.start
            out.append((uri, start.line, start.character, label))
            out += symbols(getattr(item, "children", None), uri)
    return out


def hover_text(result: Any) -> str:
    """The hover's text (markup or marked strings), at most MAX_HOVER characters, with a line
    saying so when cut (a hover cut silently reads as the whole documentation)."""
    if result is None:
        return ""
    contents = result.contents
    parts = contents if isinstance(contents, list | tuple) else [contents]
    text = "\n".join(p if isinstance(p, str) else str(getattr(p, "value", p)) for p in parts)
    text = str(text).strip()
    if len(text) <= MAX_HOVER:
        return text
    return f"{text[:MAX_HOVER]}\n[Hover cut at {MAX_HOVER} of {len(text)} characters.]"


MAX_HOVER = 4000
