"""What the chat prints (di_code.ui.scrollback) attacked from README alone, in a real
pseudo-terminal: a plugin tool's thread that prints a line in flushed pieces (a progress line,
a key among them) while the prompt is drawn, and one that writes through the rest of a text
file's interface (`writelines`, `closed`, `writable`), as it may under `di-code run`."""

from __future__ import annotations

from pathlib import Path

from tests.support.chat import needs_di_code, spawn_chat
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn
from tests.support.screen import Screen
from tests.support.stops import plugin_site

KEY = "sk-scrollback-0123456789abcdefghijklmnop"
PIECE = 8
"""Characters of the key in each flushed write: fewer than the 12 a shown piece may have."""

PLUGIN = f"""
import sys, time
from di_code.ai.types import TextContent

class _Tool:
    description = "prints while it runs"
    parameters = {{"type": "object"}}

class Pieces(_Tool):
    name = "pieces"

    def execute(self, tool_call_id, params, signal=None):  # a thread of its own
        sys.stdout.write("pieces:")
        for start in range(0, len({KEY!r}), {PIECE}):
            sys.stdout.write({KEY!r}[start:start + {PIECE}])
            sys.stdout.flush()
            time.sleep(0.1)  # more than the prompt's redraw gap: each piece alone
        print(" end")
        return [TextContent("pieces printed")]

class Lines(_Tool):
    name = "lines"

    def execute(self, tool_call_id, params, signal=None):
        if not sys.stdout.closed and sys.stdout.writable():
            sys.stdout.writelines(["first of two\\n", "second of two\\n"])
        return [TextContent("lines printed")]
"""


def chat_after_tool(server: LLMServer, tmp_path: Path, tool: str) -> Screen:
    """A chat whose model called the plugin `tool`, then answered `All done.`; its screen then."""
    server.script(Turn(tool_calls=(ToolCallSpec(tool, {}, "call-1"),)), Turn(text="All done."))
    site = plugin_site(tmp_path, PLUGIN, ["pieces", "lines"])
    env = {"PYTHONPATH": str(site), "OPENAI_API_KEY": KEY}
    child = spawn_chat(server, tmp_path, "--yes", "--sandbox", "off", env=env)
    screen = Screen(child)
    try:
        screen.wait_for("›")
        child.sendline("go")
        screen.wait_for("›", after="All done.")
    finally:
        child.close(force=True)
    return screen


@needs_di_code
def test_a_line_printed_in_flushed_pieces_shows_whole_and_its_key_in_no_piece(
    llm_server: LLMServer, tmp_path: Path, di_code_home: Path
) -> None:
    """A flushed part of a line written above the prompt was drawn over by the prompt (the
    line lost), and each piece of the key reached the terminal on its own, too short to be
    hidden."""
    screen = chat_after_tool(llm_server, tmp_path, "pieces")
    assert "pieces:*** end" in screen.text
    pieces = [KEY[start : start + PIECE] for start in range(0, len(KEY), PIECE)]
    assert [piece for piece in pieces if piece in screen.written] == []


@needs_di_code
def test_a_plugin_tool_writes_through_the_whole_text_file_interface(
    llm_server: LLMServer, tmp_path: Path, di_code_home: Path
) -> None:
    """The chat's stdout had only `write` and `flush` of it: `writelines` failed the tool."""
    screen = chat_after_tool(llm_server, tmp_path, "lines")
    assert "first of two\nsecond of two" in screen.text
    assert "lines printed" in screen.text
