"""`di-code review` on a real git repository, against the loopback model: the diff (of the
uncommitted changes, a branch against its base, or one commit) is in the request, the model is
offered only the reading tools and edits nothing, and `--output-format json` gives the findings
parsed from its answer; an answer out of the format is one line and exit 1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import RunDiCode, request_text
from tests.support.git import git
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn
from tests.support.review import FIRST, first_request

ANSWER = (
    "I read calc.py around the change.\n\n"
    "FINDING: calc.py:2 | high | divides by zero when b is 0\n"
    "FINDING: `calc.py:5` | low | the name `tmp` says nothing\n\n"
    "VERDICT: needs a fix before merging"
)


@pytest.fixture
def repo(workspace: Path) -> Path:
    """A repository on `main` with calc.py committed."""
    git(workspace, "init", "-q", "-b", "main")
    (workspace / "calc.py").write_text(FIRST)
    git(workspace, "add", "calc.py")
    git(workspace, "commit", "-q", "-m", "first")
    return workspace


def offered_tools(server: LLMServer) -> set[str]:
    body = next(r for r in server.requests if r.method == "POST").body
    return {tool["function"]["name"] for tool in body.get("tools", [])}


def test_review_of_uncommitted_changes_reads_the_diff_edits_nothing_and_gives_json(
    repo: Path, run_di_code: RunDiCode, llm_server: LLMServer
) -> None:
    changed = "def div(a, b):\n    return a / 0\n\n\ntmp = 1\n"
    (repo / "calc.py").write_text(changed)
    edit = ToolCallSpec("edit", {"path": "calc.py", "old_text": "/ 0", "new_text": "/ b"})
    read = ToolCallSpec("read", {"path": "calc.py"})
    llm_server.script(Turn(tool_calls=(read, edit)), Turn(text=ANSWER))
    done = run_di_code("review", "--output-format", "json")
    assert done.returncode == 0, done.stderr
    request = first_request(llm_server)
    assert "+    return a / 0" in request and "-    return a / b" in request
    assert "path:line" not in request or "FINDING:" in request  # the format is asked for
    assert {"write", "edit", "bash"}.isdisjoint(offered_tools(llm_server))
    assert (repo / "calc.py").read_text() == changed  # the model's edit was refused
    result = json.loads(done.stdout)
    assert result["findings"] == [
        {"path": "calc.py", "line": 2, "severity": "high", "why": "divides by zero when b is 0"},
        {"path": "calc.py", "line": 5, "severity": "low", "why": "the name `tmp` says nothing"},
    ]
    assert result["verdict"] == "needs a fix before merging"
    assert result["is_error"] is False


def test_review_in_text_prints_the_answer(
    repo: Path, run_di_code: RunDiCode, llm_server: LLMServer
) -> None:
    (repo / "calc.py").write_text(FIRST + "# more\n")
    llm_server.script(Turn(text=ANSWER))
    done = run_di_code("review")
    assert done.returncode == 0, done.stderr
    assert "VERDICT: needs a fix before merging" in done.stdout
    assert "+# more" in first_request(llm_server)


def test_review_of_a_branch_against_its_base_and_of_one_commit(
    repo: Path, run_di_code: RunDiCode, llm_server: LLMServer
) -> None:
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "calc.py").write_text(FIRST + "BRANCH = 1\n")
    git(repo, "commit", "-q", "-am", "branch work")
    (repo / "calc.py").write_text(FIRST + "BRANCH = 1\nLOOSE = 2\n")  # not committed
    llm_server.script(Turn(text="VERDICT: fine"), Turn(text="VERDICT: fine"))
    done = run_di_code("review", "--base", "main", "--output-format", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["findings"] == []
    request = first_request(llm_server)
    assert "+BRANCH = 1" in request and "LOOSE" not in request
    sha = git(repo, "rev-parse", "HEAD").strip()
    assert run_di_code("review", "--commit", sha[:10]).returncode == 0
    posts = [r for r in llm_server.requests if r.method == "POST"]
    second = request_text(posts[-1].body)
    assert "+BRANCH = 1" in second and "branch work" in second and "LOOSE" not in second


def test_an_answer_out_of_the_format_is_one_line_and_exit_1(
    repo: Path, run_di_code: RunDiCode, llm_server: LLMServer
) -> None:
    (repo / "calc.py").write_text(FIRST + "x = 1\n")
    llm_server.script(Turn(text="Looks fine to me, ship it!"))
    done = run_di_code("review", "--output-format", "json")
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    [line] = done.stderr.strip().splitlines()
    assert "VERDICT" in line
    result = json.loads(done.stdout)
    assert result["is_error"] is True and result["findings"] == []


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--base", "--output=/tmp/x"), "--output=/tmp/x"),
        (("--commit", "no-such-commit"), "no-such-commit"),
        (("--base", "main", "--commit", "HEAD"), "--base or --commit"),
        (("--output-format", "stream-json"), "--output-format"),
    ],
)
def test_a_wrong_target_is_one_line_and_exit_2(
    repo: Path, run_di_code: RunDiCode, llm_server: LLMServer, args: tuple[str, ...], said: str
) -> None:
    done = run_di_code("review", *args)
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert said in line
    assert not Path("/tmp/x").exists() or "--output" not in said
    assert [r for r in llm_server.requests if r.method == "POST"] == []


def test_nothing_to_review_says_so(
    repo: Path, run_di_code: RunDiCode, llm_server: LLMServer
) -> None:
    done = run_di_code("review", "--output-format", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["findings"] == []
    assert "nothing to review" in done.stderr
    assert [r for r in llm_server.requests if r.method == "POST"] == []


def test_outside_a_repository_is_one_line_and_exit_2(
    workspace: Path, run_di_code: RunDiCode
) -> None:
    done = run_di_code("review")
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert "git" in line


def test_a_huge_diff_is_cut_and_the_model_is_told_what_was_left_out(
    repo: Path, run_di_code: RunDiCode, llm_server: LLMServer
) -> None:
    (repo / "big.txt").write_text("".join(f"line {n} of a big file\n" for n in range(40_000)))
    (repo / "zz_last.py").write_text("print('last')\n")
    git(repo, "add", "big.txt", "zz_last.py")
    llm_server.script(Turn(text="VERDICT: too big to say"))
    done = run_di_code("review", "--output-format", "json")
    assert done.returncode == 0, done.stderr
    request = first_request(llm_server)
    assert len(request) < 400_000
    assert "zz_last.py" in request and "cut" in request


VECTORS = {
    "filters": ('[filter "x"]\n\tclean = {p}\n\tsmudge = {p}\n\tprocess = {p}\n', "* filter=x\n"),
    "diff-driver": ('[diff "x"]\n\tcommand = {p}\n\ttextconv = {p}\n', "* diff=x\n"),
    "external-pager": ("[diff]\n\texternal = {p}\n[core]\n\tpager = {p}\n\tfsmonitor = {p}\n", ""),
}


@pytest.mark.parametrize(("config", "attributes"), VECTORS.values(), ids=VECTORS.keys())
@pytest.mark.parametrize("target", [(), ("--base", "main"), ("--commit", "HEAD")])
def test_the_repository_names_no_program_review_runs(
    repo: Path,
    run_di_code: RunDiCode,
    llm_server: LLMServer,
    tmp_path: Path,
    config: str,
    attributes: str,
    target: tuple[str, ...],
) -> None:
    marker = tmp_path / "it-ran"
    program = tmp_path / "planted.sh"
    program.write_text(f"#!/bin/sh\ntouch {marker}\ncat\n")
    program.chmod(0o755)
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / ".gitattributes").write_text(attributes)
    (repo / "calc.py").write_text(FIRST + "PLANTED = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "with attributes")
    (repo / "calc.py").write_text(FIRST + "PLANTED = 2\n")
    with (repo / ".git" / "config").open("a") as file:
        file.write(config.format(p=program))
    llm_server.script(Turn(text="VERDICT: fine"))
    done = run_di_code("review", *target)
    assert done.returncode == 0, done.stderr
    assert not marker.exists()
    assert "PLANTED = " in first_request(llm_server)


def test_a_fifo_where_git_reads_ends_the_review_with_one_line(
    repo: Path, run_di_code: RunDiCode, llm_server: LLMServer
) -> None:
    import os

    (repo / "calc.py").write_text(FIRST + "x = 1\n")
    os.mkfifo(repo / ".gitignore")  # `ls-files --exclude-standard` would wait on it for ever
    done = run_di_code("review")  # the helper's 60 s timeout is the liveness bound
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert "FIFO" in line
    assert [r for r in llm_server.requests if r.method == "POST"] == []
