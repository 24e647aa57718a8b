"""The diff a write would make against the file it replaces (what its approval shows)."""

from __future__ import annotations

from pathlib import Path

import pytest

from di_code.tools.builtin.write import PREVIEW_BYTES, preview_write
from di_code.tools.common.errors import ToolError
from di_code.tools.common.workspace import Workspace


def test_a_new_file_has_no_diff(tmp_path: Path) -> None:
    workspace = Workspace.create(tmp_path)
    assert preview_write(workspace, {"path": "new/a.txt", "content": "x\n"}) is None
    assert not (tmp_path / "new").exists()  # a preview makes no folders


def test_a_file_it_replaces_gives_the_diff_and_stays(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("keep\nold\n", encoding="utf-8")
    diff = preview_write(Workspace.create(tmp_path), {"path": "a.txt", "content": "keep\nnew\n"})
    assert diff is not None and "-old" in diff and "+new" in diff and " keep" in diff
    assert (tmp_path / "a.txt").read_text() == "keep\nold\n"


def test_a_path_outside_the_workspace_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ToolError):
        preview_write(Workspace.create(tmp_path), {"path": "../x.txt", "content": ""})


def test_a_file_too_big_to_diff_is_said(tmp_path: Path) -> None:
    size = PREVIEW_BYTES + 2
    (tmp_path / "big.log").write_bytes(b"x\n" * (size // 2))
    with pytest.raises(ToolError, match=rf"big\.log holds {size} bytes: too many to diff"):
        preview_write(Workspace.create(tmp_path), {"path": "big.log", "content": ""})
