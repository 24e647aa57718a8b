"""Start-up attacked from README's "Using di-code", "Output formats and exit codes" and "Undo"
sections, with HOSTILE.md's classes (text from outside, programs a repository names,
concurrency and failure):

1. A command line that starts with a top-level command's name is parsed by an app holding only
   that command: every such line must give the same output, error line and exit code as the
   whole app gives it, and the prompt must be what the user typed.
2. A prompt's first git snapshot starts once the model's answer begins: undo must still give
   back the bytes from before the prompt when the answer's first event is a tool call, keep
   what the user changed while the model was waiting or streaming, survive a stream that fails
   or is stopped before it begins, another di-code working on the same repository, and a
   repository whose git config names programs.

Everything runs the real `di-code` against the loopback model, in real git repositories."""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests.cli.conftest import DI_CODE, RunDiCode, cli_env
from tests.support.git import git
from tests.support.hanging_git import hanging_git
from tests.support.imports import run_main
from tests.support.llm_server import HttpError, LLMServer, ToolCallSpec, Turn, call
from tests.support.processes import wait_until
from tests.support.undo_cli import planted

TRACEBACK = "Traceback"
JSON = ("--output-format", "json")

# 1. The one-command parser -----------------------------------------------------------------

WHOLE_APP = "from di_code.cli import typer_app as _typer_app\n_typer_app.COMMANDS.clear()\n"
"""Run before di-code's main: with no command known by name, every line goes to the whole app
(the reference the one-command app must equal)."""

LINES = [
    ["--help"],
    *([name, "--help"] for name in ("run", "chat", "review", "acp", "trust", "batch", "lsp")),
    *([name, "--help"] for name in ("undo", "export")),
    ["run"],
    ["run", "-h"],
    ["undo", "--list"],
    ["export", "--format", "pdf"],
    ["review", "--commit"],
    ["trust", "--list"],
    ["lsp"],
    ["run", "--version"],  # a root option after the command is not the command's
    ["--version", "run"],
    ["--help", "run"],
    ["run", "--help", "--no-such-option"],
    ["run", "--no-such-option"],
    ["run", "a", "b"],
    ["run", "--output-format"],
    ["run", "--max-turns", "0", "hi"],
    ["run", "--install-completion"],
    ["chat", "extra"],
    ["lsp", "extra"],
    ["batch"],
    ["batch", "tasks.jsonl"],
    ["batch", "tasks.jsonl", "--out", "o.jsonl", "--jobs", "0"],
    ["undo", "--to", "0"],
    ["undo", "--to", "x"],
    ["undo", "--list", "extra"],
    ["export", "--format"],
    ["review", "--base"],
    ["trust", "a", "b"],
    ["RUN", "hi"],
    ["Run", "hi"],
    ["ru", "hi"],
    ["run\u200b", "hi"],
    ["mcp"],
    ["mcp", "--help"],
    ["mcp", "run"],
]


@pytest.mark.parametrize("line", LINES, ids=[" ".join(line) or "-" for line in LINES])
def test_a_line_gives_what_the_whole_app_gives(
    di_code_home: Path, workspace: Path, line: list[str]
) -> None:
    """Output, error line and exit code of the one-command parse equal the whole app's; an
    error is one line, no traceback."""
    env = cli_env(di_code_home, None)
    ours = subprocess.run(
        [DI_CODE, *line], cwd=workspace, env=env, input="", capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip
    whole = run_main(WHOLE_APP, *line, env=env, cwd=str(workspace))
    assert (ours.returncode, ours.stdout, ours.stderr) == (
        whole.returncode,
        whole.stdout,
        whole.stderr,
    )
    assert TRACEBACK not in ours.stderr
    if ours.returncode == 2 and not ours.stdout:
        assert len(ours.stderr.splitlines()) == 1, ours.stderr


@pytest.mark.parametrize(
    ("args", "prompt"),
    [
        (("run", "mcp"), "mcp"),
        (("run", "undo"), "undo"),
        (("run", "--", "--help"), "--help"),
        (("run", "--", "--version"), "--version"),
        (("run", "--", "run"), "run"),
    ],
)
def test_a_prompt_named_like_a_command_or_an_option_is_the_prompt(
    run_di_code: RunDiCode, llm_server: LLMServer, args: tuple[str, ...], prompt: str
) -> None:
    llm_server.script(Turn(text="answered"))
    done = run_di_code(*args)
    assert done.returncode == 0 and done.stdout == "answered\n", done.stderr
    sent = json.dumps(llm_server.requests[-1].body["messages"][-1])
    assert json.dumps(prompt)[1:-1] in sent, sent


# 2. The prompt's first snapshot --------------------------------------------------------------

ORIGINAL = {"a.txt": b"a before\r\n", "b.txt": b"b before\n", "gone.txt": b"\x00\xffraw\n"}


def repository(folder: Path) -> Path:
    git(folder, "init", "-q", "-b", "main")
    for name, data in ORIGINAL.items():
        (folder / name).write_bytes(data)
    git(folder, "add", "-A")
    git(folder, "commit", "-qm", "first")
    return folder


def di_code(home: Path, server: LLMServer, work: Path, *args: str) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [DI_CODE, *args], cwd=work, env=cli_env(home, server), input="", capture_output=True,
        text=True, timeout=120,
    )  # fmt: skip
    assert TRACEBACK not in done.stderr, done.stderr
    return done


