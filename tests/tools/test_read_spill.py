"""The full output bash saves is readable through `read`, and nothing else outside the
workspace becomes readable with it: not a neighbour in the spill folder, not a link put in a
spill file's place, not a file the write or edit tools are pointed at."""

from __future__ import annotations

import os
from pathlib import Path

from di_code.tools import default_tools
from di_code.tools.builtin.support.bash_policy import BashPolicy
from di_code.tools.builtin.support.spill import SpillFolder
from tests.tools.conftest import error_of, run, text_of


async def test_read_pages_through_the_full_output_bash_saved(
    workspace: Path, tmp_path: Path
) -> None:
    spill = SpillFolder(tmp_path / "spills")
    tools = {t.name: t for t in default_tools(workspace, bash=BashPolicy(spill=spill))}
    result = await run(tools["bash"], {"command": "seq 1 5000"})
    saved = result.details["full_output_path"]
    assert f"Full output: {saved}" in text_of(result)
    page = text_of(await run(tools["read"], {"path": saved, "offset": 2, "limit": 3}))
    assert page.startswith("     2\t2\n     3\t3\n     4\t4\n")
    last = text_of(await run(tools["read"], {"path": saved, "offset": 5000}))
    assert last.startswith("  5000\t5000")

    planted = Path(saved).with_name("bash-planted.log")  # in the same folder, not di-code's
    planted.write_text("not ours\n")
    assert (await error_of(tools["read"], {"path": str(planted)})).startswith("Path is outside")
    secret = tmp_path / "secret.txt"
    secret.write_text("secret\n")
    os.unlink(saved)
    os.symlink(secret, saved)  # a spill file swapped for a link leads nowhere else
    assert (await error_of(tools["read"], {"path": saved})).startswith("Path is outside")
    for name, params in (("write", {"content": "x"}), ("edit", {"old_text": "a", "new_text": "b"})):
        refused = await error_of(tools[name], {"path": saved, **params})
        assert refused.startswith("Path is outside")
    assert secret.read_text() == "secret\n"
