"""The user's command files and skills in `di-code chat`, in a real pseudo-terminal."""

from __future__ import annotations

from pathlib import Path

import pexpect
import pytest

from tests.cli.conftest import request_text
from tests.support.chat import DI_CODE, spawn_chat
from tests.support.extensions import PLUGIN
from tests.support.files import write
from tests.support.llm_server import LLMServer, Turn


@pytest.mark.skipif(not DI_CODE.exists(), reason="di-code is not installed in this venv")
def test_commands_skills_and_plugin_tools_in_chat(
    llm_server: LLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.claude of this machine
    write(tmp_path / "site/shout_plugin.py", PLUGIN)
    write(
        tmp_path / "site/shout_plugin-0.1.dist-info/entry_points.txt",
        "[di_code.tools]\nshout = shout_plugin:Shout\n",
    )
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "site"))
    workspace = tmp_path / "ws"
    write(
        workspace / ".di-code/commands/review.md",
        "---\ndescription: Review a file closely\nargument-hint: <file>\n---\n"
        "Review $ARGUMENTS for off-by-one errors.\n",
    )
    shadowed = write(workspace / ".claude/commands/help.md", "my own help")
    write(
        workspace / ".agents/skills/release/SKILL.md",
        "---\nname: release\ndescription: Cut a release\n---\nbody\n",
    )
    llm_server.script(Turn(text="Looks correct to me."))
    child = spawn_chat(llm_server, workspace)
    try:
        child.expect(f"! {shadowed}: the built-in /help wins over this command file")
        child.expect("›")
        child.sendline("/help")
        child.expect(r"/review <file>\s+Review a file closely")
        child.sendline("/skills")
        child.expect("release: Cut a release")
        child.sendline("/tools")
        child.expect(r"shout\s+Upper-case a text")
        child.send("/revi")
        child.expect("Review a file closely")  # the completion menu shows the description
        child.send("\t")
        child.send(" src/calc.py\r")
        child.expect("Looks correct to me")
        child.sendline("/exit")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    [request] = [request_text(r.body) for r in llm_server.requests if r.method == "POST"]
    assert "Review src/calc.py for off-by-one errors." in request
