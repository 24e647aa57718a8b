"""grep, find and ls; grep and find run on ripgrep, a dependency."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from di_code.agent import AgentTool
from di_code.tools.builtin.find import FindTool
from di_code.tools.builtin.grep import GrepTool
from di_code.tools.builtin.support.ripgrep import MISSING_RIPGREP, find_ripgrep
from di_code.tools.common.workspace import Workspace
from tests.tools.conftest import error_of, run, text_of


@pytest.fixture
def tree(workspace: Path) -> Path:
    files = {
        ".gitignore": "*.log\nbuild/\n",
        "src/app.py": "def main():\n    print('hello')\n    return 0\n",
        "src/util.py": "HELLO = 1\n",
        "build/out.py": "hello\n",
        "debug.log": "hello\n",
        ".hidden/h.txt": "hello there\n",
        ".git/config": "hello\n",
        "README.md": "Hello world\n",
    }
    for name, text in files.items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(text)
    (workspace / "data.bin").write_bytes(b"hello\0binary")
    return workspace


@pytest.fixture
def backend() -> str:
    binary = find_ripgrep()
    assert binary is not None, "the ripgrep wheel is a dependency: rg must be installed"
    return binary


@pytest.fixture
def grep(tree: Path, backend: str) -> AgentTool:
    return GrepTool(Workspace.create(tree), backend)


@pytest.fixture
def find(tree: Path, backend: str) -> AgentTool:
    return FindTool(Workspace.create(tree), backend)


async def grep_text(grep: AgentTool, **params: object) -> str:
    return text_of(await run(grep, params))


async def test_grep_respects_gitignore_and_skips_binary_files(grep: AgentTool) -> None:
    assert await grep_text(grep, pattern="hello") == (
        ".hidden/h.txt:1: hello there\nsrc/app.py:2:     print('hello')"
    )


async def test_grep_ignore_case(grep: AgentTool) -> None:
    assert await grep_text(grep, pattern="hello", ignore_case=True) == (
        ".hidden/h.txt:1: hello there\nREADME.md:1: Hello world\n"
        "src/app.py:2:     print('hello')\nsrc/util.py:1: HELLO = 1"
    )


async def test_grep_context_lines(grep: AgentTool) -> None:
    assert await grep_text(grep, pattern="print", context=1) == (
        "src/app.py-1- def main():\nsrc/app.py:2:     print('hello')\nsrc/app.py-3-     return 0"
    )


async def test_grep_literal(grep: AgentTool) -> None:
    assert await grep_text(grep, pattern="print('", literal=True) == (
        "src/app.py:2:     print('hello')"
    )


async def test_grep_glob_and_path(grep: AgentTool) -> None:
    assert await grep_text(grep, pattern="ello", glob="*.md") == "README.md:1: Hello world"
    assert await grep_text(grep, pattern="=", path="src") == "src/util.py:1: HELLO = 1"
    assert await grep_text(grep, pattern="HELLO", glob="src/*.py") == "src/util.py:1: HELLO = 1"
    assert await grep_text(grep, pattern="hello", glob="*.py") == (
        "src/app.py:2:     print('hello')"
    )


async def test_grep_no_matches(grep: AgentTool) -> None:
    assert await grep_text(grep, pattern="nowhere to be found") == "No matches found"


async def test_grep_limit(grep: AgentTool) -> None:
    result = await run(grep, {"pattern": "hello", "limit": 1})
    assert text_of(result) == (
        ".hidden/h.txt:1: hello there\n\n"
        "[Match limit 1 reached. Use limit=2 for more, or narrow the pattern, path or glob.]"
    )
    assert result.details == {"limit_reached": 1}


async def test_grep_limit_keeps_the_last_matchs_context(grep: AgentTool, tree: Path) -> None:
    (tree / "src/util.py").write_text("hit 1\nafter\nhit 2\n")
    assert await grep_text(grep, pattern="hit", path="src/util.py", limit=1, context=1) == (
        "src/util.py:1: hit 1\nsrc/util.py-2- after\n\n"
        "[Match limit 1 reached. Use limit=2 for more, or narrow the pattern, path or glob.]"
    )


async def test_grep_cuts_long_lines_at_500_chars(grep: AgentTool, tree: Path) -> None:
    (tree / "long.txt").write_text("needle" + "x" * 600 + "\n")
    text = await grep_text(grep, pattern="needle")
    assert text == "long.txt:1: " + ("needle" + "x" * 600)[:500] + "..."


async def test_grep_bad_path(grep: AgentTool) -> None:
    assert await error_of(grep, {"pattern": "x", "path": "missing"}) == "Path not found: missing"


async def test_grep_invalid_regex_is_one_line(grep: AgentTool) -> None:
    message = await error_of(grep, {"pattern": "("})
    assert message.startswith(("Invalid regex: ", "grep failed: "))
    assert len(message.strip().splitlines()) == 1, message


async def test_find_globs_respect_gitignore(find: AgentTool) -> None:
    assert text_of(await run(find, {"pattern": "*.py"})) == "src/app.py\nsrc/util.py"
    assert text_of(await run(find, {"pattern": "*"})) == (
        ".gitignore\n.hidden/h.txt\nREADME.md\ndata.bin\nsrc/app.py\nsrc/util.py"
    )


async def test_find_slash_globs_are_relative_to_the_path(find: AgentTool) -> None:
    assert text_of(await run(find, {"pattern": "src/*.py"})) == "src/app.py\nsrc/util.py"
    assert text_of(await run(find, {"pattern": "app.*", "path": "src"})) == "src/app.py"
    assert text_of(await run(find, {"pattern": "src/*.py", "path": "src"})) == (
        "No files found matching src/*.py"
    )


async def test_find_limit(find: AgentTool) -> None:
    result = await run(find, {"pattern": "*.py", "limit": 1})
    assert text_of(result) == (
        "src/app.py\n\n[Result limit 1 reached. Use limit=2 for more, or narrow the pattern.]"
    )
    assert result.details == {"limit_reached": 1}


async def test_find_gitignore_rules(find: AgentTool, tree: Path) -> None:
    files = {
        "g/.gitignore": "/top.txt\n*.tmp\n!keep.tmp\ndeep/**/x.txt\ndir_only/\n",
        "g/top.txt": "", "g/sub/top.txt": "", "g/a.tmp": "", "g/keep.tmp": "",
        "g/deep/1/2/x.txt": "", "g/deep/y.txt": "", "g/dir_only/f": "", "g/file/dir_only": "",
    }  # fmt: skip
    for name, text in files.items():
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        (tree / name).write_text(text)
    assert text_of(await run(find, {"pattern": "*", "path": "g"})).split("\n") == [
        "g/.gitignore",
        "g/deep/y.txt",
        "g/file/dir_only",
        "g/keep.tmp",
        "g/sub/top.txt",
    ]


async def test_ls_sorted_with_dotfiles_and_folder_slashes(
    tools: dict[str, AgentTool], tree: Path
) -> None:
    assert text_of(await run(tools["ls"], {})) == (
        ".git/\n.gitignore\n.hidden/\nbuild/\ndata.bin\ndebug.log\nREADME.md\nsrc/"
    )
    assert text_of(await run(tools["ls"], {"path": "src"})) == "app.py\nutil.py"


async def test_ls_limit(tools: dict[str, AgentTool], tree: Path) -> None:
    result = await run(tools["ls"], {"limit": 2})
    assert (
        text_of(result) == ".git/\n.gitignore\n\n[Showing 2 of 8 entries. Use limit=8 to see all.]"
    )
    assert result.details == {"limit_reached": 2}


async def test_ls_empty_missing_and_file(tools: dict[str, AgentTool], workspace: Path) -> None:
    (workspace / "empty").mkdir()
    (workspace / "file.txt").write_text("")
    assert text_of(await run(tools["ls"], {"path": "empty"})) == "(empty directory)"
    assert await error_of(tools["ls"], {"path": "nope"}) == "Path not found: nope"
    assert await error_of(tools["ls"], {"path": "file.txt"}) == "Not a directory: file.txt"


@pytest.mark.parametrize(
    "pattern, expected",
    [
        ("\\[a]", "g/[a]"),
        ("[[]a]", "g/[a]"),
        ("\\*", "g/*"),
        ("{a}", "g/a"),
        ("*.{md,py}", "g/!x/c.md\ng/b.md\ng/c.py"),
        ("sub/**/x*", "g/sub/x1"),
        ("**/x*", "g/sub/x1"),
        ("!x/*.md", "g/!x/c.md"),  # a name's `!`, not a negation (as in `!*.md`)
    ],
)
async def test_find_reads_globs_as_ripgrep_does(
    find: AgentTool, tree: Path, pattern: str, expected: str
) -> None:
    for name in ["]", "[a]", "a", "*", "{a}", "1.txt", "sub/x1", "b.md", "c.py", "!x/c.md"]:
        (tree / "g" / name).parent.mkdir(parents=True, exist_ok=True)
        (tree / "g" / name).write_text("")
    assert text_of(await run(find, {"pattern": pattern, "path": "g"})) == expected


async def test_a_glob_never_brings_back_what_gitignore_leaves_out(
    find: AgentTool, grep: AgentTool
) -> None:
    """ripgrep lets a glob override .gitignore; grep and find keep .gitignore's word."""
    assert text_of(await run(find, {"pattern": "*.log"})) == "No files found matching *.log"
    assert text_of(await run(find, {"pattern": "build/*"})) == "No files found matching build/*"
    assert await grep_text(grep, pattern="hello", glob="*.log") == "No matches found"
    assert await grep_text(grep, pattern="hello", glob="{*.log,*.txt}") == (
        ".hidden/h.txt:1: hello there"
    )


