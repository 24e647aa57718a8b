"""The file opener (di_code.system.files.opener) on real files, folders, FIFOs and symlinks: only
regular files are opened, no link is followed where none may be, a FIFO never blocks, reads stop
at their bound or at a stop, and line counts are those the module's docstring defines."""

from __future__ import annotations

import errno
import io
import os
import re
import stat
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from di_code.system.abort import AbortController
from di_code.system.files.opener import (
    CHUNK,
    COUNT_BYTES,
    FileTooLarge,
    NotRegularFile,
    Stopped,
    chunks,
    count_lines,
    create_new,
    folder_in,
    open_in,
    open_path,
    open_real,
    open_target,
    parent_folder,
    read_at_most,
    read_path,
    replace_whole,
    require_regular,
    skip_lines,
    status_of,
    temp_name,
)
from di_code.system.files.resolve import Target
from tests.support.permission_faults import needs_permission_faults

LIVENESS = 10.0
"""Seconds an open of a FIFO may take before the test calls it blocked (it takes microseconds)."""


def open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[int]:
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    yield fd
    os.close(fd)


def ends_in_time(action: Callable[[], Any]) -> BaseException | None:
    """What `action` raised (None when it returned), failing the test if it blocks."""
    outcome: list[BaseException | None] = []

    def attempt() -> None:
        try:
            action()
        except BaseException as error:
            outcome.append(error)
        else:
            outcome.append(None)

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(LIVENESS)
    assert outcome, "the open blocked"
    return outcome[0]


def test_a_regular_file_is_opened_for_reading_only(tmp_path: Path, folder: int) -> None:
    (tmp_path / "f").write_bytes(b"data")
    with open_in(folder, "f") as f:
        assert f.read() == b"data"
        with pytest.raises(OSError):
            os.write(f.fileno(), b"x")


def test_a_fifo_is_refused_at_once_and_its_descriptor_closed(tmp_path: Path, folder: int) -> None:
    os.mkfifo(tmp_path / "pipe")
    before = open_fds()
    error = ends_in_time(lambda: open_in(folder, "pipe"))
    assert isinstance(error, NotRegularFile)
    assert (error.errno, error.strerror, error.filename) == (
        errno.EINVAL,
        "Not a regular file",
        "pipe",
    )
    assert open_fds() == before


def test_a_folder_is_a_directory_error_naming_it(tmp_path: Path, folder: int) -> None:
    (tmp_path / "sub").mkdir()
    before = open_fds()
    with pytest.raises(IsADirectoryError) as raised:
        open_in(folder, "sub")
    assert (raised.value.errno, raised.value.filename) == (errno.EISDIR, "sub")
    assert raised.value.strerror == os.strerror(errno.EISDIR)
    assert open_fds() == before


def test_a_symlink_is_not_followed(tmp_path: Path, folder: int) -> None:
    (tmp_path / "secret").write_text("s")
    (tmp_path / "link").symlink_to(tmp_path / "secret")
    with pytest.raises(OSError) as raised:
        open_in(folder, "link")
    assert raised.value.errno == errno.ELOOP


def test_a_target_without_a_folder_is_not_found() -> None:
    with pytest.raises(FileNotFoundError) as raised:
        open_target(Target(None, "gone.txt", Path("/nowhere/gone.txt")))
    assert (raised.value.errno, raised.value.filename) == (errno.ENOENT, "gone.txt")
    assert raised.value.strerror == os.strerror(errno.ENOENT)


def test_a_target_opens_its_name_in_its_folder(tmp_path: Path, folder: int) -> None:
    (tmp_path / "f").write_bytes(b"in the folder")
    with open_target(Target(folder, "f", tmp_path / "f")) as f:
        assert f.read() == b"in the folder"


def test_a_path_the_user_names_is_relative_to_the_working_folder_and_links_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "real.txt").write_bytes(b"real")
    (tmp_path / "named.txt").symlink_to("real.txt")
    monkeypatch.chdir(tmp_path)
    with open_path(Path("named.txt")) as f:
        assert f.read() == b"real"
    assert read_path(Path("named.txt"), 4) == b"real"
    with pytest.raises(FileNotFoundError):
        open_path(Path("missing.txt"))


def test_read_path_refuses_a_file_over_its_limit_with_the_files_size(tmp_path: Path) -> None:
    (tmp_path / "big").write_bytes(b"x" * 1000)
    with pytest.raises(FileTooLarge) as raised:
        read_path(tmp_path / "big", 10)
    assert raised.value.size == 1000
    assert raised.value.errno == errno.EFBIG
    assert str(raised.value) == "[Errno 27] 1000 bytes, over the limit of 10"


def test_a_real_path_is_reached_without_following_any_link(tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "f").write_bytes(b"f")
    (tmp_path / "alias").symlink_to("dir")
    (tmp_path / "dir" / "link").symlink_to("f")
    with open_real(tmp_path / "dir" / "f") as f:
        assert f.read() == b"f"
    with pytest.raises(OSError):
        open_real(tmp_path / "alias" / "f")
    with pytest.raises(OSError):
        open_real(tmp_path / "dir" / "link")


