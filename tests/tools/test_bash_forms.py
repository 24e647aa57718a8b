"""The catalogue of bash forms that run code from their arguments (bash_forms, bash_wrappers),
through the rules: each form with code the parser cannot see matches every deny rule and is
covered by no allow rule; its harmless spellings stay allowed. Forms of programs this machine
may lack (busybox, zsh, parallel, su) are checked here; test_bash_differential runs the rest."""

from __future__ import annotations

import pytest

from di_code.tools.policy.permissions import PermissionRules, grant_offers

DENY_RM = PermissionRules.parse(allow=["bash"], deny=["bash:rm"])

RUNS_RM = [
    "busybox rm x",
    "busybox sh -c 'rm x'",
    "zsh -c 'rm x'",
    "ksh -c 'rm x'",
    "mksh -ec 'rm x'",
    "fish -c 'rm x'",
    "bash -xec 'rm x'",
    "bash --rcfile f -c 'rm x'",
    "bash +o posix -c 'rm x'",
    "parallel rm ::: x",
    "parallel 'rm {}' ::: x",
    "su -c 'rm x'",
    "su root -c 'rm x'",
    "su --command='rm x'",
    "script -c 'rm x' log",
    "watch rm x",
    "watch -n 5 'ls; rm x'",
    "watch -x rm x",
    "chroot / rm x",
    "taskset 03 rm x",
    "chrt -f 10 rm x",
    "unbuffer rm x",
    "xargs -a list rm",
    "GIT_PAGER=rm git log",
    "EDITOR=/bin/rm git commit",
    "xargs -I % sh -c %",
    "xargs -tI% bash -c %",
    "xargs -i sh -c {}",
    "xargs --replace=Q sh -c Q",
    "find . -exec sh -c {} \\;",
    "find . -exec {} \\;",
    "find . -execdir env {} \\;",
]


@pytest.mark.parametrize("command", RUNS_RM)
def test_a_catalogued_runner_is_read_to_its_command(command: str) -> None:
    assert DENY_RM.decide("bash", {"command": command}) == "deny"


HIDDEN = [
    "busybox",
    "parallel ::: 'rm x'",
    "parallel -j2 echo ::: x",
    "su - root",
    "runuser -u nobody rm x",
    "script log",
    "env -S 'rm x'",
    "env --split-string='rm x'",
    "env -vS'rm x'",
    "env PROMPT_COMMAND='rm x' bash -i",
    "env LD_PRELOAD=./evil.so ls",
    "sudo BASH_ENV=./e bash -c true",
    "xargs --unknown-option rm",
    "timeout --unknown 5 rm x",
    "stdbuf -X rm x",
    "chroot /",
    "alias ll='ls -l'",
    "shopt -s expand_aliases",
    "trap 'echo bye' EXIT",
    "hash -p /bin/rm ls",
    "complete -C 'echo' x",
    "mapfile -C 'echo' a < /dev/null",
    "bind -x '\"\\C-x\": rm x'",
    "jobs -x rm x",
    "enable -f ./x.so rm",
    "fc -s",
    "wait -p v",
    "let i++",
    "PS1='$(rm x)'",
    "export ENV=./e",
    "declare -i n",
    "local -n ref=x",
    "unset 'a[$(rm x)]'",
    "echo ${!name}",
    "echo ${s:n:1}",
    "echo ${v@P}",
    "[[ $n -gt 3 ]]",
    "[[ -v a[i] ]]",
    "(( n > 3 ))",
    "for ((i=0; i<3; i++)); do echo; done",
    "echo ${a[i]}",
    "x=$'a[\\x24(rm x)]'; printf -v \"$x\" y",
    'printf -v "$name" y',
    'read "$name" < /dev/null',
    # git's -c after an option whose value is the next word: still before the subcommand
    "git --namespace n -c alias.r='!rm x' r",
    "git --git-dir .git -c alias.r='!rm x' r",
    "git --frobnicate -c alias.r='!rm x' r",  # an option git's grammar does not list
]


@pytest.mark.parametrize("command", HIDDEN)
def test_a_hidden_form_matches_every_deny_rule(command: str) -> None:
    assert DENY_RM.decide("bash", {"command": command}) == "deny"
    other = PermissionRules.parse(deny=["bash:nothing-like-it"])
    assert other.decide("bash", {"command": command}) == "deny"


