"""grep and find on ripgrep against a hostile repository and a hostile model (README:
Reliability's "Nothing lost" bullets on grep and find, the Threat model; HOSTILE.md).

Each case builds the repository on disk and runs the real tools on the real rg."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

import pytest

from di_code.agent import AgentTool
from di_code.tools.builtin.find import FindTool
from di_code.tools.builtin.grep import GrepTool
from di_code.tools.builtin.support.ripgrep import find_ripgrep
from di_code.tools.common.errors import ToolError
from di_code.tools.common.workspace import Workspace
from tests.tools.conftest import error_of, run, text_of

LIVENESS = 60  # seconds; a bound for "ends", never a speed claim
EVIL_SCRIPT = "#!/bin/sh\ntouch '{marker}'\ncat\n"


def plant(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def evil_program(root: Path) -> tuple[Path, Path]:
    """A program a repository ships, and the file it would leave if anything ran it."""
    marker = root.parent / "evil-ran"
    program = root / "evil.sh"
    program.write_text(EVIL_SCRIPT.format(marker=marker))
    program.chmod(0o755)
    return program, marker


async def output(tool: AgentTool, **params: object) -> str:
    return text_of(await asyncio.wait_for(run(tool, params), LIVENESS))


def tools(root: Path, ripgrep: str | None = None) -> tuple[AgentTool, AgentTool]:
    space = Workspace.create(root)
    binary = ripgrep or find_ripgrep()
    return GrepTool(space, binary), FindTool(space, binary)


async def test_a_repositorys_ignore_and_rgignore_files_neither_hide_nor_bring_back_files(
    workspace: Path,
) -> None:
    plant(workspace, {
        ".gitignore": "*.log\n",
        ".ignore": "visible.txt\n!*.log\n",
        ".rgignore": "!debug.log\nsrc/\n",
        "visible.txt": "TOKEN visible\n",
        "src/app.py": "TOKEN app\n",
        "debug.log": "TOKEN log\n",
    })  # fmt: skip
    grep, find = tools(workspace)
    assert await output(grep, pattern="TOKEN") == (
        "src/app.py:1: TOKEN app\nvisible.txt:1: TOKEN visible"
    )
    assert await output(find, pattern="*.log") == "No files found matching *.log"
    assert await output(find, pattern="**/*.{py,txt}") == "src/app.py\nvisible.txt"


async def test_a_gitignore_that_re_includes_git_folders_does_not_expose_them(
    workspace: Path,
) -> None:
    plant(workspace, {
        ".gitignore": "!.git\n!.git/\n!.git/**\n!**/.git/**\n",
        ".git/config": "[core]\nTOKEN root git\n",
        "vendor/lib/.git/config": "TOKEN nested git\n",
        "vendor/lib/code.c": "TOKEN code\n",
    })  # fmt: skip
    grep, find = tools(workspace)
    assert await output(grep, pattern="TOKEN") == "vendor/lib/code.c:1: TOKEN code"
    for glob in (".git/config", "**/.git/*", "vendor/lib/.git/config", "config"):
        assert await output(grep, pattern="TOKEN", glob=glob) == "No matches found", glob
        assert await output(find, pattern=glob) == f"No files found matching {glob}", glob


async def test_an_rg_config_file_named_by_the_environment_is_never_read(
    workspace: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A config would let a repository add `--pre` (a program run on every file) or
    `--follow`; rg runs with --no-config whatever RIPGREP_CONFIG_PATH says."""
    program, marker = evil_program(workspace)
    (outside / "secret.txt").write_text("TOKEN outside\n")
    (workspace / "out").symlink_to(outside)
    plant(workspace, {
        ".ripgreprc": f"--pre={program}\n--follow\n--no-ignore\n",
        ".gitignore": "*.log\n",
        "debug.log": "TOKEN log\n",
        "a.txt": "TOKEN here\n",
    })  # fmt: skip
    monkeypatch.setenv("RIPGREP_CONFIG_PATH", str(workspace / ".ripgreprc"))
    grep, find = tools(workspace)
    assert await output(grep, pattern="TOKEN") == "a.txt:1: TOKEN here"
    assert "secret" not in await output(find, pattern="*")
    assert not marker.exists()


async def test_symlinks_out_of_the_workspace_and_link_loops_are_not_followed(
    workspace: Path, outside: Path
) -> None:
    (outside / "secret.txt").write_text("TOKEN outside\n")
    (workspace / "out").symlink_to(outside)
    (workspace / "secret.txt").symlink_to(outside / "secret.txt")
    (workspace / "loop").symlink_to("loop")
    (workspace / "sub").mkdir()
    (workspace / "sub" / "up").symlink_to("..")
    (workspace / "sub" / "a.txt").write_text("TOKEN here\n")
    grep, find = tools(workspace)
    assert await output(grep, pattern="TOKEN") == "sub/a.txt:1: TOKEN here"
    assert await output(find, pattern="**/*.txt") == "sub/a.txt"
    for path in ("out", "secret.txt", "out/secret.txt", str(outside)):
        assert "outside the workspace" in await error_of(grep, {"pattern": "T", "path": path})
        assert "outside the workspace" in await error_of(find, {"pattern": "*", "path": path})


