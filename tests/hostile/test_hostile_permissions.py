"""Permissions attacked from README alone ("Permissions", and what Chat, Config files and Trust
say asks and is allowed): a model's lines shaped to pass an allow rule or to slip past a deny
rule, paths that reach a file or a protected folder by another spelling, a project that widens
its own permissions, and commands built to stall the gate. Each runs a real `di-code run`
against the loopback model server, in a real workspace, and looks at what really happened."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pexpect
import pytest

from tests.cli.conftest import RunDiCode
from tests.support.approval import answer
from tests.support.chat import DI_CODE, needs_di_code, open_chat, spawn_env
from tests.support.llm_server import WHOLE, LLMServer, ToolCallSpec, Turn
from tests.support.rule_runs import calls, results, user_rules
from tests.support.screen import Screen


def git_repo(folder: Path) -> None:
    subprocess.run(["git", "init", "-q", "-b", "main", str(folder)], check=True)


# --- the gate must not stall on a hostile command ---------------------------------------------


def test_a_command_full_of_brackets_and_dollars_is_decided_without_stalling(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    """The catalogue looks for code in subscripts (`a[$(id)]`) with regular expressions; a line
    of 30 KB of `[$` made them backtrack for hours, on the event loop, with no Esc possible."""
    command = "echo '" + "[$" * 15_000 + "' > /dev/null; touch ran.txt"
    [call] = calls(llm_server, "bash", [{"command": command}])
    done = run_di_code("run", "--yes", "go")  # the fixture's 60 s timeout fails the stall
    assert done.returncode == 0, done.stderr
    assert (workspace / "ran.txt").exists(), results(llm_server)[call]


# --- "always" grants -----------------------------------------------------------------------


def run_on_terminal(server: LLMServer, workspace: Path, *args: str) -> tuple[pexpect.spawn, Screen]:
    """`di-code run` in ask mode on a real terminal, where it asks each question."""
    child = pexpect.spawn(
        str(DI_CODE),
        ["run", "--model", "openai/test-model", *args, "go"],
        cwd=str(workspace),
        env=spawn_env(server),
        dimensions=(30, 100),
        encoding="utf-8",
        timeout=20,
    )
    return child, Screen(child, 30)


def always_then(server: LLMServer, workspace: Path, first: str, then: str) -> Screen:
    """Answer "always" to `first`, and "no" to `then` if it is asked; the run's screen."""
    server.script(
        Turn(tool_calls=(ToolCallSpec("bash", {"command": first}, "c1"),)),
        Turn(tool_calls=(ToolCallSpec("bash", {"command": then}, "c2"),)),
        Turn(text="both done"),
    )
    child, screen = run_on_terminal(server, workspace)
    try:
        screen.wait_for(f"? bash: {first}")
        screen.wait_for("don't ask again for")
        child.sendline("a")
        screen.wait_until(
            lambda _: f"? bash: {then}" in screen.text or "both done" in screen.text,
            "the second command asked, or the run's answer",
        )
        if "both done" not in screen.text:
            screen.wait_for("[N]o", after=f"? bash: {then}")
            child.sendline("n")
            screen.wait_for("both done")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    return screen


@needs_di_code
@pytest.mark.parametrize(
    ("first", "then"),
    [
        ("git --no-pager log --oneline", "git clean -fd"),
        ("find . -name '*.md'", "find . -name keep.txt -delete"),
    ],
)
def test_always_for_a_harmless_line_never_runs_a_destructive_one_unasked(
    llm_server: LLMServer, workspace: Path, first: str, then: str
) -> None:
    """README: "always" grants the program and its subcommand, and a destructive line only
    exactly ("never another rm"). `git --no-pager log` has no subcommand where one is looked
    for, so it granted all of `git`, and `git clean -fd` then removed files unasked; `find .`
    granted `find`, and `find -delete` ran."""
    git_repo(workspace)
    (workspace / "keep.txt").write_text("untracked work\n")
    always_then(llm_server, workspace, first, then)
    assert (workspace / "keep.txt").read_text() == "untracked work\n"


@needs_di_code
def test_always_for_git_with_an_option_before_its_subcommand_does_not_grant_git_config(
    llm_server: LLMServer, workspace: Path
) -> None:
    """The same grant let `git config` plant an alias that runs any command (`git x` then runs
    it); README promises the program and its subcommand, here `git log`, not all of git."""
    git_repo(workspace)
    always_then(
        llm_server, workspace, "git --no-pager log --oneline", "git config alias.x '!touch P'"
    )
    config = (workspace / ".git" / "config").read_text()
    assert "touch P" not in config