@pytest.mark.parametrize("command", HIDDEN)
def test_no_allow_rule_covers_a_hidden_form(command: str) -> None:
    words = command.split()
    rules = PermissionRules.parse(allow=[f"bash:{words[0]}", "bash:echo", "bash:rm"])
    assert rules.decide("bash", {"command": command}) is None
    assert grant_offers("bash", {"command": command}) == ()


HARMLESS = [
    ("echo hi", "echo"),
    ("printf '%s\\n' hello", "printf"),
    ("test -f x", "test"),
    ("timeout 5 echo hi", "timeout"),
    ("timeout --signal=KILL 5 echo hi", "timeout"),
    ("xargs --max-args 1 echo", "xargs"),
    ("xargs -tn1 echo", "xargs"),
    ("stdbuf --output L echo hi", "stdbuf"),
    ("flock f echo hi", "flock"),
    ("nice -5 echo hi", "nice"),
    ("env -u HOME echo hi", "env"),
    ("env A=1 echo hi", "env"),
    ("busybox echo hi", "busybox"),
    ("xargs -I % echo %", "xargs"),
    ("git -C . status", "git"),
    ("git --git-dir=.git --no-pager -C . status", "git"),
    ("hash -r && echo hi", "hash"),
    ("echo hi & wait", "wait"),
]


@pytest.mark.parametrize(("command", "wrapper"), HARMLESS)
def test_a_harmless_spelling_stays_allowed_and_reads_its_command(
    command: str, wrapper: str
) -> None:
    allowed = PermissionRules.parse(allow=[f"bash:{wrapper}", "bash:echo", "bash:printf"])
    assert allowed.decide("bash", {"command": command}) == "allow"
    assert DENY_RM.decide("bash", {"command": command}) == "allow"
    assert PermissionRules.parse(deny=["bash:echo"]).decide("bash", {"command": command}) == (
        "deny" if "echo" in command else None
    )


@pytest.mark.parametrize(
    "command",
    [
        "printf -v v hello",
        "read v < /dev/null",
        "mapfile a < /dev/null",
        "getopts ab v",
    ],
)
def test_a_builtin_that_changes_the_shell_is_never_covered(command: str) -> None:
    """`printf -v PATH .; ls` would run ./ls under rules for printf and ls."""
    program = command.split()[0]
    rules = PermissionRules.parse(allow=[f"bash:{program}", "bash:ls"])
    assert rules.decide("bash", {"command": command}) is None
    assert DENY_RM.decide("bash", {"command": command}) == "allow"


@pytest.mark.parametrize(
    "command",
    [
        "rm -f notes.txt",
        "git status && rm x",
        "git -C . push",
        "git reset --hard",
        "python3 x.py",
        "python3.12 -c 'print(1)'",
        "node index.js",
        "make test",
        "npm run build",
        "curl -o f http://example.com",
        "timeout 5 mv a b",
        "echo x | xargs rm",
        "find . -delete",
        "find . -exec ls {} +",
        "find . -fprintf notes.txt x",
        # programs with subcommands, an option before it
        "docker --context x run img",
        "kubectl -n ns delete pod p",
        "npm --prefix x run build",
        "cargo +nightly build",
    ],
)
def test_always_for_a_destructive_program_or_an_interpreter_is_that_line_only(
    command: str,
) -> None:
    [offer] = grant_offers("bash", {"command": command})
    assert offer.label == "this exact command only"
    rules = PermissionRules()
    assert rules.decide("bash", {"command": command}, offer.rules) == "allow"
    assert rules.decide("bash", {"command": f" {command} "}, offer.rules) == "allow"
    assert rules.decide("bash", {"command": f"{command} y"}, offer.rules) is None
    assert rules.decide("bash", {"command": f"{command}; ls"}, offer.rules) is None


def test_a_deny_rule_still_wins_over_an_exact_grant() -> None:
    [offer] = grant_offers("bash", {"command": "rm -f notes.txt"})
    rules = PermissionRules.parse(deny=["bash:rm"])
    assert rules.decide("bash", {"command": "rm -f notes.txt"}, offer.rules) == "deny"