async def test_fifos_and_devices_in_the_tree_do_not_block_grep(workspace: Path) -> None:
    os.mkfifo(workspace / "pipe.txt")
    os.mknod(workspace / "zero.txt", stat.S_IFCHR | 0o666, os.makedev(1, 5))  # /dev/zero
    (workspace / "a.txt").write_text("TOKEN here\n")
    grep, find = tools(workspace)
    assert await output(grep, pattern="TOKEN") == "a.txt:1: TOKEN here"
    assert await output(grep, pattern="TOKEN", glob="*.txt") == "a.txt:1: TOKEN here"
    assert await output(grep, pattern="TOKEN", glob="{pipe,zero}.txt") == "No matches found"
    assert await output(find, pattern="*.txt") == "a.txt"
    for path in ("pipe.txt", "zero.txt"):
        assert await error_of(grep, {"pattern": "TOKEN", "path": path}) == (
            f"Not a regular file: {path}"
        )


async def test_hostile_file_names_are_found_escaped_and_named_back(workspace: Path) -> None:
    """A newline, a leading dash (an rg option, were it read as one), bytes that are not
    UTF-8: each is one escaped line, and the escaped name given back finds the file."""
    names = {
        "a\nb.txt": "a\\x0ab.txt", "--pre=evil.sh": "--pre=evil.sh", "-L": "-L",
        "caf\udce9.txt": "caf\\xe9.txt", "tab\there\r.txt": "tab\\x09here\\x0d.txt",
    }  # fmt: skip
    _, marker = evil_program(workspace)
    for name in names:
        (workspace / name).write_text("TOKEN\n")
    grep, find = tools(workspace)
    shown = sorted(names.values())
    assert (await output(find, pattern="*")).split("\n") == sorted([*shown, "evil.sh"])
    assert (await output(grep, pattern="TOKEN")).split("\n") == [f"{s}:1: TOKEN" for s in shown]
    for escaped in shown:
        assert await output(grep, pattern="TOKEN", path=escaped) == f"{escaped}:1: TOKEN"
    assert not marker.exists()


async def test_a_pattern_or_glob_that_is_an_rg_option_is_only_text(workspace: Path) -> None:
    program, marker = evil_program(workspace)
    (outside_link := workspace / "etc").symlink_to("/etc")
    assert outside_link.is_symlink()
    flags = [f"--pre={program}", "-L", "--follow", "--search-zip", "--no-ignore", "-uuu"]
    plant(workspace, {
        "flags.md": "".join(f"{flag}\n" for flag in flags),
        ".gitignore": "*.log\n",
        "debug.log": "--no-ignore\n",
    })  # fmt: skip
    grep, find = tools(workspace)
    for flag in flags:
        assert await output(grep, pattern=flag, literal=True) == (
            f"flags.md:{flags.index(flag) + 1}: {flag}"
        )
        assert await output(grep, pattern="TOKEN", glob=flag) == "No matches found"
        assert await output(find, pattern=flag) == f"No files found matching {flag}"
    assert await output(grep, pattern="passwd", glob="-L") == "No matches found"
    assert not marker.exists()


async def test_a_glob_never_brings_back_a_gitignored_file_when_a_subfolder_is_searched(
    workspace: Path,
) -> None:
    plant(workspace, {
        ".gitignore": "*.log\nsecrets/\n",
        "sub/x.log": "TOKEN log\n",
        "sub/secrets/key.txt": "TOKEN key\n",
        "sub/ok.txt": "TOKEN ok\n",
    })  # fmt: skip
    grep, find = tools(workspace)
    for glob in ("*.log", "**/*.log", "x.log", "{x.log,secrets/key.txt}", "secrets/*", "**"):
        hits = await output(grep, pattern="TOKEN", path="sub", glob=glob)
        assert hits in ("sub/ok.txt:1: TOKEN ok", "No matches found"), glob
        found = await output(find, pattern=glob, path="sub")
        assert found in ("sub/ok.txt", f"No files found matching {glob}"), glob


async def test_a_catastrophic_regex_on_one_huge_line_ends(workspace: Path) -> None:
    (workspace / "one.txt").write_text("a" * 20_000_000 + "!")  # one line, no newline
    grep, _ = tools(workspace)
    for pattern in ("(a+)+$", "(a|aa)*b", "(a*)*c", "^(a|a?)+$"):
        assert await output(grep, pattern=pattern) == "No matches found"


async def test_a_match_on_a_huge_line_is_shown_cut_beside_the_other_hits(workspace: Path) -> None:
    (workspace / "a.min.js").write_text("a" * 20_000_000 + "!")  # one line, no newline
    (workspace / "b.txt").write_text("aaa!\n")
    grep, _ = tools(workspace)
    assert await output(grep, pattern="a+!") == ("a.min.js:1: " + "a" * 500 + "...\nb.txt:1: aaa!")


