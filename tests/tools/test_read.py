"""read: whole lines, offset/limit, the output limits and their notices, images."""

from __future__ import annotations

import asyncio
import base64
import tracemalloc
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import pytest

from di_code.agent import AgentTool
from di_code.ai import ImageContent, TextContent
from di_code.tools.builtin.read import INLINE_BYTES
from di_code.tools.builtin.support.image_files import IMAGE_MAX_BYTES
from tests.tools.conftest import error_of, run, text_of

T = TypeVar("T")
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + b"\x00" * 20


def numbered(count: int, width: int = 0) -> str:
    return "".join(f"line {i}{'x' * width}\n" for i in range(1, count + 1))


def cat_n(lines: list[str], first: int = 1) -> str:
    """Lines as read shows them: `cat -n`'s right-aligned number in 6 columns, a tab, the line."""
    return "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(lines, first))


async def test_reads_text_with_line_numbers_as_cat_n_prints_them(
    tools: dict[str, AgentTool], workspace: Path
) -> None:
    """The numbers are the positions lsp and grep use; the text after the tab is the line."""
    (workspace / "a.txt").write_bytes(b"one\r\n\ttwo\n\nthree")
    result = await run(tools["read"], {"path": "a.txt"})
    assert text_of(result) == "     1\tone\n     2\t\ttwo\n     3\t\n     4\tthree"
    assert result.details is None


async def test_offset_and_limit_give_a_window_with_a_notice(
    tools: dict[str, AgentTool], workspace: Path
) -> None:
    (workspace / "a.txt").write_text(numbered(10))
    result = await run(tools["read"], {"path": "a.txt", "offset": 3, "limit": 2})
    assert text_of(result) == (
        "     3\tline 3\n     4\tline 4\n\n[6 more lines in file. Use offset=5 to continue.]"
    )


async def test_a_limit_reaching_the_end_has_no_notice(
    tools: dict[str, AgentTool], workspace: Path
) -> None:
    (workspace / "a.txt").write_text(numbered(4))
    result = await run(tools["read"], {"path": "a.txt", "offset": 3, "limit": 2})
    assert text_of(result) == cat_n(["line 3", "line 4"], 3)


async def test_line_limit_of_2000(tools: dict[str, AgentTool], workspace: Path) -> None:
    (workspace / "a.txt").write_text(numbered(2500))
    result = await run(tools["read"], {"path": "a.txt"})
    lines = text_of(result).split("\n")
    assert lines[:2] == ["     1\tline 1", "     2\tline 2"]
    assert lines[1999] == "  2000\tline 2000"
    assert lines[2000:] == ["", "[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]"]
    assert result.details == {
        "truncated": True,
        "truncated_by": "lines",
        "total_lines": 2500,
        "output_lines": 2000,
    }


async def test_byte_limit_of_50_kb_keeps_whole_lines(
    tools: dict[str, AgentTool], workspace: Path
) -> None:
    (workspace / "a.txt").write_text(numbered(300, width=990))  # ~1000 bytes a line
    result = await run(tools["read"], {"path": "a.txt", "offset": 11})
    body, notice = text_of(result).split("\n\n")
    shown = body.split("\n")
    assert len("\n".join(line.split("\t", 1)[1] for line in shown).encode()) <= 50 * 1024
    assert shown[0].startswith("    11\tline 11") and all(
        line.endswith("x" * 990) for line in shown
    )
    last = 10 + len(shown)
    assert notice == f"[Showing lines 11-{last} of 300. Use offset={last + 1} to continue.]"
    assert result.details is not None and result.details["truncated_by"] == "bytes"


async def test_a_line_longer_than_50_kb_shows_its_start_and_points_to_bash(
    tools: dict[str, AgentTool], workspace: Path
) -> None:
    """Never nothing: the line's first 50 KB (cut between characters), then how to go on."""
    (workspace / "a.txt").write_text("short\n" + "é" * 30_000 + "\nafter\n")
    result = await run(tools["read"], {"path": "a.txt", "offset": 2})
    assert text_of(result) == "     2\t" + "é" * 25_600 + (
        "\n\n[Line 2 is longer than 50 KB: its first 50 KB are shown. Use bash: "
        "sed -n '2p' a.txt | cut -b 51201-102400 for the next 50 KB, or offset=3 to continue.]"
    )
    first = text_of(await run(tools["read"], {"path": "a.txt"}))
    assert first.startswith("     1\tshort\n\n[Showing")
    assert text_of(await run(tools["read"], {"path": "a.txt", "offset": 3})) == "     3\tafter"


