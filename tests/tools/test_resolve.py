"""Resolution through open folders gives what realpath gives, follows symlinks that stay
inside, and creates folders only inside the workspace."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from di_code.agent import AgentTool
from di_code.system.files.resolve import MAX_LINKS, resolve_path
from di_code.tools import default_tools
from di_code.tools.common.workspace import Workspace
from tests.tools.conftest import error_of, run, text_of


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """Folders, files and symlinks of every kind: relative, absolute, chained, dangling,
    through `..`, and a loop."""
    (tmp_path / "a/b/c").mkdir(parents=True)
    (tmp_path / "a/b/c/f.txt").write_text("f")
    (tmp_path / "a/file.txt").write_text("x")
    (tmp_path / "rel").symlink_to("a/b")
    (tmp_path / "abs").symlink_to(tmp_path / "a/b/c")
    (tmp_path / "chain").symlink_to("rel/c")
    (tmp_path / "up").symlink_to("a/b/../../a")
    (tmp_path / "a/b/back").symlink_to("../..")
    (tmp_path / "dangling").symlink_to("nowhere/deeper")
    (tmp_path / "loop1").symlink_to("loop2")
    (tmp_path / "loop2").symlink_to("loop1")
    return tmp_path


@pytest.mark.parametrize(
    "relative",
    [
        ".",
        "a/b/c/f.txt",
        "rel/c/f.txt",
        "abs/f.txt",
        "chain/f.txt",
        "chain",
        "up/b/c",
        "rel/../file.txt",
        "abs/../../file.txt",
        "a/b/back/a/b/back/rel",
        "missing/x/../y.txt",
        "rel/missing/../c/f.txt",
        "dangling",
        "dangling/more",
        "a/file.txt/inner",
        "a/b/c/",
        "a/./b//c/.",
        "..",
        "../../..",
    ],
)
def test_same_real_path_as_realpath(tree: Path, relative: str) -> None:
    path = tree / relative
    with resolve_path(path, lambda _: True) as target:
        assert target.path == Path(os.path.realpath(path))


def test_a_symlink_loop_is_a_clear_error(tree: Path) -> None:
    with pytest.raises(OSError, match="Too many levels of symbolic links"):
        resolve_path(tree / "loop1", lambda _: True)


async def test_file_tools_report_a_loop_and_a_nul(tree: Path) -> None:
    tools = {tool.name: tool for tool in default_tools(tree)}
    assert await error_of(tools["read"], {"path": "loop1"}) == (
        "Cannot access loop1: Too many levels of symbolic links"
    )
    assert await error_of(tools["write"], {"path": "a\0b", "content": ""}) == (
        "Path contains a NUL character"
    )


def test_locate_keeps_its_meaning_for_search_tools(tree: Path) -> None:
    workspace = Workspace.create(tree / "a")
    assert workspace.locate("@b/c/") == (tree / "a/b/c", "b/c/")
    assert workspace.locate("missing") == (tree / "a/missing", "missing")


async def test_symlinked_folder_inside_is_followed_by_every_file_tool(
    tools: dict[str, AgentTool], workspace: Path
) -> None:
    (workspace / "real/deep").mkdir(parents=True)
    (workspace / "real/deep/f.txt").write_text("one")
    (workspace / "alias").symlink_to(workspace / "real/deep")
    (workspace / "alias.txt").symlink_to("real/deep/f.txt")
    assert text_of(await run(tools["read"], {"path": "alias/f.txt"})) == "     1\tone"
    await run(tools["edit"], {"path": "alias.txt", "old_text": "one", "new_text": "two"})
    await run(tools["write"], {"path": "alias/../new/g.txt", "content": "three"})
    assert (workspace / "real/deep/f.txt").read_text() == "two"
    assert (workspace / "alias.txt").is_symlink()
    assert (workspace / "real/new/g.txt").read_text() == "three"


async def test_a_symlink_from_one_root_into_another_is_inside(
    workspace: Path, tmp_path: Path
) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "notes.txt").write_text("notes")
    (workspace / "to_extra").symlink_to(extra)
    tools = {tool.name: tool for tool in default_tools(workspace, [extra])}
    await run(tools["write"], {"path": "to_extra/notes.txt", "content": "new notes"})
    assert (extra / "notes.txt").read_text() == "new notes"
    assert (workspace / "to_extra").is_symlink()


async def test_no_folder_is_made_outside(
    tools: dict[str, AgentTool], workspace: Path, tmp_path: Path
) -> None:
    (tmp_path / "outside").mkdir()
    (workspace / "link").symlink_to(tmp_path / "outside")
    message = await error_of(tools["write"], {"path": "link/new/f.txt", "content": "x"})
    assert message == "Path is outside the workspace: link/new/f.txt"
    assert list((tmp_path / "outside").iterdir()) == []


async def test_a_file_in_place_of_a_folder(tools: dict[str, AgentTool], workspace: Path) -> None:
    (workspace / "f.txt").write_text("x")
    assert await error_of(tools["read"], {"path": "f.txt/g"}) == "File not found: f.txt/g"
    assert await error_of(tools["write"], {"path": "f.txt/g", "content": "x"}) == (
        "Cannot access f.txt/g: Not a directory"
    )
    (workspace / "d").mkdir()
    assert await error_of(tools["write"], {"path": "d", "content": "x"}) == "Is a directory: d"


@pytest.mark.parametrize(("links", "resolves"), [(MAX_LINKS, True), (MAX_LINKS + 1, False)])
def test_links_are_followed_up_to_the_kernel_s_count_then_it_is_a_loop(
    tmp_path: Path, links: int, resolves: bool
) -> None:
    """As the kernel (and realpath) count: 40 links in a chain resolve, 41 are ELOOP."""
    (tmp_path / "end.txt").write_text("x")
    for n in range(links):
        (tmp_path / f"l{n}").symlink_to("end.txt" if n == links - 1 else f"l{n + 1}")
    if resolves:
        with resolve_path(tmp_path / "l0", lambda _: True) as target:
            assert target.path == tmp_path / "end.txt"
    else:
        with pytest.raises(OSError) as raised:
            resolve_path(tmp_path / "l0", lambda _: True)
        assert raised.value.errno == errno.ELOOP


def test_the_root_is_its_own_folder_named_dot() -> None:
    with resolve_path(Path("/"), lambda _: True) as target:
        assert (target.name, target.path) == (".", Path("/"))


@pytest.mark.parametrize("written", ["a/b/c/..", "a/b/back", "a/b/c/."])
def test_a_folder_reached_by_a_final_dot_dot_or_link_is_named_in_its_parent(
    tree: Path, written: str
) -> None:
    """`a/b/c/..` is `b` in `a`, as `a/b` is (a caller opens the name in the folder)."""
    with resolve_path(tree / written, lambda _: True) as target:
        real = Path(os.path.realpath(tree / written))
        assert target.name == real.name
        found = os.stat(target.name, dir_fd=target.folder, follow_symlinks=False)
        assert found.st_ino == real.stat().st_ino


def test_a_top_level_folder_reached_by_dot_dot_is_named_in_the_root(tmp_path: Path) -> None:
    top = tmp_path.parts[1]
    with resolve_path(Path("/", top, "missing-here", ".."), lambda _: True) as target:
        assert (target.name, target.path) == (top, Path("/", top))


def test_below_a_missing_folder_nothing_is_looked_up_from_the_working_folder(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A missing folder's rest is taken as written: a folder or link of the same name in the
    process's working folder is never opened or followed instead."""
    here = tmp_path / "here"
    (here / "x").mkdir(parents=True)
    (here / "x" / "secret").symlink_to("/etc/hostname")
    (here / "y").symlink_to("/etc")
    monkeypatch.chdir(here)
    for written in ("missing/x/secret", "missing/y/hostname"):
        with resolve_path(tree / written, lambda _: True) as target:
            assert target.path == tree / written
