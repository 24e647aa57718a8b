"""Markdown files with YAML front matter (command templates, subagents, SKILL.md): where they
are found, and how they are read, without PyYAML.

Each kind is looked for in the same places (its folders below every folder from the workspace up
to the repository root, then the user's own), and a file that cannot be used is one warning line
naming it; the loaders only say what is particular to their kind.

Only the subset these files use is understood: `key: value` lines, single- or double-quoted
strings, plain values continued on more-indented lines, and `>` (folded) or `|` (literal) block
values. A key with nothing after the colon keeps its indented lines as raw text, so nested maps
and lists (a skill's `metadata`, `allowed-tools`) are carried along without being read. Anything
else is a `FrontMatterError` with a short reason, which the caller turns into a warning naming
the file.
"""

from __future__ import annotations

import re
import stat
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar

import msgspec

from di_code.config.project import project_folders, project_root
from di_code.system.errors import DiCodeError
from di_code.system.files.opener import open_path
from di_code.system.safe_text import visible_line

_KEY = re.compile(r"([A-Za-z_][\w.-]*)[ \t]*:(?:[ \t]+(.*))?$")
_BLOCK = re.compile(r"([|>])[+-]?[1-9]?$")
_DOUBLE_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "/": "/", "0": "\0"}
T = TypeVar("T")
DESCRIPTION_CAP = 1024
"""Characters of a skill's or subagent's description that reach the model."""
NAME_CAP = 64
"""The longest name of a skill or subagent (the Agent Skills format's limit): a longer one is
skipped, as a name is never cut (two cut names could be one)."""


class FrontMatterError(DiCodeError, ValueError):
    """The front matter cannot be read; the message says why (and where, by line)."""


class Document(msgspec.Struct, frozen=True):
    fields: dict[str, str]
    """The front matter's keys and their text values (empty without front matter)."""
    body: str
    """The Markdown after the front matter."""


def project_of(workspace: Path) -> Path:
    """The real folder a project's files must stay in: the repository holding `workspace`."""
    return project_root(workspace.resolve())


def search_folders(workspace: Path, project: Sequence[Path], user: Sequence[Path]) -> list[Path]:
    """The `project` folders (relative) below the workspace and each parent up to the repository
    root, then the `user` folders: nearest first, each once."""
    nearest = [folder / sub for folder in project_folders(workspace) for sub in project]
    return list(dict.fromkeys([*nearest, *user]))


def markdown_files(folders: Iterable[Path], inside: str = "") -> Iterator[Path]:
    """Each folder's `*.md` files by name or, given `inside`, the file of that name in each of
    its subfolders (a skill's SKILL.md); a folder that cannot be listed is passed over."""
    for folder in folders:
        try:
            names = sorted(entry.name for entry in folder.iterdir())
        except OSError:
            continue
        for name in names:
            path = folder / name / inside if inside else folder / name
            if path.name.endswith(".md") and is_regular_file(path):
                yield path


def read_or_warn(
    path: Path,
    cap: int,
    build: Callable[[Path, Document], T],
    warnings: list[str],
    project: Path,
) -> T | None:
    """What `build` makes of the file, or None and one line in `warnings` saying why it was
    skipped: it could not be read, its front matter is bad (to the parser or to `build`), or
    it is a file of the `project` (its real root folder) that leads out of it."""
    if path.is_relative_to(project) and not path.resolve().is_relative_to(project):
        # a cloned repository's link to ~/.ssh/id_ed25519: its text would go to the model
        warnings.append(f"{shown(path)}: skipped: it is a link to a file outside the project")
        return None
    try:
        return build(path, read_document(path, cap))
    except OSError as exc:
        warnings.append(f"{shown(path)}: skipped: {exc.strerror or exc}")
    except FrontMatterError as exc:
        warnings.append(f"{shown(path)}: skipped: bad front matter: {exc}")
    return None


def shown(path: Path) -> str:
    """A file's path for a warning line: a project's folder or file name is its own to choose,
    so a line break or escape in it is shown, never written (the warning stays one line)."""
    return visible_line(str(path))


def first_line(body: str) -> str:
    """The body's first line with text, less any `#` heading marks: the description of a file
    whose front matter gives none."""
    lines = (line.strip().lstrip("#").strip() for line in body.splitlines() if line.strip())
    return next(lines, "")