def test_the_status_of_a_target_is_never_followed_nor_opened(tmp_path: Path, folder: int) -> None:
    (tmp_path / "f").write_bytes(b"four")
    (tmp_path / "sub").mkdir()
    (tmp_path / "link").symlink_to("f")
    os.mkfifo(tmp_path / "pipe")
    status = status_of(Target(folder, "f", tmp_path / "f"))
    assert status is not None and status.st_size == 4
    assert status_of(Target(folder, "missing", tmp_path / "missing")) is None
    assert status_of(Target(None, "f", tmp_path / "f")) is None
    with pytest.raises(IsADirectoryError) as raised:
        status_of(Target(folder, "sub", tmp_path / "sub"))
    assert raised.value.filename == "sub"
    with pytest.raises(NotRegularFile) as refused:
        status_of(Target(folder, "link", tmp_path / "link"))
    assert refused.value.filename == "link"
    before = open_fds()
    with pytest.raises(NotRegularFile):  # a FIFO: no open, so nothing to block on
        status_of(Target(folder, "pipe", tmp_path / "pipe"))
    assert open_fds() == before


def test_require_regular_names_what_it_refuses(tmp_path: Path) -> None:
    require_regular(os.stat(__file__))
    with pytest.raises(IsADirectoryError) as raised:
        require_regular(os.stat(tmp_path), "the folder")
    assert raised.value.filename == "the folder"
    fifo = os.stat_result((stat.S_IFIFO | 0o644, 0, 0, 1, 0, 0, 0, 0, 0, 0))
    with pytest.raises(NotRegularFile) as refused:
        require_regular(fifo, "the pipe")
    assert refused.value.filename == "the pipe"
    with pytest.raises(NotRegularFile) as unnamed:
        require_regular(fifo)
    assert unnamed.value.filename == ""
    assert NotRegularFile().filename == ""


def test_a_temp_name_is_short_hidden_beside_the_file_and_never_the_same() -> None:
    long = "n" * 250
    first, second = temp_name(long), temp_name(long)
    assert re.fullmatch(r"\.n{32}\.[0-9a-f]{12}\.tmp", first)
    assert first != second
    assert re.fullmatch(r"\.a\.b\.[0-9a-f]{12}\.tmp", temp_name("a.b"))


def test_a_folder_in_a_folder_is_opened_only_if_it_is_one_and_no_link(
    tmp_path: Path, folder: int
) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "inner").write_text("i")
    (tmp_path / "alias").symlink_to("sub")
    (tmp_path / "file").write_text("f")
    sub = folder_in(folder, "sub")
    try:
        assert os.stat("inner", dir_fd=sub).st_size == 1  # the folder itself, passed through
        with pytest.raises(OSError):
            os.write(sub, b"x")
    finally:
        os.close(sub)
    with pytest.raises(OSError):
        folder_in(folder, "alias")
    with pytest.raises(NotADirectoryError):
        folder_in(folder, "file")


def test_a_new_file_is_only_created_never_reused(tmp_path: Path, folder: int) -> None:
    fd = create_new(folder, "new", 0o600)
    try:
        os.write(fd, b"written")
        with pytest.raises(OSError):
            os.read(fd, 1)
    finally:
        os.close(fd)
    assert (tmp_path / "new").read_bytes() == b"written"
    assert stat.S_IMODE((tmp_path / "new").stat().st_mode) == 0o600
    with pytest.raises(FileExistsError):
        create_new(folder, "new", 0o600)
    (tmp_path / "dangling").symlink_to(tmp_path / "made-through-the-link")
    with pytest.raises(FileExistsError):
        create_new(folder, "dangling", 0o600)
    assert not (tmp_path / "made-through-the-link").exists()


def test_the_parent_folder_is_held_and_made_only_when_asked(tmp_path: Path) -> None:
    before = open_fds()
    with parent_folder(tmp_path / "f") as held:
        assert os.path.samestat(os.fstat(held), os.stat(tmp_path))
    with pytest.raises(FileNotFoundError), parent_folder(tmp_path / "a" / "b" / "f"):
        pass
    assert not (tmp_path / "a").exists()
    with parent_folder(tmp_path / "a" / "b" / "f", make=True) as made:
        assert os.path.samestat(os.fstat(made), os.stat(tmp_path / "a" / "b"))
    (tmp_path / "alias").symlink_to("a")
    with pytest.raises(OSError), parent_folder(tmp_path / "alias" / "b" / "f", make=True):
        pass
    assert open_fds() == before


def test_chunks_come_in_the_size_asked_until_a_stop() -> None:
    assert list(chunks(io.BytesIO(b"abcde"), size=2)) == [b"ab", b"cd", b"e"]
    assert list(chunks(io.BytesIO(b"x" * (CHUNK + 1)))) == [b"x" * CHUNK, b"x"]
    assert list(chunks(io.BytesIO(b""))) == []
    controller = AbortController()
    reading = chunks(io.BytesIO(b"abcd"), controller.signal, size=2)
    assert next(reading) == b"ab"
    controller.abort()
    with pytest.raises(Stopped):
        next(reading)


