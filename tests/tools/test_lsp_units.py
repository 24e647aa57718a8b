"""The pure parts of the language-server support: which servers exist (presets on PATH,
`[lsp.NAME]` over them, bad tables one warning) and what an edit's problems come to."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from di_code.config.settings import parse_settings
from di_code.config.trust import split_untrusted
from di_code.tools.lsp.report import Problem, changes, summary
from di_code.tools.lsp.servers import catalog, workspace_root
from di_code.tools.lsp.spawn import ServerStarter
from di_code.tools.process.program_env import KEY_VARIABLES


def on_path(*programs: str):  # type: ignore[no-untyped-def]
    return lambda name: f"/usr/bin/{name}" if name in programs else None


def test_presets_are_used_when_their_program_is_on_path() -> None:
    found = catalog({}, which=on_path("pyright-langserver", "gopls"))
    assert [s.name for s in found.servers] == ["pyright", "gopls"]
    assert found.servers[0].command == ("pyright-langserver", "--stdio")  # basedpyright absent
    assert {s.name for s in found.missing} == {"ruff", "typescript", "rust-analyzer", "clangd"}
    assert found.for_path(Path("x/a.go"))[0].name == "gopls"
    assert found.for_path(Path("a.md")) == []


def test_a_table_overrides_a_preset_adds_a_server_or_turns_one_off() -> None:
    tables = {
        "pyright": {"enabled": False},
        "ruff": {"command": ["ruff", "server", "--preview"]},
        "yaml": {"command": ["yaml-language-server", "--stdio"], "globs": ["*.yml", "*.yaml"]},
        "bad": {"command": "not a list", "extensions": [".x"]},
        "typo": {"command": ["x"], "extension": [".x"]},
    }
    found = catalog(tables, which=on_path("basedpyright-langserver"))
    assert [s.name for s in found.servers] == ["ruff", "yaml"]
    assert found.servers[0].command == ("ruff", "server", "--preview")
    assert found.servers[0].extensions == (".py", ".pyi")  # the preset's, kept
    assert found.for_path(Path("ci.yml"))[0].name == "yaml"
    assert found.warnings == (
        "lsp.bad ignored: command must be a list of strings",
        "lsp.typo ignored: unknown key extension",
    )


def test_an_untrusted_projects_lsp_table_is_held_back() -> None:
    data = {"lsp": {"evil": {"command": ["touch", "pwned"], "extensions": [".txt"]}}}
    assert parse_settings(data, "config.toml").lsp == data["lsp"]
    kept, left_out = split_untrusted(data)
    assert "lsp" not in kept and left_out == ["lsp.evil.command", "lsp.evil.extensions"]


def test_the_root_is_the_nearest_folder_with_a_marker(tmp_path: Path) -> None:
    (tmp_path / "sub" / "pkg").mkdir(parents=True)
    (tmp_path / "sub" / "pyproject.toml").write_text("")
    [spec] = catalog({}, which=on_path("ruff")).servers
    assert workspace_root(tmp_path / "sub" / "pkg" / "a.py", spec, tmp_path) == tmp_path / "sub"
    assert workspace_root(tmp_path / "b.py", spec, tmp_path) == tmp_path


def err(line: int, message: str) -> Problem:
    return Problem(line, 1, "error", message, "x")


def test_changes_match_problems_without_line_numbers() -> None:
    before = [err(1, "old"), err(5, "same")]
    after = [err(2, "old"), err(5, "same"), err(9, "same"), err(3, "new")]
    introduced, fixed = changes(before, after)
    assert introduced == [err(3, "new"), err(9, "same")]
    assert fixed == []
    assert changes(after, before)[1] == [err(3, "new"), err(9, "same")]


def test_summary_says_when_the_problems_before_are_unknown() -> None:
    assert summary("a.py", [], []) == ""
    assert summary("a.py", [err(3, "boom")], [], unsure=True) == (
        "Problems in a.py (language server; some may predate this change):\n"
        "a.py:3:1: error: boom [x]"
    )
    assert summary("a.py", [], [err(3, "boom")]) == "Fixed in a.py: error: boom"


async def test_a_server_starts_without_the_provider_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("MY_KEY", "sk-mine")
    names = "{'OPENAI_API_KEY', 'MY_KEY'}"
    code = f"import os, sys; sys.stdout.write(repr(sorted(os.environ.keys() & {names})))"
    starter = ServerStarter(KEY_VARIABLES | {"MY_KEY"}, cache=tmp_path / "cache")
    process = await starter.start("keys", (sys.executable, "-c", code), tmp_path, tmp_path)
    out, _ = await process.communicate()
    assert out == b"[]"


def test_a_server_name_ending_in_a_line_break_is_ignored() -> None:
    """`$` in a pattern also matches before a final newline: the whole name is held to it."""
    found = catalog({"ok\n": {"command": ["x"], "extensions": [".x"]}}, which=on_path("x"))
    assert "ok\n" not in [server.name for server in found.servers]
    assert found.warnings == (
        "lsp.ok\n ignored: names may use letters, digits, - and _ (at most 40)",
    )
