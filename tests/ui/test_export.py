"""Export (issue 45 item 1): a saved session with every kind of entry as HTML, Markdown and
JSON, each text escaped, the key hidden, read through the session loader."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from rich.console import Console

from di_code.ai.redaction import register
from di_code.session import SessionStore
from di_code.ui.export import export_command, export_text, format_of
from di_code.ui.export_markdown import fenced, inline_code
from tests.support.session_files import KEY, every_kind_session

MARKS = (
    "THINKING-MARK",
    "ANSWER-MARK",
    "READ-FAILED",
    "SUBAGENT-MARK",
    "NESTED-MARK",
    "SUMMARY-MARK",
    "ERROR-MARK",
    "second prompt",
    "escape tool ran",
)


@pytest.fixture
def saved(di_code_home: Path, tmp_path: Path) -> tuple[SessionStore, Path]:
    workspace = tmp_path / "work"
    workspace.mkdir()
    every_kind_session(di_code_home, workspace)
    register(KEY)  # as the chat's set-up does for the keys of the environment
    return SessionStore(di_code_home), workspace


def exported(saved: tuple[SessionStore, Path], kind: str) -> str:
    store, workspace = saved
    session = store.latest(workspace, write=False)
    assert session is not None
    return export_text(session, kind)  # type: ignore[arg-type]


def test_html_holds_every_kind_escaped_and_fetches_nothing(saved: tuple[SessionStore, Path]):
    page = exported(saved, "html")
    for mark in MARKS:
        assert mark in page
    assert "Fix &lt;b&gt;the&lt;/b&gt; parser &amp; run the tests[image]" in page
    assert "&lt;script&gt;document.title=" in page
    tags = re.findall(r"<[a-z]+[^>]*>", page, re.IGNORECASE)
    assert [tag for tag in tags if re.search(r"script|<img|<link|src=|href=", tag, re.I)] == []
    assert "default-src &#x27;none&#x27;" in page or "default-src 'none'" in page
    assert KEY not in page and "key=***" in page
    assert '<details class="thinking"><summary>Thinking</summary>' in page
    assert '<span class="add">+new_line = 2</span>' in page
    assert 'class="tool error"' in page and 'class="tool cut"' in page
    assert 'class="mark error"' in page and 'class="mark aborted"' in page
    assert "bad␛[31mname" in page and "\x1b" not in page
    assert "$ cat page.html" in page  # the chat's own title of the call


def test_markdown_fences_outlast_the_backticks_inside(saved: tuple[SessionStore, Path]):
    text = exported(saved, "md")
    for mark in MARKS:
        assert mark in text
    assert "`````\n<script>" in text  # the output holds a four-backtick fence
    assert KEY not in text and "key=***" in text
    assert "> Fix <b>the</b> parser & run the tests[image]" in text
    assert "**Error:** ERROR-MARK" in text and "**Aborted:**" in text
    assert "\x1b" not in text


def test_fence_and_inline_code_cannot_be_closed_by_their_content():
    assert fenced("a\n```\nb") == "````\na\n```\nb\n````"
    assert fenced("plain") == "```\nplain\n```"
    assert inline_code("`x`") == "`` `x` ``"
    assert inline_code("$ ls") == "`$ ls`"


def test_json_is_the_branch_as_the_loader_reads_it(saved: tuple[SessionStore, Path]):
    text = exported(saved, "json")
    data = json.loads(text)
    roles = [message["role"] for message in data["messages"]]
    assert roles.count("user") == 2 and roles.count("tool_result") == 5
    assert data["session"]["cwd"] == str(saved[1].resolve())
    assert KEY not in text and "***" in text
    assert "\x1b" not in text and "\\u001b" in text


def test_format_follows_the_file_name():
    assert format_of(Path("a.md")) == "md"
    assert format_of(Path("a.JSON")) == "json"
    assert format_of(Path("a.html")) == format_of(Path("a")) == "html"


class ChatStandIn(SimpleNamespace):
    """What `/export` uses of the chat; `start` runs the busy task to its end."""

    async def export(self, arg: str) -> bool:
        from di_code.system.abort import AbortController

        started: list[Any] = []
        self.start = started.append
        answer = await export_command(self, arg)  # type: ignore[arg-type]
        for work in started:
            await work(AbortController())
        return answer


async def test_slash_export_writes_the_chat_to_the_workspace(saved: tuple[SessionStore, Path]):
    store, workspace = saved
    session = store.latest(workspace, write=False)
    screen = io.StringIO()
    console = Console(file=screen, width=200, color_system=None)
    repl = ChatStandIn(
        setup=SimpleNamespace(session=session, workspace=workspace),
        agent=SimpleNamespace(transcript=[]),
        console=console,
    )
    assert await repl.export("notes.md")
    written = (workspace / "notes.md").read_text()
    assert "ANSWER-MARK" in written and KEY not in written
    assert await repl.export("")
    assert "SUMMARY-MARK" in (workspace / f"di-code-{session.id[:8]}.html").read_text()
    assert await repl.export("no/such/folder/x.html")
    assert "Exported to" in screen.getvalue() and "✗ Cannot write" in screen.getvalue()


async def test_slash_export_replaces_a_planted_symlink_instead_of_following_it(
    saved: tuple[SessionStore, Path], tmp_path: Path
):
    """A repository's `notes.html` that links to another file: that file is left alone."""
    store, workspace = saved
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (workspace / "notes.html").symlink_to(victim)
    repl = ChatStandIn(
        setup=SimpleNamespace(session=store.latest(workspace, write=False), workspace=workspace),
        agent=SimpleNamespace(transcript=[]),
        console=Console(file=io.StringIO(), width=200, color_system=None),
    )
    assert await repl.export("notes.html")
    assert victim.read_text() == "precious\n"
    assert not (workspace / "notes.html").is_symlink()
    assert "ANSWER-MARK" in (workspace / "notes.html").read_text()


def test_a_chat_without_a_saved_session_exports_its_messages():
    from di_code.ai.types import AssistantMessage, TextContent, UserMessage

    messages = [
        UserMessage([TextContent("UNSAVED-PROMPT")]),
        AssistantMessage([TextContent("UNSAVED-ANSWER")], "p", "m"),
    ]
    assert "UNSAVED-ANSWER" in export_text(messages, "html")
    assert "> UNSAVED-PROMPT" in export_text(messages, "md")
    data = json.loads(export_text(messages, "json"))
    assert data["session"] is None and [m["role"] for m in data["messages"]] == [
        "user",
        "assistant",
    ]
