"""The Python walk against git itself: random trees with random .gitignore files are built in a
real temporary git repository, and the walk must list exactly the files that
`git ls-files --others --exclude-standard` lists. Names and patterns are drawn from a small
alphabet full of the characters globs treat specially (`*?[]!^-\\#`, spaces), so escapes,
bracket expressions and `**` meet every rule of git's wildmatch."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from di_code.tools.builtin.support.ignore import is_ignored, load_ignore, walk_files

GIT = shutil.which("git")
pytestmark = pytest.mark.skipif(GIT is None, reason="git is not installed: nothing to compare to")

NAME_CHARS = ["a", "b", "a", "b", "*", "?", "[", "]", "!", "\\", "-", " ", "#", "^", ".", ":"]
PATTERN_PIECES = [
    *("a", "b", "ab", "*", "**", "?", "/", ".", "-", " ", "!", "#", "\\", "[", "]", "^", ":"),
    *("[a-b]", "[!a]", "[^b]", "[]]", "[]a]", "[\\]]", "[a-]", "[-a]", "[b-a]", "[\\a-b]"),
    *("[[:alpha:]]", "[[:punct:]]", "[[:space:]]", "[[:bogus:]]", "[[:]", "[[]", "[!]"),
    *("[.-0]", "[!a-b]", "[[:alpha:]-]"),
    *("\\*", "\\[", "\\]", "\\?", "\\!", "\\#", "\\\\", "\\ ", "**/", "/**", "/**/"),
]


def name() -> st.SearchStrategy[str]:
    return (
        st.lists(st.sampled_from(NAME_CHARS), min_size=1, max_size=3)
        .map("".join)
        .filter(lambda text: text not in (".", "..", ".git"))
    )


def pattern_line() -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(PATTERN_PIECES), min_size=1, max_size=5).map("".join)


@st.composite
def trees(draw: st.DrawFn) -> tuple[list[str], dict[str, str]]:
    """File paths, and .gitignore texts keyed by the folder they sit in ("" for the root)."""
    paths = draw(st.lists(st.lists(name(), min_size=1, max_size=3), min_size=1, max_size=8))
    files: list[str] = []
    for parts in paths:
        path = "/".join(parts)
        prefixes = {"/".join(parts[:i]) for i in range(1, len(parts))}
        clash = any(f in prefixes or f.startswith(path + "/") or f == path for f in files)
        if not clash:
            files.append(path)
    folders = sorted({""} | {f.rsplit("/", 1)[0] for f in files if "/" in f})
    ignores = {}
    for folder in draw(st.lists(st.sampled_from(folders), min_size=1, max_size=3, unique=True)):
        lines = draw(st.lists(pattern_line(), min_size=1, max_size=4))
        ignores[folder] = "\n".join(lines) + draw(st.sampled_from(["\n", "", "\r\n"]))
    return files, ignores


def git(root: Path, *args: str, stdin: bytes = b"", codes: tuple[int, ...] = (0,)) -> bytes:
    """Run git in `root` with no user or system configuration (no global excludes file)."""
    home = root.parent / "home"
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
    }
    run = subprocess.run(
        [GIT or "git", *args], cwd=root, env=env, input=stdin, capture_output=True, timeout=30
    )
    assert run.returncode in codes, run.stderr
    return run.stdout


def build(root: Path, files: list[str], ignores: dict[str, str]) -> None:
    git(root, "init", "-q", "--template=")  # no template: no .git/info/exclude
    for path in files:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text("x")
    for folder, text in ignores.items():
        (root / folder / ".gitignore").write_text(text)


@settings(
    max_examples=300
)  # fmt: skip
@given(trees())
def test_the_walk_lists_what_git_lists(tree: tuple[list[str], dict[str, str]]) -> None:
    files, ignores = tree
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        build(root, files, ignores)
        listed = git(root, "ls-files", "-z", "--others", "--exclude-standard")
        expected = sorted(name for name in listed.decode().split("\0") if name)
        walked = sorted(path.relative_to(root).as_posix() for path in walk_files(root))
        assert walked == expected, {folder: text for folder, text in ignores.items()}


@settings(max_examples=200)
@given(pattern_line(), st.lists(st.lists(name(), min_size=1, max_size=3), min_size=1))
def test_each_rule_decides_as_git_check_ignore_does(line: str, paths: list[list[str]]) -> None:
    """One rule, many paths, one git call. `git check-ignore` takes a path as ignored when the
    rule matches it or one of its folders; the paths are files (they need not exist)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        git(root, "init", "-q", "--template=")
        (root / ".gitignore").write_text(line + "\n")
        names = sorted({"/".join(parts) for parts in paths})
        stdin = "".join(f"./{n}\0" for n in names).encode()  # `./`: `:!a` is no pathspec magic
        out = git(root, "check-ignore", "--no-index", "-z", "--stdin", stdin=stdin, codes=(0, 1))
        expected = sorted(n.removeprefix("./") for n in out.decode().split("\0") if n)
        rules = [ignore] if (ignore := load_ignore(root)) else []

        def ignored(relative: str) -> bool:
            parts = relative.split("/")
            folders = ["/".join(parts[:i]) for i in range(1, len(parts))]
            in_ignored_folder = any(is_ignored(root / f, True, rules) for f in folders)
            return in_ignored_folder or is_ignored(root / relative, False, rules)

        assert [n for n in names if ignored(n)] == expected, line
