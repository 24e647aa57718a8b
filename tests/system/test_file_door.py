"""The file opener's reading helpers on real files, FIFOs and folders: what is not a regular
file is refused before a byte is read, and lines are skipped across chunk boundaries."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from di_code.system.files.opener import NotRegularFile, open_in, skip_lines


def test_a_fifo_is_refused_and_its_descriptor_closed(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    folder = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        before = len(os.listdir("/proc/self/fd"))
        with pytest.raises(NotRegularFile) as refused:
            open_in(folder, "pipe")  # O_NONBLOCK: opening a FIFO nobody writes does not wait
        assert refused.value.filename == "pipe"
        assert len(os.listdir("/proc/self/fd")) == before
        with pytest.raises(IsADirectoryError):
            os.mkdir(tmp_path / "sub")
            open_in(folder, "sub")
        (tmp_path / "file").write_bytes(b"bytes")
        with open_in(folder, "file") as f:
            assert f.read() == b"bytes"
    finally:
        os.close(folder)


@pytest.mark.parametrize(
    ("data", "count", "skipped", "rest"),
    [
        (b"a\nb\nc\n", 2, 2, b"c\n"),
        (b"a\nb\nc", 5, 3, b""),  # a last line without its newline counts
        (b"a\nb\n", 5, 2, b""),
        (b"a\nb\n", 0, 0, b"a\nb\n"),
        (b"line\n" * 300_000, 250_000, 250_000, b"line\n" * 50_000),  # past the 1st MB chunk
    ],
)
def test_lines_are_skipped_across_chunks(
    data: bytes, count: int, skipped: int, rest: bytes
) -> None:
    f = io.BytesIO(data)
    assert skip_lines(f, count) == skipped
    assert f.read() == rest
