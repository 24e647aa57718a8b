"""The file opener's line counting and bounded reads (di_code.system.files.opener), on files and on
text in memory (an editor's buffer is read by the same code)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from di_code.system.files.opener import COUNT_BYTES, FileTooLarge, count_lines, read_at_most


def test_lines_are_counted_in_memory_as_on_disk(tmp_path: Path) -> None:
    data = b"a\nb\nc"
    (tmp_path / "f").write_bytes(data)
    with (tmp_path / "f").open("rb") as f:
        f.readline()
        on_disk = count_lines(f)
    memory = io.BytesIO(data)
    memory.readline()
    assert on_disk == count_lines(memory) == 2
    assert memory.tell() == len(data)


def test_more_than_the_bound_is_not_counted() -> None:
    big = io.BytesIO(b"\n" * (COUNT_BYTES + 1))
    assert count_lines(big) is None
    assert big.tell() == 0


def test_a_read_stops_one_byte_past_its_bound() -> None:
    assert read_at_most(io.BytesIO(b"abc"), 3) == b"abc"
    endless = io.BytesIO(b"x" * 100)
    with pytest.raises(FileTooLarge):
        read_at_most(endless, 10)
    assert endless.tell() == 11  # one byte past the bound, not the whole


class Buffers:
    """An editor's file system (EditorFiles): text it holds by path."""

    def __init__(self, texts: dict[Path, str]) -> None:
        self.texts = texts

    async def read_text(self, path: Path) -> str:
        return self.texts[path]

    async def write_text(self, path: Path, text: str) -> None:
        self.texts[path] = text


async def test_a_window_of_an_editors_buffer_counts_the_rest(tmp_path: Path) -> None:
    from di_code.tools.builtin.read import ReadTool
    from di_code.tools.common.workspace import Workspace
    from tests.tools.conftest import run, text_of

    buffers = Buffers({tmp_path.resolve() / "notes.txt": "one\ntwo\nthree\n"})
    read = ReadTool(Workspace.create(tmp_path), editor=buffers)
    result = await run(read, {"path": "notes.txt", "limit": 1})
    assert text_of(result) == "     1\tone\n\n[2 more lines in file. Use offset=2 to continue.]"