# --- file rules and protected paths --------------------------------------------------------


@pytest.mark.parametrize(
    "spelling",
    [
        "@secrets.env",
        " secrets.env",
        "{workspace}/secrets.env",
        "link/secrets.env",
        "sub/../secrets.env",
    ],
)
def test_a_deny_rule_on_a_file_holds_for_every_spelling_of_its_path(
    run_di_code: RunDiCode,
    llm_server: LLMServer,
    workspace: Path,
    di_code_home: Path,
    spelling: str,
) -> None:
    """README: `write:PATH` matches calls on that file. The write tool strips a leading `@` and
    spaces, takes an absolute path and follows a link; the rule compared the text alone."""
    user_rules(di_code_home, deny=["write:secrets.env"])
    (workspace / "secrets.env").write_text("TOKEN=mine\n")
    (workspace / "sub").mkdir()
    (workspace / "link").symlink_to(".")
    path = spelling.format(workspace=workspace)
    [call] = calls(llm_server, "write", [{"path": path, "content": "TOKEN=theirs\n"}])
    done = run_di_code("run", "--yes", "go")
    assert done.returncode == 0, done.stderr
    assert "deny rule" in results(llm_server)[call]
    assert (workspace / "secrets.env").read_text() == "TOKEN=mine\n"


@pytest.mark.parametrize(
    "path",
    [
        "hooks/pre-commit",  # hooks -> .git/hooks, a link the repository ships
        "sub/../.git/hooks/pre-commit",
        "@.git/hooks/pre-commit",
        "{workspace}/.git//hooks/./pre-commit",
        "settings/config.toml",  # settings -> .di-code
        "servers.json",  # servers.json -> .mcp.json
    ],
)
def test_accept_edits_never_writes_a_protected_path_reached_by_another_spelling(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, path: str
) -> None:
    """README: in accept-edits, write always asks (refused without a terminal) before changing
    a git directory, `.di-code/` or `.mcp.json`, which name programs that run later."""
    git_repo(workspace)
    (workspace / "sub").mkdir()
    (workspace / ".di-code").mkdir()
    (workspace / ".mcp.json").write_text("{}\n")
    (workspace / "hooks").symlink_to(".git/hooks")
    (workspace / "settings").symlink_to(".di-code")
    (workspace / "servers.json").symlink_to(".mcp.json")
    target = path.format(workspace=workspace)
    payload = '#!/bin/sh\ntouch "$HOME/owned"\n'
    [call] = calls(llm_server, "write", [{"path": target, "content": payload}])
    done = run_di_code("run", "--permission-mode", "accept-edits", "go")
    assert done.returncode == 0, done.stderr
    assert "needs the user's approval" in results(llm_server)[call]
    assert not (workspace / ".git" / "hooks" / "pre-commit").exists()
    assert not (workspace / ".di-code" / "config.toml").exists()
    assert (workspace / ".mcp.json").read_text() == "{}\n"