@pytest.mark.parametrize("glob", ["[ab", "a\\", "a\n[", "src/[ab"])
async def test_an_invalid_glob_is_a_one_line_tool_error(
    find: AgentTool, grep: AgentTool, glob: str
) -> None:
    for message in (
        await error_of(find, {"pattern": glob}),
        await error_of(grep, {"pattern": "hello", "glob": glob}),
    ):
        assert message.startswith(("find failed: ", "grep failed: ")), message
        assert "error parsing glob" in message and "\n" not in message, message


async def test_without_ripgrep_grep_and_find_say_how_to_install_it(tree: Path) -> None:
    workspace = Workspace.create(tree)
    for tool, params in (
        (GrepTool(workspace, None), {"pattern": "hello"}),
        (FindTool(workspace, None), {"pattern": "*.py"}),
    ):
        message = await error_of(tool, params)
        assert message == MISSING_RIPGREP
    assert "\n" not in MISSING_RIPGREP and "pip install ripgrep" in MISSING_RIPGREP


async def test_a_name_with_a_newline_is_found_once_and_shown_escaped(
    find: AgentTool, grep: AgentTool, tree: Path
) -> None:
    (tree / "two\nlines.txt").write_text("hello\n")
    assert text_of(await run(find, {"pattern": "two*"})) == "two\\x0alines.txt"
    assert await grep_text(grep, pattern="hello", glob="two*") == "two\\x0alines.txt:1: hello"


