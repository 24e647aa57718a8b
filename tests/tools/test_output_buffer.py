"""The bash tool's output buffer and pipe reader: however the output is chunked, the model sees
the same tail, the line count is exact and the spill file holds every byte."""

from __future__ import annotations

import asyncio
import fcntl
import os
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from di_code.ai import AbortController
from di_code.tools.builtin.support import process
from di_code.tools.builtin.support.output_buffer import OutputBuffer, count_newlines
from di_code.tools.builtin.support.truncation import MAX_BYTES, MAX_LINES, keep_tail
from di_code.tools.process.program_env import KEY_VARIABLES, program_env

LINE_LENGTHS = [0, 1, 5, 40, 100, 3_000, 70_000]
CHUNK_SIZES = [13, 4_096, 65_536, 1024 * 1024]
RUN_BYTES = 150_000

ENV = program_env(KEY_VARIABLES)


@st.composite
def outputs(draw: st.DrawFn) -> bytes:
    """Runs of equal lines (short, long, longer than the whole limit), maybe unterminated."""
    runs = draw(
        st.lists(st.tuples(st.sampled_from(LINE_LENGTHS), st.integers(1, 2_500)), max_size=4)
    )
    body = b"".join(
        (b"x" * length + b"\n") * max(1, min(count, RUN_BYTES // (length + 1)))
        for length, count in runs
    )
    return body + draw(st.sampled_from([b"", b"end", "é".encode() * 40_000]))


def chunked(data: bytes, sizes: list[int]) -> list[bytes]:
    chunks, start = [], 0
    for size in sizes * (len(data) // max(1, sum(sizes)) + 1):
        if start >= len(data):
            break
        chunks.append(data[start : start + size])
        start += size
    return chunks


def expected_tail(data: bytes) -> tuple[str, int, bool]:
    """The reference: the kept lines, the total line count and whether anything was cut."""
    lines = data.decode("utf-8", "replace").split("\n")
    if lines[-1] == "":
        lines.pop()
    kept, cut = keep_tail(lines)
    return "\n".join(kept), len(lines), cut is not None


@settings(max_examples=40)
@given(outputs(), st.lists(st.sampled_from(CHUNK_SIZES), min_size=1, max_size=4))
def test_any_chunking_gives_the_whole_outputs_tail(data: bytes, sizes: list[int]) -> None:
    buffer = OutputBuffer()
    for chunk in chunked(data, sizes):
        buffer.feed(chunk)
    buffer.close()
    snapshot = buffer.snapshot()
    text, total, cut = expected_tail(data)
    try:
        assert snapshot.text == text
        assert (snapshot.truncation is not None) == cut
        if snapshot.truncation is not None:
            assert snapshot.truncation.total_lines == total
            assert snapshot.first_line == total - snapshot.truncation.output_lines + 1
            assert snapshot.spill_path is not None
            assert Path(snapshot.spill_path).read_bytes() == data
        else:
            assert snapshot.spill_path is None and snapshot.first_line == 1
    finally:
        if snapshot.spill_path is not None:
            os.unlink(snapshot.spill_path)


def test_snapshots_while_spilling_show_the_latest_lines() -> None:
    buffer = OutputBuffer()
    try:
        for start in range(0, 30_000, 1_000):
            buffer.feed(b"".join(b"%d\n" % i for i in range(start + 1, start + 1_001)))
            snapshot = buffer.snapshot()
            if start >= 2_000:
                assert snapshot.text.split("\n")[-1] == str(start + 1_000)
                assert snapshot.first_line == start + 1_000 - MAX_LINES + 1
    finally:
        buffer.close()
        assert buffer.spill_path is not None
        os.unlink(buffer.spill_path)


def test_memory_holds_nothing_per_chunk_once_spilled() -> None:
    buffer = OutputBuffer()
    chunk = (b"y" * 99 + b"\n") * 10_000
    buffer.feed(chunk)
    tracemalloc.start()
    try:
        for _ in range(50):
            buffer.feed(chunk)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert buffer.spill_path is not None
    try:
        assert peak < len(chunk)
        buffer.close()
        snapshot = buffer.snapshot()
        assert snapshot.truncation is not None
        assert snapshot.truncation.total_lines == 510_000
        assert os.path.getsize(buffer.spill_path) == 51 * len(chunk)
    finally:
        os.unlink(buffer.spill_path)


def test_exactly_the_line_limit_fits_and_leaves_no_file() -> None:
    buffer = OutputBuffer()
    buffer.feed(b"".join(b"%d\n" % i for i in range(1, MAX_LINES + 1)))
    assert buffer.spill_path is not None
    buffer.close()
    snapshot = buffer.snapshot()
    assert (snapshot.truncation, snapshot.spill_path) == (None, None)
    assert snapshot.text.split("\n")[-1] == str(MAX_LINES)


@given(st.binary(max_size=3 * MAX_BYTES), st.booleans())
def test_both_ways_of_counting_newlines_agree(data: bytes, long_lines: bool) -> None:
    assert count_newlines(data + b"\n\nab\n", long_lines) == data.count(b"\n") + 3


def test_the_pipe_is_enlarged_where_linux_allows() -> None:
    get_size = getattr(fcntl, "F_GETPIPE_SZ", None)
    if get_size is None:
        pytest.skip("no F_GETPIPE_SZ on this platform")
    read_fd, write_fd = os.pipe()
    try:
        process._enlarge(write_fd)
        allowed = int(Path("/proc/sys/fs/pipe-max-size").read_text())
        assert fcntl.fcntl(write_fd, get_size) == min(process.PIPE_SIZE, allowed)
    finally:
        os.close(read_fd)
        os.close(write_fd)


def bash(command: str) -> list[str]:
    return [process.shell(), "-c", command]


async def test_a_failing_sink_is_raised_once_the_command_ends(tmp_path: Path) -> None:
    """The pipe is still drained: a command writing far more than it holds is not blocked."""
    calls = 0

    def sink(chunk: bytes) -> None:
        nonlocal calls
        calls += 1
        raise OSError("No space left on device")

    command = "head -c 20000000 /dev/zero; touch finished"
    with pytest.raises(OSError, match="No space left on device"):
        await asyncio.wait_for(
            process.run_in_group(
                bash(command), str(tmp_path), 30, AbortController().signal, sink, ENV
            ),
            30,
        )
    assert calls == 1
    assert (tmp_path / "finished").exists()


async def test_a_failing_sink_is_raised_despite_a_background_child(tmp_path: Path) -> None:
    def sink(chunk: bytes) -> None:
        raise OSError("No space left on device")

    command = "sleep 1000 & echo $! > bg.pid; echo hi"
    try:
        with pytest.raises(OSError, match="No space left on device"):
            await asyncio.wait_for(
                process.run_in_group(
                    bash(command), str(tmp_path), 30, AbortController().signal, sink, ENV
                ),
                30,
            )
    finally:
        os.kill(int((tmp_path / "bg.pid").read_text()), 9)


async def test_output_larger_than_the_pipe_arrives_whole_and_in_order(tmp_path: Path) -> None:
    received: list[bytes] = []

    command = "seq 1 300000; seq 1 300000 >&2"
    exit = await asyncio.wait_for(
        process.run_in_group(
            bash(command), str(tmp_path), 30, AbortController().signal, received.append, ENV
        ),
        30,
    )
    numbers = b"".join(b"%d\n" % i for i in range(1, 300_001))
    assert exit.code == 0
    assert b"".join(received) == numbers * 2
