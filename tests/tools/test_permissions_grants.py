"""What an "always" answer to a bash line grants (README, Permissions, The question): the
program, the options before its subcommand and the subcommand, or else the exact line. Each
attack is a harmless line a model may get "always" for, then a line it must still be asked
about; the grants are those `grant_offers` makes and `decide` weighs, as the gate does."""

from __future__ import annotations

import pytest

from di_code.tools.policy.permissions import command_prefix, grant_offers
from tests.support.grants import runs_unasked_after_always


@pytest.mark.parametrize(
    ("words", "prefix"),
    [
        (("git", "status", "-s"), "git status"),
        (("git", "--no-pager", "log", "--oneline"), "git --no-pager log"),
        (("git", "-C", "sub", "log"), "git -C sub log"),
        (("git", "--git-dir", ".git", "-P", "log"), "git --git-dir .git -P log"),
        (("git", "--git-dir=.git", "log"), "git --git-dir=.git log"),
        (("git", "-C", "-c", "log"), "git -C -c log"),  # -C's value, not git's -c
        (("cat", "README.md"), "cat README.md"),
        (("tool", "--opt=v", "build", "-x"), "tool --opt=v build"),
        (("tool", "--", "-x", "y"), "tool -- -x"),
        (("tool", "-", "y"), "tool -"),  # `-` is an operand (stdin), not an option
        # no subcommand, or no telling where it is: the exact line only
        (("git",), None),
        (("ls",), None),
        (("ls", "-la"), None),  # -a might take a value in some program: `-la VALUE sub`
        (("git", "--no-pager"), None),
        (("git", "-C", "sub"), None),
        (("git", "--"), None),
        (("git", "--frobnicate", "log"), None),  # an option git's grammar does not list
        (("git", "-Csub", "log"), None),  # git takes -C's value only as the next word
        (("git", "--no-pager=x", "log"), None),
        (("tool", "-x", "build"), None),  # -x may take `build` as its value
        (("tool", "--opt", "build"), None),
        (("tool", "-=x", "build"), None),
        (("tool", "--=x", "build"), None),
        (("git", ""), None),
        (("git", "config alias.x"), None),  # one word that reads as two
        (("git", "config\u00a0alias.x"), None),
    ],
)
def test_command_prefix(words: tuple[str, ...], prefix: str | None) -> None:
    assert command_prefix(words) == prefix


@pytest.mark.parametrize(
    ("first", "then"),
    [
        # the options before the subcommand are kept, and the subcommand
        ("git --no-pager log --oneline", "git config alias.x '!touch P'"),
        ("git --no-pager log --oneline", "git --no-pager config alias.x '!touch P'"),
        ("git -P --no-pager log", "git -P --no-pager config alias.x '!touch P'"),
        # a value is not the subcommand
        ("git -C sub log", "git -C sub config alias.x '!touch P'"),
        ("git --git-dir .git log", "git --git-dir .git config alias.x '!touch P'"),
        ("git -C --no-pager log", "git -C --no-pager config alias.x '!touch P'"),
        ("tool -x build", "tool -x deploy"),
        ("tool -x build", "tool -x build now"),
        # options with `=`
        ("git --git-dir=.git log", "git --git-dir=.git config alias.x '!touch P'"),
        ("git --work-tree=. --no-pager log", "git --work-tree=. --no-pager config a b"),
        ("git --no-pager=x log", "git --no-pager=x config alias.x '!touch P'"),
        ("tool --opt=v build", "tool --opt=v deploy"),
        ("tool --opt=v build", "tool build"),
        # `--`, the end of options, and no subcommand at all
        ("git --", "git config alias.x '!touch P'"),
        ("tool -- build", "tool -- deploy"),
        ("git", "git config alias.x '!touch P'"),
        ("git --no-pager", "git --no-pager config alias.x '!touch P'"),
        ("git -C sub", "git -C sub config alias.x '!touch P'"),
        # quoting: one word that reads as several, or none
        ("git ''", "git config alias.x '!touch P'"),
        ("git 'config alias.x'", "git config alias.x '!touch P'"),
        ("git 'config\u00a0alias.x'", "git config alias.x '!touch P'"),
        ("git 'config\talias.x'", "git config alias.x '!touch P'"),
        # a subcommand that looks like an option
        ("git --help", "git config alias.x '!touch P'"),
        ("git --version", "git config alias.x '!touch P'"),
        ("git -v", "git config alias.x '!touch P'"),
        # Unicode twins of `-`: an ordinary word to git, so they are its subcommand
        ("git \u2010\u2010no-pager log", "git config alias.x '!touch P'"),  # hyphen
        ("git \u2014no-pager log", "git config alias.x '!touch P'"),  # em dash
        ("git \uff0d\uff0dno-pager log", "git config alias.x '!touch P'"),  # full-width
        ("git \u2212C sub log", "git config alias.x '!touch P'"),  # minus sign
        # through a wrapper, each command keeps its own prefix
        ("timeout 5 git --no-pager log", "timeout 5 git config alias.x '!touch P'"),
    ],
)
def test_always_for_a_harmless_line_does_not_grant_another_subcommand(
    first: str, then: str
) -> None:
    assert not runs_unasked_after_always(first, then)


@pytest.mark.parametrize(
    ("first", "then"),
    [
        ("git status -s", "git status"),
        ("git --no-pager log --oneline", "git --no-pager log -5"),
        ("git -C sub log", "git -C sub log --stat"),
        ("git --git-dir=.git log", "git --git-dir=.git log -1"),
        ("tool --opt=v build", "tool --opt=v build --fast"),
        ("tool -- build", "tool -- build x"),
        ("git \u2010\u2010no-pager log", "git \u2010\u2010no-pager status"),  # git runs neither
        ("timeout 5 git --no-pager log", "timeout 5 git --no-pager log -1"),
    ],
)
def test_always_still_covers_the_same_subcommand_with_other_arguments(
    first: str, then: str
) -> None:
    assert runs_unasked_after_always(first, then)


@pytest.mark.parametrize(
    "command",
    ["ls -la", "git --no-pager", "tool -x build", "git 'config alias.x'", "git --help"],
)
def test_where_the_subcommand_cannot_be_told_the_exact_line_is_offered(command: str) -> None:
    [offer] = grant_offers("bash", {"command": command})
    assert offer.label == "this exact command only"
    assert runs_unasked_after_always(command, f" {command} ")
