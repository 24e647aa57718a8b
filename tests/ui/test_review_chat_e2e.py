"""Chat's built-in `/review` in a real pseudo-terminal, on a real git repository: the diff is
in the request, the model is offered only the reading tools and its edit is refused, and the
next prompt has the session's tools and mode back; a `/review` command file of the user's
own wins over the built-in."""

from __future__ import annotations

from pathlib import Path

from tests.cli.conftest import request_text
from tests.support.chat import needs_di_code, open_chat, quit_chat
from tests.support.git import git
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn
from tests.support.review import FIRST


def tools_of(body: dict[str, object]) -> set[str]:
    return {tool["function"]["name"] for tool in body.get("tools", [])}  # type: ignore[attr-defined, index]


def repository(folder: Path) -> Path:
    folder.mkdir()
    git(folder, "init", "-q", "-b", "main")
    (folder / "calc.py").write_text(FIRST)
    git(folder, "add", "calc.py")
    git(folder, "commit", "-q", "-m", "first")
    return folder


@needs_di_code
def test_review_in_chat_reads_only_then_the_session_goes_on(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    repo = repository(tmp_path / "repo")
    changed = FIRST.replace("a / b", "a / 0")
    (repo / "calc.py").write_text(changed)
    edit = ToolCallSpec("edit", {"path": "calc.py", "old_text": "/ 0", "new_text": "/ b"})
    llm_server.script(
        Turn(tool_calls=(edit,)),
        Turn(text="FINDING: calc.py:2 | high | divides by zero\nVERDICT: needs a fix"),
        Turn(text="Back to work."),
    )
    child, screen = open_chat(llm_server, repo, "--yes")
    try:
        child.sendline("/review")
        screen.wait_for("VERDICT: needs a fix")
        child.sendline("/permissions")
        screen.wait_for("Permission mode: auto")  # the session's mode is back
        child.sendline("thanks")
        screen.wait_for("Back to work.")
        quit_chat(child)
    finally:
        child.close(force=True)
    posts = [r.body for r in llm_server.requests if r.method == "POST"]
    assert "-    return a / b" in request_text(posts[0]) and "+    return a / 0" in request_text(
        posts[0]
    )
    assert {"write", "edit", "bash"}.isdisjoint(tools_of(posts[0]))
    assert "edit is not available in read-only mode" in request_text(posts[1])  # the gate's
    assert (repo / "calc.py").read_text() == changed
    assert {"write", "edit", "bash"} <= tools_of(posts[2])


@needs_di_code
def test_a_review_command_file_of_the_users_wins_over_the_built_in(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    repo = repository(tmp_path / "repo")
    (repo / "calc.py").write_text(FIRST + "x = 1\n")
    commands = repo / ".di-code" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text("My own review of $ARGUMENTS, please.\n")
    llm_server.script(Turn(text="Done my way."))
    child, screen = open_chat(llm_server, repo)
    try:
        child.sendline("/review src/app.py")
        screen.wait_for("Done my way.")
        quit_chat(child)
    finally:
        child.close(force=True)
    [post] = [r.body for r in llm_server.requests if r.method == "POST"]
    assert "My own review of src/app.py, please." in request_text(post)
    assert "<diff>" not in request_text(post)