def start(home: Path, server: LLMServer, work: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [DI_CODE, *args], cwd=work, env=cli_env(home, server), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def contents(work: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in work.iterdir() if p.is_file()}


WRITE_FIRST = (
    Turn(
        tool_calls=(
            ToolCallSpec("write", {"path": "a.txt", "content": "written by the model\n"}, "c1"),
            ToolCallSpec("write", {"path": "made.txt", "content": "new\n"}, "c2"),
        )
    ),
    call("bash", {"command": "rm gone.txt && printf x >> b.txt"}, "c3"),
    Turn(text="done"),
)


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_an_answer_that_begins_with_a_tool_call_is_undone_to_the_bytes_before_it(
    llm_server: LLMServer, di_code_home: Path, workspace: Path, wire: str
) -> None:
    """No text comes before the tool call: the snapshot starts with the call itself, and
    still holds the files as they were before the prompt."""
    repository(workspace)
    llm_server.script(*WRITE_FIRST)
    model = "openai/test-model" if wire == "openai" else "anthropic/claude-test"
    extra = ("--base-url", llm_server.anthropic_base_url) if wire == "anthropic" else ()
    done = subprocess.run(
        [DI_CODE, "run", "--yes", "--sandbox", "off", "--model", model, *extra, "change"],
        cwd=workspace, input="", capture_output=True, text=True, timeout=120,
        env={**cli_env(di_code_home, llm_server), "ANTHROPIC_API_KEY": "sk-ant-test"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (workspace / "a.txt").read_bytes() == b"written by the model\n"
    assert not (workspace / "gone.txt").exists()
    undone = di_code(di_code_home, llm_server, workspace, "undo", "--yes")
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert contents(workspace) == ORIGINAL


def _edit_by_user(work: Path) -> None:
    (work / "a.txt").write_bytes(b"a typed by the user\n")
    (work / "b.txt").write_bytes(b"b typed by the user\n")


@pytest.mark.parametrize("when", ["before the answer begins", "while text streams"])
def test_what_the_user_types_while_the_model_works_is_kept_by_undo(
    llm_server: LLMServer, di_code_home: Path, workspace: Path, when: str
) -> None:
    """The user edits a.txt and b.txt after the request went out, before any tool: then the
    model rewrites b.txt and makes a file. Undo takes back the model's file and gives b.txt
    back as the user left it (README: "you editing while the model thinks ... is yours");
    a.txt, which no tool touched, keeps the user's bytes."""
    repository(workspace)
    before = when == "before the answer begins"
    llm_server.script(
        Turn(
            text="thinking " * 60,
            chunk_size=9,
            first_delay=4.0 if before else 0.0,
            delay=0.0 if before else 0.05,
            tool_calls=(
                ToolCallSpec("write", {"path": "b.txt", "content": "b by the model\n"}, "c1"),
                ToolCallSpec("write", {"path": "made.txt", "content": "new\n"}, "c2"),
            ),
        ),
        Turn(text="done"),
    )
    running = start(
        di_code_home, llm_server, workspace, "run", "--yes", "--output-format", "stream-json", "go"
    )
    try:
        assert running.stdout is not None
        if before:
            wait_until(lambda: bool(llm_server.requests), "the request")
        else:
            for line in running.stdout:
                event = json.loads(line)
                if event["type"] == "message_update" and "delta" in json.dumps(event):
                    break
                assert event["type"] != "tool_execution_start", line
        _edit_by_user(workspace)
        out, err = running.communicate(timeout=120)
    finally:
        running.kill()
    assert running.returncode == 0, err
    assert (workspace / "b.txt").read_bytes() == b"b by the model\n", out[-2000:]
    undone = di_code(di_code_home, llm_server, workspace, "undo", "--yes")
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert contents(workspace) == {
        **ORIGINAL,
        "a.txt": b"a typed by the user\n",
        "b.txt": b"b typed by the user\n",
    }


@pytest.mark.parametrize(("number", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_stop_before_the_answer_begins_leaves_a_session_that_loads_and_undoes(
    llm_server: LLMServer, di_code_home: Path, workspace: Path, number: int, code: int
) -> None:
    """The model never answers; the user stops di-code: its exit code, no half checkpoint,
    no git lock or index change; the session goes on (`--continue`) and its next prompt is
    undone exactly."""
    repository(workspace)
    index = (workspace / ".git" / "index").read_bytes()
    llm_server.script(Turn(text="never", fault="stall", fault_after=0))
    running = start(di_code_home, llm_server, workspace, "run", "--yes", "wait")
    try:
        wait_until(lambda: bool(llm_server.requests), "the request")
        running.send_signal(number)
        _, err = running.communicate(timeout=30)
    finally:
        running.kill()
    assert running.returncode == code, err
    assert TRACEBACK not in err
    assert not list((workspace / ".git").rglob("*.lock"))
    assert (workspace / ".git" / "index").read_bytes() == index
    assert contents(workspace) == ORIGINAL

    listed = di_code(di_code_home, llm_server, workspace, "undo", "--list")
    assert listed.returncode == 0, listed.stderr
    nothing = di_code(di_code_home, llm_server, workspace, "undo", "--yes")
    assert nothing.returncode == 1 and len(nothing.stderr.splitlines()) <= 1, nothing.stderr
    assert contents(workspace) == ORIGINAL

    llm_server.script(*WRITE_FIRST)
    again = di_code(di_code_home, llm_server, workspace, "run", "--continue", "--yes", "change")
    assert again.returncode == 0, again.stderr
    undone = di_code(di_code_home, llm_server, workspace, "undo", "--yes")
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert contents(workspace) == ORIGINAL


@pytest.mark.parametrize(
    "failure",
    [
        HttpError(400, "bad request"),
        Turn(text="x", fault="drop", fault_after=0),
        Turn(text="x", fault="malformed", fault_after=0),
    ],
    ids=["refused", "dropped", "malformed"],
)
def test_a_stream_that_fails_before_its_first_event_is_one_line_and_undo_stays_exact(
    llm_server: LLMServer, di_code_home: Path, workspace: Path, failure: object
) -> None:
    repository(workspace)
    llm_server.script(*[failure] * 6)  # every retry fails the same way
    failed = di_code(di_code_home, llm_server, workspace, "run", "--yes", "fail")
    assert failed.returncode == 1, failed.stderr
    assert len(failed.stderr.strip().splitlines()) == 1, failed.stderr
    assert contents(workspace) == ORIGINAL
    with LLMServer() as fresh:  # not the failures di-code's retries left unused
        fresh.script(*WRITE_FIRST)
        again = di_code(di_code_home, fresh, workspace, "run", "--continue", "--yes", "change")
    assert again.returncode == 0, again.stderr
    listed = di_code(di_code_home, llm_server, workspace, "undo", "--list")
    assert listed.returncode == 0 and "fail" in listed.stdout, listed.stdout + listed.stderr
    undone = di_code(di_code_home, llm_server, workspace, "undo", "--yes")
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert contents(workspace) == ORIGINAL


def test_a_retried_request_is_undone_to_the_bytes_before_the_prompt(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    """The first event is a retry notice (a 500, then the answer): the snapshot starts
    during the backoff; the prompt is still undone exactly."""
    repository(workspace)
    llm_server.script(HttpError(500, "busy", headers={"retry-after": "0"}), *WRITE_FIRST)
    done = di_code(di_code_home, llm_server, workspace, "run", "--yes", "change")
    assert done.returncode == 0, done.stderr
    undone = di_code(di_code_home, llm_server, workspace, "undo", "--yes")
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert contents(workspace) == ORIGINAL


def test_another_di_code_on_the_repository_is_not_undone_by_this_one(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    """While A's model streams text slowly (its snapshot starts then), B runs a whole prompt
    that rewrites b.txt; then A's model rewrites a.txt. Undoing A gives back a.txt alone;
    undoing B gives back b.txt."""
    repository(workspace)
    llm_server.script(
        Turn(
            text="slow " * 60, chunk_size=5, delay=0.05,
            tool_calls=(ToolCallSpec("write", {"path": "a.txt", "content": "by A\n"}, "a1"),),
        ),
        Turn(text="A done"),
    )  # fmt: skip
    a = start(di_code_home, llm_server, workspace, "run", "--yes", *JSON, "A")
    try:
        wait_until(lambda: bool(llm_server.requests), "A's request")
        with LLMServer() as other:
            other.script(
                call("write", {"path": "b.txt", "content": "by B\n"}, "b1"), Turn(text="ok")
            )
            b = di_code(di_code_home, other, workspace, "run", "--yes", *JSON, "B")
        assert b.returncode == 0, b.stderr
        out, err = a.communicate(timeout=120)
    finally:
        a.kill()
    assert a.returncode == 0, err
    a_id, b_id = json.loads(out)["session_id"], json.loads(b.stdout)["session_id"]
    assert contents(workspace)["a.txt"] == b"by A\n"
    undo_a = di_code(di_code_home, llm_server, workspace, "undo", "--session", a_id, "--yes")
    assert undo_a.returncode == 0, undo_a.stdout + undo_a.stderr
    assert contents(workspace) == {**ORIGINAL, "b.txt": b"by B\n"}
    undo_b = di_code(di_code_home, llm_server, workspace, "undo", "--session", b_id, "--yes")
    assert undo_b.returncode == 0, undo_b.stdout + undo_b.stderr
    assert contents(workspace) == ORIGINAL


CONFIGS = [
    ('[filter "x"]\n\tclean = {p}\n\tsmudge = {p}\n\tprocess = {p}\n', "* filter=x\n"),
    ("[core]\n\tfsmonitor = {p}\n\thooksPath = {hooks}\n", ""),
    ('[diff "x"]\n\ttextconv = {p}\n[diff]\n\texternal = {p}\n', "* diff=x\n"),
    ("[core]\n\tpager = {p}\n\tsshCommand = {p}\n[credential]\n\thelper = !{p}\n", ""),
]


@pytest.mark.parametrize(
    ("config", "attributes"),
    CONFIGS,
    ids=["filters", "fsmonitor-hooks", "diff", "pager-ssh-credentials"],
)
def test_a_repository_that_names_programs_runs_none_of_them(
    llm_server: LLMServer, di_code_home: Path, workspace: Path, tmp_path: Path,
    config: str, attributes: str,
) -> None:  # fmt: skip
    """The snapshot that now starts with the answer (a tool call first, and a stall first)
    runs nothing the repository's config names; undo is exact."""
    program, marker = planted(tmp_path)
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for hook in ("reference-transaction", "post-index-change", "post-checkout"):
        (hooks / hook).write_text(Path(program).read_text())
        (hooks / hook).chmod(0o755)
    repository(workspace)
    (workspace / ".gitattributes").write_text(attributes)
    git(workspace, "add", ".gitattributes")
    git(workspace, "commit", "-qm", "attributes")
    with (workspace / ".git" / "config").open("a") as file:
        file.write(config.format(p=program, hooks=hooks))
    before = contents(workspace)
    llm_server.script(*WRITE_FIRST)
    done = di_code(di_code_home, llm_server, workspace, "run", "--yes", "--sandbox", "off", "go")
    assert done.returncode == 0, done.stderr
    undone = di_code(di_code_home, llm_server, workspace, "undo", "--yes")
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert contents(workspace) == before
    assert not marker.exists()


def test_a_prompt_stopped_while_its_snapshot_runs_leaves_the_next_undo_exact(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    """SIGTERM right as the answer begins (the first snapshot on its worker thread, over
    2,000 files): exit 143, every file whole, and the next prompt undone exactly."""
    repository(workspace)
    for i in range(2000):
        (workspace / f"f{i:04}.txt").write_text(f"{i}\n")
    git(workspace, "add", "-A")
    git(workspace, "commit", "-qm", "many")
    expected = contents(workspace)
    llm_server.script(Turn(text="begun " * 20, chunk_size=6, fault="stall", fault_after=4))
    running = start(
        di_code_home, llm_server, workspace, "run", "--yes", "--output-format", "stream-json", "x"
    )
    try:
        assert running.stdout is not None
        for line in running.stdout:  # the stream's "start" comes before the request
            event = json.loads(line)
            if event["type"] == "message_update" and event["event"]["type"] != "start":
                break
        running.send_signal(signal.SIGTERM)
        _, err = running.communicate(timeout=30)
    finally:
        running.kill()
    assert running.returncode == 143, err
    assert TRACEBACK not in err
    wait_until(lambda: not list((workspace / ".git").rglob("*.lock")), "no git lock left")
    assert contents(workspace) == expected
    llm_server.script(*WRITE_FIRST)
    again = di_code(di_code_home, llm_server, workspace, "run", "--continue", "--yes", "change")
    assert again.returncode == 0, again.stderr
    undone = di_code(di_code_home, llm_server, workspace, "undo", "--yes")
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert contents(workspace) == expected


@pytest.mark.parametrize(("number", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_stop_while_the_first_snapshot_runs_ends_within_a_second(
    llm_server: LLMServer, di_code_home: Path, workspace: Path, tmp_path: Path,
    number: int, code: int,
) -> None:  # fmt: skip
    """No answer, no tool: nothing di-code did changed the files, so the stop need not wait for
    the snapshot that runs while the model thinks (HOSTILE.md: within a second)."""
    repository(workspace)
    hanging, seen = hanging_git(tmp_path, "ls-files")  # a very large repository
    llm_server.script(Turn(text="never", fault="stall", fault_after=0))
    env = cli_env(di_code_home, llm_server) | hanging
    running = subprocess.Popen(
        [DI_CODE, "run", "--yes", "wait"], cwd=workspace, env=env, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        wait_until(lambda: bool(llm_server.requests), "the request")
        wait_until(lambda: seen.exists(), "the snapshot's listing")
        running.send_signal(number)
        stopped = time.monotonic()
        _, err = running.communicate(timeout=30)
        took = time.monotonic() - stopped
    finally:
        running.kill()
    assert running.returncode == code, err
    assert took < 1.0, f"ended {took:.1f} s after the stop"


def test_an_incomplete_snapshot_is_said_before_the_model_answers(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    """A file over 10 MB is unknown to the snapshots: the prompt says so as it starts, while
    the model has not answered yet (it never will here)."""
    repository(workspace)
    with (workspace / "big.bin").open("wb") as big:
        big.truncate(11 * 1024 * 1024)
    llm_server.script(Turn(text="never", fault="stall", fault_after=0))
    running = start(di_code_home, llm_server, workspace, "run", "--yes", "wait")
    said: list[str] = []
    assert running.stderr is not None
    reader = threading.Thread(target=lambda: said.extend(running.stderr or ()), daemon=True)
    reader.start()
    try:
        wait_until(lambda: bool(llm_server.requests), "the request")
        deadline = time.monotonic() + 20  # the snapshot of 4 files: far less on any machine
        while not any("undo will not cover" in line for line in said):
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
        warned_in_time = any("undo will not cover" in line for line in said)
        running.send_signal(signal.SIGTERM)
        running.wait(timeout=30)
        reader.join(timeout=30)
    finally:
        running.kill()
    assert any("big.bin" in line for line in said), said  # said at last: the test sees it
    assert warned_in_time, said
