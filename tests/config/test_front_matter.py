"""The front-matter reader shared by command, subagent and skill files: the YAML subset they
use, where the files are found, and the one warning line a bad file gets."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from di_code.config.front_matter import (
    Document,
    FrontMatterError,
    first_line,
    markdown_files,
    parse_document,
    read_or_warn,
    search_folders,
)

SKILL = """\ufeff---
name: pdf-tools
description: >
  Fill PDF forms and
  extract their text.

  Use for any .pdf file.
argument-hint: "[file] \\"quoted\\""
note: 'it''s fine' # a comment
literal: |
  line one
    indented two
plain: one
  two
metadata:
  author: someone
  tags: [a, b]
---
# Body

Steps here.
"""


def test_the_subset_is_read() -> None:
    document = parse_document(SKILL)
    assert document.fields == {
        "name": "pdf-tools",
        "description": "Fill PDF forms and extract their text.\nUse for any .pdf file.",
        "argument-hint": '[file] "quoted"',
        "note": "it's fine",
        "literal": "line one\n  indented two",
        "plain": "one two",
        "metadata": "  author: someone\n  tags: [a, b]",
    }
    assert document.body == "# Body\n\nSteps here.\n"


def test_no_front_matter_is_all_body() -> None:
    assert parse_document("Review $ARGUMENTS\n").fields == {}
    assert parse_document("Review $ARGUMENTS\n").body == "Review $ARGUMENTS\n"
    assert parse_document("---\n---\nbody").fields == {}


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("---\nname: x\n", "no closing --- line"),
        ("---\njust words\n---\n", "line 2: expected `key: value`"),
        ('---\nname: x\ndescription: "open\n---\n', 'line 3: the quoted value has no closing "'),
        ("---\nname: 'a' b\n---\n", "line 2: text after the closing quote"),
        ("---\nname: a\nname: b\n---\n", "line 3: name is given twice"),
    ],
)
def test_bad_front_matter_says_why(text: str, reason: str) -> None:
    with pytest.raises(FrontMatterError, match=re.escape(reason)):
        parse_document(text)


def test_folders_are_searched_nearest_first_up_to_the_repository_root(tmp_path: Path) -> None:
    repo = tmp_path.resolve() / "repo"
    (repo / ".git").mkdir(parents=True)
    workspace = repo / "pkg"
    workspace.mkdir()
    kinds = [Path(".a/kind"), Path(".b/kind")]
    user = [tmp_path / "user/kind", workspace / ".a/kind"]  # the second is a project one too
    assert search_folders(workspace, kinds, user) == [
        workspace / ".a/kind",
        workspace / ".b/kind",
        repo / ".a/kind",
        repo / ".b/kind",
        tmp_path / "user/kind",
    ]


def test_only_regular_markdown_files_are_found_by_name(tmp_path: Path) -> None:
    flat, nested = tmp_path / "flat", tmp_path / "nested"
    for path in (flat / "b.md", flat / "a.md", flat / "notes.txt", nested / "x/SKILL.md"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("text")
    (flat / "folder.md").mkdir()
    (nested / "empty").mkdir()
    (nested / "file").write_text("not a folder")
    assert list(markdown_files([flat, tmp_path / "missing"])) == [flat / "a.md", flat / "b.md"]
    assert list(markdown_files([nested], inside="SKILL.md")) == [nested / "x/SKILL.md"]


def test_a_file_that_cannot_be_used_is_one_warning_line(tmp_path: Path) -> None:
    def title(path: Path, document: Document) -> str:
        if "title" not in document.fields:
            raise FrontMatterError("no title")
        return document.fields["title"]

    good, untitled, broken = tmp_path / "good.md", tmp_path / "untitled.md", tmp_path / "bad.md"
    good.write_text("---\ntitle: Hello\n---\nbody")
    untitled.write_text("just a body")
    broken.write_text("---\ntitle: 'open\n---\n")
    warnings: list[str] = []
    found = [
        read_or_warn(path, 1024, title, warnings, tmp_path) for path in (good, untitled, broken)
    ]
    assert found == ["Hello", None, None]
    assert warnings == [
        f"{untitled}: skipped: bad front matter: no title",
        f"{broken}: skipped: bad front matter: line 2: the quoted value has no closing '",
    ]


def test_the_first_line_with_text_describes_a_file_without_a_description() -> None:
    assert first_line("\n\n## Review the diff\nthen more") == "Review the diff"
    assert first_line("  \n") == ""