async def test_offset_beyond_the_end(tools: dict[str, AgentTool], workspace: Path) -> None:
    (workspace / "a.txt").write_text(numbered(3))
    message = await error_of(tools["read"], {"path": "a.txt", "offset": 5})
    assert message == "Offset 5 is beyond end of file (3 lines total)"


async def test_empty_file(tools: dict[str, AgentTool], workspace: Path) -> None:
    (workspace / "a.txt").write_text("")
    assert text_of(await run(tools["read"], {"path": "a.txt"})) == "(empty file)"


async def test_missing_file_and_folder(tools: dict[str, AgentTool], workspace: Path) -> None:
    assert await error_of(tools["read"], {"path": "nope.txt"}) == "File not found: nope.txt"
    (workspace / "dir").mkdir()
    assert await error_of(tools["read"], {"path": "dir"}) == "Is a directory: dir"


async def test_images_are_recognised_by_content(
    tools: dict[str, AgentTool], workspace: Path
) -> None:
    (workspace / "picture.dat").write_bytes(PNG)
    result = await run(tools["read"], {"path": "picture.dat"})
    assert result.content == [
        TextContent("Read image file [image/png]"),
        ImageContent(base64.b64encode(PNG).decode(), "image/png"),
    ]


@pytest.mark.parametrize(
    "head, mime",
    [
        (b"\xff\xd8\xff\xe0", "image/jpeg"),
        (b"GIF89a", "image/gif"),
        (b"RIFF\0\0\0\0WEBP", "image/webp"),
    ],
)
async def test_other_image_formats(
    tools: dict[str, AgentTool], workspace: Path, head: bytes, mime: str
) -> None:
    (workspace / "img").write_bytes(head + b"\0" * 16)
    result = await run(tools["read"], {"path": "img"})
    assert isinstance(result.content[1], ImageContent) and result.content[1].mime_type == mime


async def test_images_over_the_cap_are_refused(
    tools: dict[str, AgentTool], workspace: Path
) -> None:
    (workspace / "big.png").write_bytes(PNG + b"\0" * IMAGE_MAX_BYTES)
    size = len(PNG) + IMAGE_MAX_BYTES
    assert await error_of(tools["read"], {"path": "big.png"}) == (
        f"Image is too large: big.png is {size} bytes (limit {IMAGE_MAX_BYTES} bytes)"
    )


async def test_other_binary_files_are_refused(tools: dict[str, AgentTool], workspace: Path) -> None:
    (workspace / "a.bin").write_bytes(b"ELF\0\1\2")
    assert await error_of(tools["read"], {"path": "a.bin"}) == "Cannot read binary file: a.bin"


async def test_a_deep_offset_in_a_big_file_does_not_load_it(
    tools: dict[str, AgentTool], workspace: Path
) -> None:
    big = workspace / "big.txt"
    with big.open("w") as f:
        for block in range(110):
            f.write("".join(f"row {block * 10_000 + i}\n" for i in range(10_000)))
    size = big.stat().st_size  # about 12 MB, 1,100,000 lines
    tracemalloc.start()
    try:
        result = await run(tools["read"], {"path": "big.txt", "offset": 1_000_000, "limit": 2})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert text_of(result) == (
        "1000000\trow 999999\n1000001\trow 1000000\n\n"
        "[99999 more lines in file. Use offset=1000002 to continue.]"
    )
    assert peak < size / 4


class CountingExecutor(ThreadPoolExecutor):
    """A real thread pool that counts the work handed to it."""

    submitted = 0

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        self.submitted += 1
        return super().submit(fn, *args, **kwargs)


async def test_a_small_file_is_read_without_a_worker_thread_a_large_one_in_one(
    tools: dict[str, AgentTool], workspace: Path
) -> None:
    """The hand-off to a thread costs more than reading a small file; a large one (whose
    lines are all counted) still leaves the event loop free while it is read."""
    line = "the quick brown fox jumps over the lazy dog\n"
    (workspace / "small.txt").write_text(line * (INLINE_BYTES // len(line)))
    (workspace / "large.txt").write_text(line * (INLINE_BYTES // len(line) + 1))
    pool = CountingExecutor(max_workers=1)
    asyncio.get_running_loop().set_default_executor(pool)
    small = await run(tools["read"], {"path": "small.txt", "limit": 1})
    assert (text_of(small).split("\n")[0], pool.submitted) == (cat_n([line.strip()]), 0)
    large = await run(tools["read"], {"path": "large.txt", "limit": 1})
    assert (text_of(large).split("\n")[0], pool.submitted) == (cat_n([line.strip()]), 1)
    assert await error_of(tools["read"], {"path": "missing.txt"}) == ("File not found: missing.txt")
    assert pool.submitted == 2  # what cannot be told small goes to the thread as before