def test_many_stars_take_linear_time(tmp_path: Path) -> None:
    """`**/a*a*…b` against a long name of `a`s, through find and grep: a backtracking matcher
    (a regex) needs minutes. Run in a child, so that a regression fails the timeout instead of
    hanging."""
    (tmp_path / ("a" * 60)).write_text("hello\n")
    script = textwrap.dedent(
        f"""
        import asyncio
        from di_code.ai import AbortController
        from di_code.tools.builtin.find import FindTool
        from di_code.tools.builtin.grep import GrepTool
        from di_code.tools.common.workspace import Workspace

        async def main():
            glob = "**/" + "a*" * 25 + "b"
            workspace = Workspace.create({str(tmp_path)!r})
            signal = AbortController().signal
            found = await FindTool(workspace).execute("1", {{"pattern": glob}}, signal)
            grep = {{"pattern": "hello", "glob": glob}}
            hits = await GrepTool(workspace).execute("2", grep, signal)
            print(found.content[0].text, "|", hits.content[0].text)

        asyncio.run(main())
        """
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    expected = "No files found matching **/" + "a*" * 25 + "b | No matches found\n"
    assert (run.stdout, run.stderr) == (expected, "")


@pytest.fixture
def latin1_name(tree: Path) -> str:
    """A file whose name is not UTF-8 (`café.txt` in Latin-1); as text, how it is shown."""
    with open(os.fsencode(tree) + b"/caf\xe9.txt", "wb") as file:
        file.write(b"hello\n")
    return "caf\\xe9.txt"


async def test_names_that_are_not_utf8_are_shown_escaped(
    find: AgentTool, grep: AgentTool, tools: dict[str, AgentTool], latin1_name: str
) -> None:
    found = text_of(await run(find, {"pattern": "*.txt"}))
    assert found == f".hidden/h.txt\n{latin1_name}"
    matches = await grep_text(grep, pattern="hello", path=".", glob="caf*")
    assert matches == f"{latin1_name}:1: hello"
    listed = text_of(await run(tools["ls"], {}))
    assert latin1_name in listed.split("\n")
    for text in (found, matches, listed):
        text.encode("utf-8")  # what the session file and the next request need


async def test_a_name_shown_escaped_can_be_given_back(
    tree: Path, tools: dict[str, AgentTool], latin1_name: str
) -> None:
    """The model reads, edits and lists `caf\\xe9.txt` as it was shown; a file really named
    with a backslash is still found by its own name first."""
    assert text_of(await run(tools["read"], {"path": latin1_name})) == "     1\thello"
    edit = {"path": latin1_name, "old_text": "hello", "new_text": "bonjour"}
    await run(tools["edit"], edit)
    assert read_bytes(os.fsencode(tree) + b"/caf\xe9.txt") == b"bonjour\n"
    (tree / latin1_name).write_text("literal\n")  # a name with a real backslash in it
    assert text_of(await run(tools["read"], {"path": latin1_name})) == "     1\tliteral"


def read_bytes(path: bytes) -> bytes:
    with open(path, "rb") as file:
        return file.read()
