"""`write_into_stream`: an export's `-o` that names a pipe or a device is written into, and
stays what it is; anything else is left to be replaced as a file is."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from di_code.system.files.opener import write_into_stream


def test_a_fifo_with_a_reader_gets_the_bytes_and_stays_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    read_end = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # the reader is there first
    data = b"x" * 10_000  # what the pipe holds until it is read
    try:
        assert write_into_stream(fifo, data)
        assert os.read(read_end, 100_000) == data
    finally:
        os.close(read_end)
    assert fifo.is_fifo()


def test_a_fifo_nobody_reads_is_an_error_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(OSError) as failed:
        write_into_stream(fifo, b"data")
    assert failed.value.errno == errno.ENXIO


def test_a_device_is_written_into(tmp_path: Path) -> None:
    link = tmp_path / "null-link"
    link.symlink_to(os.devnull)  # as /dev/stdout links to what it is
    assert write_into_stream(link, b"data") and link.is_symlink()


def test_a_file_a_link_to_one_and_nothing_are_left_to_be_replaced(tmp_path: Path) -> None:
    regular = tmp_path / "chat.html"
    regular.write_bytes(b"old")
    link = tmp_path / "link.html"
    link.symlink_to(regular)
    for path in (regular, link, tmp_path / "missing.html", tmp_path):
        assert write_into_stream(path, b"new") is False
    assert regular.read_bytes() == b"old"
