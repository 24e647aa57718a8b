"""The permission rules against real bash: every corpus line is run by bash, in a scratch folder
with recording stubs first on PATH, and what bash really ran is compared with what the rules
said. The rules may be stricter than bash (deny a line that runs nothing); never looser:

- a line on which bash ran a program P (its stub recorded it, or its effect shows: `rm` took
  x away, `touch` made P) is denied by `deny = ["bash:P"]`;
- a line that the allow rules below cover ran none of the recorded programs.

The corpus is bash_corpus/forms.txt (README's forms, the catalogue's, issue 23's) and the
combinations generated here (wrappers x spellings of the program, wrappers x wrappers,
separators x payloads, code runners x quoting). Lines run in parallel, each in its own bash
(`bash -c`, as the bash tool runs them, without BASH_ENV).
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from di_code.tools.builtin.support.process import shell
from di_code.tools.policy.permissions import PermissionRules

CORPUS = Path(__file__).parent / "bash_corpus" / "forms.txt"
STUBS = ("rm", "id", "curl", "python3", "touch")
"""Programs replaced by a stub that records it ran (and does nothing else)."""

ALLOWED_PROGRAMS = """echo printf test [ read let ls cat true false xargs env timeout nice stdbuf
flock trap alias hash shopt mapfile readarray declare export command exec nohup time setsid
ionice find wait getopts unset jobs complete compgen script watch builtin local readonly
typeset source ."""
ALLOWED = PermissionRules.parse(
    allow=[f"bash:{program}" for program in ALLOWED_PROGRAMS.split()] + ["bash:git status"]
)
"""Allow rules for everything but the recorded programs: a line they cover must run none."""

WRAPPERS = [
    "",
    "env ",
    "env -i ",
    "env A=1 ",
    "env -- ",
    "command ",
    "builtin command ",
    "exec ",
    "nice ",
    "nice -n 5 ",
    "nohup ",
    "timeout 5 ",
    "timeout -s KILL 5 ",
    "timeout --kill-after=1 5 ",
    "time ",
    "stdbuf -oL ",
    "stdbuf --output L ",
    "setsid -w ",
    "ionice -c 3 ",
    "flock f ",
    "flock -w 1 f ",
    "X=1 ",
]
SPELLINGS = ["rm", "\\rm", "'rm'", '"rm"', "r''m", "/bin/rm", "/usr/bin/rm"]
SEPARATORS = [
    "true; {}",
    "true && {}",
    "false || {}",
    "true | {}",
    "{} & wait",
    "({})",
    "{{ {}; }}",
    "echo $({})",
    "echo `{}`",
    "cat <({})",
    "if true; then {}; fi",
    "f() {{ {}; }}; f",
    "true\n{}",
    "for i in 1; do {}; done",
]
PAYLOADS = ["rm x", "env rm x", "timeout 5 rm x", "echo x | xargs rm", "touch P"]
RUNNERS = [
    "bash -c {}",
    "sh -c {}",
    "dash -c {}",
    "rbash -c {}",
    "bash -c -- {}",
    "bash -ec {}",
    "eval {}",
    "flock f -c {}",
    "trap {} EXIT",
    "script -qc {} /dev/null",
    "env bash -c {}",
    "timeout 5 bash -c {}",
]
QUOTINGS = ["'rm x'", '"rm x"', "rm\\ x", "$'rm x'", "'rm'\\ x"]
NAME_TAKERS = [
    "printf -v {} y",
    "test -v {}",
    "read {} <<< y",
    "let {}=1",
    "declare {}=1",
    "mapfile {} < /dev/null",
    "echo $(( {} ))",
    "[[ {} -eq 1 ]]",
    "command printf -v {} y",
    "bash -c 'printf -v {} y'",
]
SUBSCRIPTS = [
    "'a[$(rm x)]'",
    '"a[\\$(rm x)]"',
    "a\\[\\$\\(rm\\ x\\)\\]",
    "'a['\"$(rm x)\"']'",
    "$'a[\\x24(rm x)]'",
    "'a[`rm x`]'",
    "'a[b[$(rm x)]]'",
    "'a'\\['$(rm x)]'",
]
FILLED = [(SEPARATORS, PAYLOADS), (RUNNERS, QUOTINGS), (NAME_TAKERS, SUBSCRIPTS)]
"""Forms x what goes in their `{}`: separators x payloads, code runners x quoting, builtins that
evaluate a name's subscript x spellings of a subscript that runs rm."""


def corpus() -> list[str]:
    written = [
        line.replace("\\n", "\n")
        for line in CORPUS.read_text().splitlines()
        if line and not line.startswith("# ")
    ]
    wrapped = [f"{wrapper}{spelling} x" for wrapper in WRAPPERS for spelling in SPELLINGS]
    wrapped += [f"{wrapper}touch P" for wrapper in WRAPPERS]
    wrapped += [f"{outer}{inner}rm x" for outer in WRAPPERS for inner in WRAPPERS[1::3]]
    filled = [form.format(text) for forms, texts in FILLED for form in forms for text in texts]
    return list(dict.fromkeys(written + wrapped + filled))


def make_stubs(folder: Path, log: Path) -> None:
    folder.mkdir()
    for name in STUBS:
        stub = folder / name
        stub.write_text(f'#!/bin/sh\nprintf "%s {name}\\n" "$(pwd -P)" >> {log}\n')
        stub.chmod(0o755)


def run_line(line: str, folder: Path, stubs: Path) -> None:
    """Run one line as the bash tool does (`bash -c`), in its own folder and session."""
    folder.mkdir()
    for name in ("x", "f", "list"):
        (folder / name).write_text("x\n")
    (folder / "e").write_text("rm x\n")
    env = {"PATH": f"{stubs}:{os.environ['PATH']}", "HOME": str(folder), "LANG": "C"}
    process = subprocess.Popen(
        [shell(), "-c", line],
        cwd=folder,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def what_ran(lines: list[str], root: Path) -> dict[str, set[str]]:
    """The recorded programs each line ran in real bash."""
    stubs, log = root / "stubs", root / "ran.log"
    make_stubs(stubs, log)
    folders = [root / f"line{index}" for index in range(len(lines))]
    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(run_line, lines, folders, [stubs] * len(lines)))
    by_folder: dict[str, set[str]] = defaultdict(set)
    if log.exists():
        for entry in log.read_text().splitlines():
            where, _, name = entry.rpartition(" ")
            by_folder[where].add(name)
    ran: dict[str, set[str]] = {}
    for line, folder in zip(lines, folders, strict=True):
        found = set(by_folder[str(folder.resolve())])
        if not (folder / "x").exists():
            found.add("rm")
        if (folder / "P").exists():
            found.add("touch")
        ran[line] = found
    return ran


def test_the_corpus_is_large_and_really_runs_the_stubs(tmp_path: Path) -> None:
    lines = corpus()
    assert len(lines) >= 300
    ran = what_ran(lines, tmp_path)
    ran_rm = [line for line in lines if "rm" in ran[line]]
    assert len(ran_rm) >= 200, "the control: most rm lines really remove x"
    assert all(ran[line] == {"rm"} for line in ("rm x", "/bin/rm x", "flock f rm x"))
    assert ran["echo hi"] == set()

    loose: list[str] = []
    for line in lines:
        for program in sorted(ran[line]):
            rules = PermissionRules.parse(deny=[f"bash:{program}"])
            if rules.decide("bash", {"command": line}) != "deny":
                loose.append(f"bash ran {program}, bash:{program} did not deny: {line!r}")
        if ran[line] and ALLOWED.decide("bash", {"command": line}) == "allow":
            loose.append(f"allowed, but bash ran {sorted(ran[line])}: {line!r}")
    assert loose == []
