"""Which servers a workspace needs (di_code.tools.lsp.warm): found by names alone, the
shallowest first; dependency, hidden and linked folders are not looked into, a FIFO is no
file, and a folder of many entries costs no more than the bound."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from di_code.tools.lsp import warm
from di_code.tools.lsp.servers import ServerSpec

PY = ServerSpec("py", ("x",), (".py",))
GO = ServerSpec("go", ("x",), (".go",))


def test_the_shallowest_file_of_each_server_is_found(tmp_path: Path) -> None:
    (tmp_path / "src" / "deep").mkdir(parents=True)
    (tmp_path / "src" / "deep" / "b.py").write_text("")
    (tmp_path / "src" / "a.py").write_text("")
    found = warm.first_files(tmp_path, [PY, GO])
    assert found == {"py": tmp_path / "src" / "a.py"}


def test_dependency_hidden_and_linked_folders_and_fifos_are_not_taken(
    tmp_path: Path,
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.py").write_text("")
    project = tmp_path / "project"
    for folder in ("node_modules", ".venv", "venv"):
        (project / folder).mkdir(parents=True)
        (project / folder / "dep.py").write_text("")
    (project / "linked").symlink_to(outside)
    os.mkfifo(project / "pipe.go")
    assert warm.first_files(project, [PY, GO]) == {}


def test_the_look_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(warm, "MAX_ENTRIES", 50)
    for number in range(200):
        (tmp_path / f"f{number:03d}.txt").write_text("")
    (tmp_path / "zz").mkdir()
    (tmp_path / "zz" / "late.py").write_text("")
    assert warm.first_files(tmp_path, [PY]) == {}