def test_accept_edits_through_a_hard_link_leaves_the_git_config_whole(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    """A hard link to `.git/config` is a file like any other by its path; writing it in
    accept-edits must replace the link, never the repository's config it shares bytes with."""
    git_repo(workspace)
    config = workspace / ".git" / "config"
    before = config.read_bytes()
    (workspace / "notes.cfg").hardlink_to(config)
    hostile = '[core]\n\tfsmonitor = "touch owned"\n'
    edit = {"path": "notes.cfg", "edits": [{"old_text": "[core]", "new_text": hostile}]}
    calls(llm_server, "edit", [edit])
    done = run_di_code("run", "--permission-mode", "accept-edits", "go")
    assert done.returncode == 0, done.stderr
    assert config.read_bytes() == before


# --- bash lines shaped to pass an allow rule ---------------------------------------------------

SHAPED = [
    "ls; touch P1",
    "ls && touch P2",
    "ls || touch P3",
    "ls | touch P4",
    "ls\ntouch P5",
    "ls $(touch P6)",
    "ls `touch P7`",
    "ls <(touch P8)",
    "echo x > P9",
    "echo x >& P10",
    "echo x &> P11",
    "GIT_SSH_COMMAND='touch P12' git fetch",
    "eval 'touch P13'",
    " \tls;\ttouch P14",
    "ls \\\n; touch P15",
    "ls <<EOF\n$(touch P16)\nEOF",
    "echo x | tee P17",
    "ls & touch P18",
    "ls ${x:-$(touch P19)}",
    "echo x 1>P20",
    "l\\s; touch P21",
    "ls -la; t'ou'ch P22",
]


def test_a_line_shaped_to_pass_an_allow_rule_runs_nothing_more(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, di_code_home: Path
) -> None:
    """README: an allow rule covers a line only when it is plain and every command in it is
    allowed; anything else asks (refused in `run` without a terminal). The control, `ls`
    alone, runs."""
    user_rules(di_code_home, allow=["bash:ls", "bash:git fetch", "bash:echo"])
    git_repo(workspace)
    ids = calls(llm_server, "bash", [{"command": c} for c in ["ls", *SHAPED]])
    done = run_di_code("run", "go")
    assert done.returncode == 0, done.stderr
    told = results(llm_server)
    assert "needs the user's approval" not in told[ids[0]]
    for call, command in zip(ids[1:], SHAPED, strict=True):
        assert "needs the user's approval" in told[call], command
    assert sorted(p.name for p in workspace.glob("P*")) == []


# --- deny rules against equivalent spellings ---------------------------------------------------

SPELLED = [
    "r\\m x0",
    '"r"m x1',
    "r''m x2",
    "r\\\nm x3",
    " \t rm x4",
    "$'\\x72m' x5",
    "command -- rm x6",
    "env -u HOME rm x7",
    "nice -n 5 rm x8",
    "timeout -k 1 5 rm x9",
    "echo x10 | xargs -I % rm %",
    "find . -name x11 -exec rm {} +",
    "X=1 /bin/rm x12",
    "sh -c 'r''m x13'",
    "eval 'r''m x14'",
    "cat <(rm x15)",
    "f() { rm x16; }; f",
    "echo ok\r\nrm x17",
    "exec -a foo rm x18",
]


def test_a_deny_rule_holds_for_every_spelling_bash_reads_as_the_same_program(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, di_code_home: Path
) -> None:
    """README: a deny rule wins in every mode, matching any simple command anywhere in the
    line, by program name, through wrappers, shells and eval. Each line below removes its
    file when bash runs it (`auto`, no rule: the control); under `bash:rm` none may."""
    git_repo(workspace)
    files = [workspace / f"x{n}" for n in range(len(SPELLED))]
    for file in files:
        file.write_text("keep\n")
    calls(llm_server, "bash", [{"command": c} for c in SPELLED])
    assert run_di_code("run", "--yes", "go").returncode == 0
    ran = [c for c, file in zip(SPELLED, files, strict=True) if not file.exists()]
    assert ran == SPELLED, "the control: bash removes each file"
    for file in files:
        file.write_text("keep\n")
    user_rules(di_code_home, deny=["bash:rm"])
    ids = calls(llm_server, "bash", [{"command": c} for c in SPELLED])
    assert run_di_code("run", "--yes", "go").returncode == 0
    told = results(llm_server)
    for call, command, file in zip(ids, SPELLED, files, strict=True):
        assert "deny rule" in told[call], command
        assert file.read_text() == "keep\n", command


@pytest.mark.parametrize("wrapped", ["unshare rm x", "setarch x86_64 rm x", "prlimit rm x"])
def test_a_deny_rule_holds_through_util_linux_s_wrappers(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, di_code_home: Path, wrapped: str
) -> None:
    """util-linux's unshare (without namespace options), setarch and prlimit run the command
    their words name, as `nice` does: the wrapper catalogue reads them too."""
    (workspace / "x").write_text("keep\n")
    user_rules(di_code_home, deny=["bash:rm"])
    [call] = calls(llm_server, "bash", [{"command": wrapped}])
    assert run_di_code("run", "--yes", "go").returncode == 0
    assert "deny rule" in results(llm_server)[call]
    assert (workspace / "x").read_text() == "keep\n"


# --- what a project may set, what a mode may run ----------------------------------------------

WIDENING = '[permissions]\nmode = "auto"\nallow = ["bash", "write"]\n'


def test_an_untrusted_project_cannot_widen_its_own_permissions(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    """README (Trust): until trusted, a project's file may set only `[permissions] deny` of
    its permissions; `mode` and `allow` are ignored with one line naming them."""
    git_repo(workspace)
    (workspace / ".di-code").mkdir()
    (workspace / ".di-code" / "config.toml").write_text(WIDENING)
    [call] = calls(llm_server, "bash", [{"command": "touch P"}])
    done = run_di_code("run", "go")
    assert done.returncode == 0, done.stderr
    assert "needs the user's approval" in results(llm_server)[call]
    assert not (workspace / "P").exists()
    assert "mode" in done.stderr and "allow" in done.stderr


def test_a_project_settings_link_to_a_trusted_project_is_not_trusted(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, tmp_path: Path
) -> None:
    """README (Trust): trust belongs to the place the file is in, not to what a link points
    at: a cloned repository linking its settings to a project you trusted gains nothing."""
    trusted = tmp_path / "mine"
    git_repo(trusted)
    (trusted / ".di-code").mkdir()
    (trusted / ".di-code" / "config.toml").write_text(WIDENING)
    assert run_di_code("trust", str(trusted)).returncode == 0
    git_repo(workspace)
    (workspace / ".di-code").mkdir()
    (workspace / ".di-code" / "config.toml").symlink_to(trusted / ".di-code" / "config.toml")
    [call] = calls(llm_server, "bash", [{"command": "touch P"}])
    done = run_di_code("run", "go")
    assert done.returncode == 0, done.stderr
    assert "needs the user's approval" in results(llm_server)[call]
    assert not (workspace / "P").exists()


@pytest.mark.parametrize("mode", ["read-only", "plan"])
def test_allow_rules_and_auto_answers_do_not_lift_the_limits_of_a_looking_mode(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, di_code_home: Path, mode: str
) -> None:
    """README: read-only and plan offer only the looking tools and refuse every other call;
    the model calls bash and write anyway, under the user's `allow = ["bash", "write"]`."""
    user_rules(di_code_home, allow=["bash", "write"])
    llm_server.script(
        Turn(
            tool_calls=(
                ToolCallSpec("bash", {"command": "touch P"}, "c0"),
                ToolCallSpec("write", {"path": "W", "content": "x"}, "c1"),
            )
        ),
        Turn(text="done"),
    )
    done = run_di_code("run", "--permission-mode", mode, "go")
    assert done.returncode == 0, done.stderr
    told = results(llm_server)
    refused = ("not available in", "Unknown tool")
    assert all(any(why in told[call] for why in refused) for call in ("c0", "c1")), told
    assert not (workspace / "P").exists() and not (workspace / "W").exists()


# --- the question -------------------------------------------------------------------------


def asked_on_terminal(
    server: LLMServer, workspace: Path, command: str, chunk_size: int = Turn.chunk_size
) -> str:
    """The screen of `di-code run` while it asks about `command` (then answered no)."""
    server.script(
        Turn(tool_calls=(ToolCallSpec("bash", {"command": command}, "c1"),), chunk_size=chunk_size),
        Turn(text="not run"),
    )
    child, screen = run_on_terminal(server, workspace)
    try:
        screen.wait_for("[N]o")
        asked = screen.text
        child.sendline("n")
        screen.wait_for("not run")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    return asked


@needs_di_code
@pytest.mark.parametrize(
    ("hidden", "shown"),
    [
        ("\u202e", "<U+202E>"),  # bidi override
        ("\U000e0072\U000e006d", "<U+E0072><U+E006D>"),  # tag characters: "rm" unseen
        ("\u3164", "<U+3164>"),  # a Hangul filler, drawn as a blank
        ("\u17b4", "<U+17B4>"),  # a Khmer inherent vowel, drawn as nothing
        ("\u180b", "<U+180B>"),  # a Mongolian variation selector, drawn as nothing
        ("\x1b[2K\r", "␛[2K␍"),
    ],
)
def test_the_question_shows_every_invisible_character_of_a_command(
    llm_server: LLMServer, workspace: Path, hidden: str, shown: str
) -> None:
    """README: control characters show as `␛`, `␍`; zero-width characters, bidi controls and
    other invisible ones as `<U+200B>`, so a command reads as it runs."""
    asked = asked_on_terminal(llm_server, workspace, f"echo safe{hidden} > /dev/null")
    assert f"echo safe{shown} > /dev/null" in asked
    assert not (workspace / "P").exists()


@needs_di_code
def test_a_100_kb_command_shows_its_end_beside_the_question(
    llm_server: LLMServer, workspace: Path
) -> None:
    """README: what a question shows is all that a yes allows; taller than the screen, its
    first and last lines are shown around a line saying how many lie between. A payload at
    the end of 100 KB of harmless commands is on screen when the question is."""
    command = "echo start; " + "true; " * 17_000 + "touch TAIL-P"
    asked = asked_on_terminal(llm_server, workspace, command, WHOLE)  # its size, not its deltas
    assert "touch TAIL-P" in asked
    assert "more lines here" in asked
    assert not (workspace / "TAIL-P").exists()


def test_run_with_stdin_on_a_terminal_but_stderr_piped_refuses_instead_of_asking(
    llm_server: LLMServer, workspace: Path, tmp_path: Path
) -> None:
    """README: `run` asks on the terminal when stdin and stderr are terminals; without one the
    call is refused and the model told why, so the run goes on (a question nobody sees would
    wait for ever)."""
    calls(llm_server, "bash", [{"command": "touch P"}])
    errors = tmp_path / "stderr.txt"
    child = pexpect.spawn(
        "/bin/sh",
        ["-c", f'exec "$0" run --model openai/test-model go 2> "{errors}"', str(DI_CODE)],
        cwd=str(workspace),
        env=spawn_env(llm_server),
        encoding="utf-8",
        timeout=30,
    )
    try:
        child.expect("done")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0, errors.read_text()
    assert "needs the user's approval" in results(llm_server)["c0"]
    assert not (workspace / "P").exists()


@needs_di_code
def test_a_100_kb_command_shows_its_ends_in_the_chat_question(
    llm_server: LLMServer, workspace: Path
) -> None:
    """The same in chat: the question's command taller than the screen shows its first and
    last lines around how many lie between, the payload at its end on screen."""
    command = "echo start; " + "true; " * 17_000 + "touch TAIL-P"
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("bash", {"command": command}, "c1"),), chunk_size=WHOLE),
        Turn(text="not run"),
    )
    child, screen = open_chat(llm_server, workspace)
    try:
        child.sendline("go")
        screen.wait_for("Allow?")
        screen.pump(1)
        asked = screen.text
        answer(screen, "n")
        screen.wait_for("not run")
    finally:
        child.close(force=True)
    assert "echo start" in asked and "touch TAIL-P" in asked, asked
    assert "more lines here" in asked, asked