def short_description(text: str) -> str:
    """A description as one line of at most DESCRIPTION_CAP characters: it is sent with every
    request (the skills in the system prompt, the subagents in the task tool's description),
    so a project's long one would cost every request."""
    text = " ".join(text.split())
    return text if len(text) <= DESCRIPTION_CAP else text[: DESCRIPTION_CAP - 1] + "…"


def read_document(path: Path, cap: int) -> Document:
    """A Markdown file's front matter and body from its first `cap` bytes (UTF-8, a bad byte
    replaced); OSError or FrontMatterError when it cannot be read."""
    with open_path(path) as handle:
        return parse_document(handle.read(cap).decode("utf-8", errors="replace"))


def is_regular_file(path: Path) -> bool:
    """Like Path.is_file, but False (not PermissionError) when the folder cannot be searched."""
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except (OSError, ValueError):
        return False


def parse_document(text: str) -> Document:
    """Split `---`-fenced front matter from the body; a file without one is all body."""
    text = text.removeprefix("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip() != "---":
        return Document({}, text)
    for end, line in enumerate(lines[1:], 1):
        if line.rstrip() in ("---", "..."):
            return Document(parse_fields(lines[1:end]), "".join(lines[end + 1 :]))
    raise FrontMatterError("the front matter has no closing --- line")


def parse_fields(lines: list[str]) -> dict[str, str]:
    """`key: value` lines (the subset the module docstring names) into a dict."""
    rows = [line.rstrip("\r\n") for line in lines]
    fields: dict[str, str] = {}
    index = 0
    while index < len(rows):
        row = rows[index]
        index += 1
        line = index + 1  # in the file, after the opening ---
        if not row.strip() or row.lstrip().startswith("#"):
            continue
        match = _KEY.match(row)
        if match is None or row[0] in " \t":
            raise FrontMatterError(f"line {line}: expected `key: value`, got {row.strip()!r}")
        key, raw = match.group(1), (match.group(2) or "").strip()
        more = _indented(rows, index)
        index += len(more)
        if key in fields:
            raise FrontMatterError(f"line {line}: {key} is given twice")
        fields[key] = _value(raw, more, line)
    return fields


def _indented(rows: list[str], start: int) -> list[str]:
    """The lines from `start` that belong to the value above: indented or blank."""
    taken: list[str] = []
    for row in rows[start:]:
        if row.strip() and row[0] not in " \t":
            break
        taken.append(row)
    while taken and not taken[-1].strip():
        taken.pop()
    return taken


def _value(raw: str, more: list[str], line: int) -> str:
    if _BLOCK.match(raw):
        return _block(more, folded=raw[0] == ">")
    if not raw:
        return "\n".join(more).strip("\n")  # a nested map or list, kept as text
    if raw[0] in "\"'":
        return _quoted(" ".join([raw, *(row.strip() for row in more)]), line)
    return " ".join(part for part in [_plain(raw), *(row.strip() for row in more)] if part)


def _block(rows: list[str], *, folded: bool) -> str:
    """A `|` or `>` block: its lines less their common indentation; `>` joins them."""
    indents = [len(row) - len(row.lstrip()) for row in rows if row.strip()]
    cut = min(indents, default=0)
    lines = [row[cut:] for row in rows]
    if not folded:
        return "\n".join(lines)
    paragraphs = "\n".join(lines).split("\n\n")
    return "\n".join(" ".join(p.split("\n")).strip() for p in paragraphs)


def _plain(raw: str) -> str:
    """A plain value up to a ` #` comment."""
    return raw.split(" #", 1)[0].rstrip()


def _quoted(raw: str, line: int) -> str:
    quote = raw[0]
    out: list[str] = []
    index = 1
    while index < len(raw):
        char = raw[index]
        if char == quote:
            if quote == "'" and raw[index + 1 : index + 2] == "'":  # '' is a quote
                out.append("'")
                index += 2
                continue
            rest = _plain(raw[index + 1 :]).strip()
            if rest:
                raise FrontMatterError(f"line {line}: text after the closing quote: {rest!r}")
            return "".join(out)
        if char == "\\" and quote == '"':
            escaped = raw[index + 1 : index + 2]
            out.append(_DOUBLE_ESCAPES.get(escaped, "\\" + escaped))
            index += 2
            continue
        out.append(char)
        index += 1
    raise FrontMatterError(f"line {line}: the quoted value has no closing {quote}")
