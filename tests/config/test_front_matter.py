"""The front-matter reader shared by command files and SKILL.md: the YAML subset they use."""

from __future__ import annotations

import re

import pytest

from di_code.config.front_matter import FrontMatterError, parse_document

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