async def test_a_pattern_with_a_nul_character_is_a_one_line_tool_error(workspace: Path) -> None:
    (workspace / "a.txt").write_text("a\0b\n")
    grep, find = tools(workspace)
    assert "NUL" in await error_of(grep, {"pattern": "a\0b"})
    assert "NUL" in await error_of(grep, {"pattern": "a", "glob": "*\0.txt"})
    assert "NUL" in await error_of(find, {"pattern": "*\0.txt"})


async def test_absurd_limits_and_context_give_results_or_one_line(workspace: Path) -> None:
    """The schema bounds them below only: a limit past rg's numbers is one line (or works)."""
    (workspace / "a.txt").write_text("TOKEN\nx\n")
    grep, find = tools(workspace)
    for huge in (2**62, 2**63, 10**30):
        for tool, params, shown in (
            (grep, {"pattern": "TOKEN", "limit": huge}, "a.txt:1: TOKEN"),
            (grep, {"pattern": "TOKEN", "context": huge}, "a.txt:1: TOKEN\na.txt-2- x"),
            (find, {"pattern": "*", "limit": huge}, "a.txt"),
        ):
            try:
                assert await output(tool, **params) == shown
            except ToolError as error:
                assert "\n" not in str(error), params


async def test_a_folder_swapped_for_a_link_during_a_search_cannot_lead_grep_outside(
    workspace: Path, outside: Path
) -> None:
    """A command running beside grep (the model's, in the background) swaps the searched
    folder for a link to a folder outside between two rg runs (the listing that checks a
    path glob and the search). The swap is made at that moment by an `rg` that does it and
    then runs the real rg."""
    (workspace / "sub").mkdir()
    (workspace / "sub" / "notes.txt").write_text("TOKEN inside\n")
    (outside / "notes.txt").write_text("TOKEN outside secret\n")
    once = workspace.parent / "swapped"
    swapper = workspace.parent / "rg"
    swapper.write_text(
        "#!/bin/sh\n"
        f"if [ ! -e '{once}' ]; then touch '{once}'; mv '{workspace}/sub' '{once}.sub'; "
        f"ln -s '{outside}' '{workspace}/sub'; fi\n"
        f"exec '{find_ripgrep()}' \"$@\"\n"
    )
    swapper.chmod(0o755)
    grep, _ = tools(workspace, str(swapper))
    hits = await output(grep, pattern="TOKEN", path="sub", glob="{notes.txt,a/b}")
    assert "outside" not in hits


async def test_a_file_swapped_for_a_link_before_rg_opens_it_cannot_lead_grep_outside(
    workspace: Path, outside: Path
) -> None:
    """As above, for one file named: the swap comes after the workspace check, when rg runs."""
    (workspace / "notes.txt").write_text("TOKEN inside\n")
    (outside / "secret.txt").write_text("TOKEN outside secret\n")
    swapper = workspace.parent / "rg"
    swapper.write_text(
        "#!/bin/sh\n"
        f"ln -sf '{outside}/secret.txt' '{workspace}/notes.txt'\n"
        f"exec '{find_ripgrep()}' \"$@\"\n"
    )
    swapper.chmod(0o755)
    grep, _ = tools(workspace, str(swapper))
    hits = await output(grep, pattern="TOKEN", path="notes.txt")
    assert "outside" not in hits


@pytest.mark.parametrize("kind", ["a link to /dev/zero", "a sparse file of 1 TiB"])
async def test_an_ignore_file_that_never_ends_does_not_exhaust_memory(
    workspace: Path, kind: str
) -> None:
    """rg reads a .gitignore whole, as lines: one of zeros without end took a gigabyte a
    second until the machine ran out. Its heap is bounded; grep says what it found."""
    (workspace / "sub").mkdir()
    (workspace / "a.txt").write_text("TOKEN\n")
    ignore = workspace / "sub" / ".gitignore"
    if kind == "a link to /dev/zero":
        ignore.symlink_to("/dev/zero")
    else:
        with ignore.open("wb") as sparse:
            sparse.truncate(1 << 40)
    grep, _ = tools(workspace)
    try:
        assert await output(grep, pattern="TOKEN") == "a.txt:1: TOKEN"
    except ToolError as error:
        assert "\n" not in str(error)


@pytest.mark.parametrize("tool", ["grep", "find"])
async def test_an_ignore_file_that_is_a_fifo_does_not_hold_the_search(
    workspace: Path, tool: str
) -> None:
    """rg opens each folder's .gitignore: one that is a FIFO held the search until the user
    stopped it. The FIFO reads as empty; the search ends with what it found."""
    (workspace / "sub").mkdir()
    (workspace / "a.txt").write_text("TOKEN\n")
    os.mkfifo(workspace / "sub" / ".gitignore")
    grep, find = tools(workspace)
    call = run(grep, {"pattern": "TOKEN"}) if tool == "grep" else run(find, {"pattern": "*.txt"})
    try:
        found = text_of(await asyncio.wait_for(call, 10))
    except TimeoutError:
        pytest.fail(f"{tool} still waits on the FIFO after 10 s")
    assert found == ("a.txt:1: TOKEN" if tool == "grep" else "a.txt")