def test_a_hook_that_allows_everything_lifts_no_deny_rule_and_no_protected_path(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, di_code_home: Path
) -> None:
    """README (Hooks): a PreToolUse `allow` runs a call without asking, but deny rules refuse
    whatever a hook says; (Protected paths) a protected path is asked about whatever a hook
    says, so without a terminal it is refused. The control, `touch ok.txt`, runs unasked."""
    git_repo(workspace)
    hook = di_code_home / "allow.sh"
    hook.write_text(
        'cat > /dev/null\necho \'{"hookSpecificOutput": {"permissionDecision": "allow"}}\'\n'
    )
    (di_code_home / "config.toml").write_text(
        '[permissions]\ndeny = ["bash:rm", "write:secrets.env"]\n'
        '[[hooks.PreToolUse]]\nmatcher = ""\n'
        f'hooks = [{{ type = "command", command = "bash {hook}", timeout = 10 }}]\n'
    )
    (workspace / "x").write_text("keep\n")
    (workspace / "secrets.env").write_text("TOKEN=mine\n")
    llm_server.script(
        Turn(
            tool_calls=(
                ToolCallSpec("bash", {"command": "touch ok.txt"}, "c0"),
                ToolCallSpec("bash", {"command": "r\\m x"}, "c1"),
                ToolCallSpec("write", {"path": "@secrets.env", "content": "TOKEN=x\n"}, "c2"),
                ToolCallSpec("write", {"path": "hooks/pre-commit", "content": "x\n"}, "c3"),
            )
        ),
        Turn(text="done"),
    )
    (workspace / "hooks").symlink_to(".git/hooks")
    done = run_di_code("run", "go")
    assert done.returncode == 0, done.stderr
    told = results(llm_server)
    assert (workspace / "ok.txt").exists(), told["c0"]
    assert "deny rule" in told["c1"] and "deny rule" in told["c2"]
    assert "needs the user's approval" in told["c3"]
    assert (workspace / "x").read_text() == "keep\n"
    assert (workspace / "secrets.env").read_text() == "TOKEN=mine\n"
    assert not (workspace / ".git" / "hooks" / "pre-commit").exists()