def test_a_read_takes_up_to_its_bound_and_names_the_size_past_it() -> None:
    assert read_at_most(io.BytesIO(b"abc"), 3) == b"abc"
    assert read_at_most(io.BytesIO(b""), 0) == b""
    big = b"y" * (2 * CHUNK + 5)
    assert read_at_most(io.BytesIO(big), len(big)) == big
    with pytest.raises(FileTooLarge) as raised:
        read_at_most(io.BytesIO(big), CHUNK)
    assert raised.value.size == len(big)
    with pytest.raises(FileTooLarge) as past:
        read_at_most(io.BytesIO(b"abcd"), 3)
    assert (past.value.size, str(past.value)) == (4, "[Errno 27] 4 bytes, over the limit of 3")
    controller = AbortController()
    controller.abort()
    with pytest.raises(Stopped):
        read_at_most(io.BytesIO(b"abc"), 10, controller.signal)


@pytest.mark.parametrize(
    ("data", "count", "skipped", "rest"),
    [
        (b"a\nb\nc\n", 0, 0, b"a\nb\nc\n"),
        (b"a\nb\nc\n", -1, 0, b"a\nb\nc\n"),
        (b"a\nb\nc\n", 1, 1, b"b\nc\n"),
        (b"a\nb\nc\n", 2, 2, b"c\n"),
        (b"a\nb\nc\n", 3, 3, b""),
        (b"a\nb\nc\n", 5, 3, b""),
        (b"a\nb\nc", 5, 3, b""),
        (b"a\nb\nc", 3, 3, b""),
        (b"a\nb\nc", 2, 2, b"c"),
        (b"a\n\n\nb", 2, 2, b"\nb"),
        (b"", 4, 0, b""),
        (b"no newline", 1, 1, b""),
    ],
)
def test_skipping_lines_lands_after_the_last_one_skipped(
    data: bytes, count: int, skipped: int, rest: bytes
) -> None:
    f = io.BytesIO(data)
    assert skip_lines(f, count) == skipped
    assert f.read() == rest


def test_skipping_lines_across_chunks_and_from_a_position() -> None:
    line = b"z" * 1000 + b"\n"
    data = b"head\n" + line * 3000  # about 3 chunks
    f = io.BytesIO(data)
    f.readline()
    assert skip_lines(f, 2500) == 2500
    assert f.tell() == 5 + 2500 * len(line)
    assert f.read() == line * 500
    unterminated = io.BytesIO(b"q" * (CHUNK + 10))
    assert skip_lines(unterminated, 3) == 1
    ends_a_chunk = io.BytesIO(b"q" * (CHUNK - 1) + b"\n")
    assert skip_lines(ends_a_chunk, 3) == 1


def test_skipping_lines_stops_with_the_stop() -> None:
    controller = AbortController()
    controller.abort()
    with pytest.raises(Stopped):
        skip_lines(io.BytesIO(b"a\nb\n"), 1, controller.signal)


def test_lines_counted_from_the_position_and_the_position_moved_to_the_end() -> None:
    f = io.BytesIO(b"a\nb\nc")
    f.readline()
    assert count_lines(f) == 2
    assert f.tell() == 5
    assert count_lines(io.BytesIO(b"")) == 0
    controller = AbortController()
    controller.abort()
    with pytest.raises(Stopped):
        count_lines(io.BytesIO(b"a\n"), controller.signal)


def test_lines_are_counted_when_at_most_the_bound_follows_the_position() -> None:
    f = io.BytesIO(b"first\n" + b"x" * COUNT_BYTES)
    f.readline()
    assert count_lines(f) == 1


@needs_permission_faults
def test_a_folder_one_may_pass_but_not_list_holds_files_one_may_open(tmp_path: Path) -> None:
    """A home folder of mode 711 (or a `mktemp -d` above a checkout): its files are the
    user's to open and replace; the folder is passed through, never read."""
    closed = tmp_path / "closed"
    (closed / "inner").mkdir(parents=True)
    (closed / "inner" / "notes.txt").write_bytes(b"kept\n")
    closed.chmod(0o300)  # write and pass, no listing
    try:
        with parent_folder(closed / "inner" / "notes.txt") as folder:
            with open_in(folder, "notes.txt") as handle:
                assert handle.read() == b"kept\n"
            replace_whole(folder, "notes.txt", b"new\n")
        with parent_folder(closed / "inner" / "new" / "file.txt", make=True) as folder:
            os.close(create_new(folder, "file.txt", 0o600))
    finally:
        closed.chmod(0o700)
    assert (closed / "inner" / "notes.txt").read_bytes() == b"new\n"
    assert (closed / "inner" / "new" / "file.txt").exists()
