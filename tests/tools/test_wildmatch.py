"""Globs read as git's wildmatch reads them (the differential test against git itself is in
test_gitignore_vs_git.py); here the cases worth naming, and the time a glob may take."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from di_code.tools.builtin.support.wildmatch import Glob, GlobError, parse_glob
from tests.tools.test_gitignore_vs_git import name, pattern_line


@pytest.mark.parametrize(
    "glob, path, expected",
    [
        ("\\[a]", "[a]", True),  # an escaped `[` is a literal, not a bracket expression
        ("\\[a]", "a", False),
        ("\\*", "*", True),
        ("\\*", "x", False),
        ("[\\]]", "]", True),  # `\]` inside brackets is a `]`
        ("[]]", "]", True),  # a `]` right after `[` belongs to the set
        ("[!]]", "a", True),
        ("[!]]", "]", False),
        ("[^a]", "b", True),
        ("[a-]", "-", True),
        ("[b-a]", "a", False),  # a reversed range is empty, and no error...
        ("[b-a]", "b", True),  # ...but its start was read as a literal first, as in git
        ("[\\a-c]", "b", True),  # the escaped start of a range still starts it
        ("[a-c-e]", "-", True),  # after a range a `-` is a literal
        ("[[:digit:]x]", "7", True),
        ("[[:digit:]x]", "y", False),
        ("[[:]", ":", True),  # `[:` without `:]` is a plain `[` and `:`
        ("a?c", "a/c", False),
        ("a[/]c", "a/c", False),  # a bracket expression never matches `/`
        ("a*", "ab/c", False),
        ("a/**", "a/b/c", True),
        ("a/**", "a", False),
        ("a/**/b", "a/b", True),
        ("a/**/b", "a/x/y/b", True),
        ("a/**/b", "a/xb", False),
        ("**/b", "b", True),
        ("**/b", "ab", False),
        ("a**b", "a/b", False),  # `**` inside a segment is a `*`
        ("a/b**", "a/bc/d", True),  # git's quirk: `**` right after the literal prefix
        ("a/b**/c", "a/bc", True),
        ("***/b", "x/y/b", True),
    ],
)
def test_git_semantics(glob: str, path: str, expected: bool) -> None:
    assert parse_glob(glob).matches(path) is expected


@pytest.mark.parametrize(
    "glob, reason",
    [
        ("[ab", "a '[' is never closed"),
        ("[\\", "a '[' is never closed"),
        ("[[:alpha:]", "a '[' is never closed"),
        ("[[:nope:]]", "[:nope:] is not a character class"),
        ("ab\\", "it ends with a lone backslash"),
    ],
)
def test_globs_git_cannot_match_are_errors(glob: str, reason: str) -> None:
    with pytest.raises(GlobError, match=f"^{reason}$".replace("[", "\\[")):
        parse_glob(glob)


def test_many_stars_take_linear_time(tmp_path: Path) -> None:
    """`**/a*a*…b` against a long name of `a`s, through find and grep with both backends: a
    backtracking matcher (a regex) needs minutes, with the GIL held so that not even Ctrl-C
    gets through. Run in a child, so that a regression fails the timeout instead of hanging."""
    (tmp_path / ("a" * 60)).write_text("hello\n")
    script = textwrap.dedent(
        f"""
        import asyncio
        from di_code.ai import AbortController
        from di_code.tools.builtin.find import FindTool
        from di_code.tools.builtin.grep import GrepTool
        from di_code.tools.builtin.support.ripgrep import find_ripgrep
        from di_code.tools.builtin.support.workspace import Workspace

        async def main():
            glob = "**/" + "a*" * 25 + "b"
            workspace = Workspace.create({str(tmp_path)!r})
            for backend in (find_ripgrep(), None):
                signal = AbortController().signal
                found = await FindTool(workspace, backend).execute("1", {{"pattern": glob}}, signal)
                grep = GrepTool(workspace, backend)
                hits = await grep.execute("2", {{"pattern": "hello", "glob": glob}}, signal)
                print(found.content[0].text, "|", hits.content[0].text)

        asyncio.run(main())
        """
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    expected = "No files found matching **/" + "a*" * 25 + "b | No matches found\n"
    assert (run.stdout, run.stderr) == (expected * 2, "")


@settings(max_examples=500)
@given(pattern_line(), st.lists(st.lists(name(), min_size=1, max_size=3), min_size=1))
@example("a**/", [["a"]])  # the optional `**/` at the end: the DFA once required the `/`
@example("a**/b", [["ab"]])
def test_the_regex_and_the_dfa_agree(pattern: str, paths: list[list[str]]) -> None:
    try:
        glob = parse_glob(pattern)
    except GlobError:
        assume(False)  # not a pattern: Hypothesis counts it, and fails if most are not
    regex, dfa = Glob.of(glob.tokens, "regex"), Glob.of(glob.tokens, "dfa")
    for path in ("/".join(parts) for parts in paths):
        assert regex.matches(path) == dfa.matches(path), path
