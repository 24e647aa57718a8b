"""The guarded place for secrets: every channel out of the process passes its text
through di_code.ai.redaction. Read from the code: each place that writes bytes out (a file, a
pipe, a child's stdin, a log, a request to a server) is either a channel that uses redaction,
or a place that writes something else (a file's exact bytes, a fixed line) and says why. A new
writer fails here until it is one or the other. stdout and stderr are one channel for
everything (`print`, Rich, prompt-toolkit): the CLI routes them through `RedactingStream`
before anything runs.

The channels themselves are attacked end to end in tests/acp/test_acp_secrets.py,
tests/cli/test_secrets_channels.py, tests/ui/test_chat_secrets_e2e.py and
tests/batch/test_batch_secrets.py."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "di_code"

CHANNELS = {
    "acp/stdio.py:serve": "RedactingWriter",  # the editor's messages
    "ai/log_file.py:log_to": "RedactingFormatter",  # --log FILE
    "ai/providers/http.py:_send": "foreign_secrets_hidden",  # a model request's body
    "batch/results.py:append": "redact",  # RESULTS.jsonl
    "session/jsonl.py:_write_all": "redact",  # session files: lines made by `encode`
    "tools/builtin/fetch.py:_get": "holds_secret",  # a URL the model fetches
    "ui/export.py:write_export": "redact",  # /export and `di-code export -o FILE`
    "tools/policy/user_hooks.py:run_hook": "redact_bytes",  # a hook's stdin
    "ui/pager.py:page": "redact_bytes",  # $PAGER's stdin: the chat's full output
}
"""Where text leaves the process, and the guarded place's name the place's module uses."""

NOT_CHANNELS = {
    "acp/files.py:write": "the model's file through the editor: an action (stdio.ACTIONS)",
    "ai/providers/limits.py:_get": "a model's id, to the local server that runs it",
    "system/private_files.py:write_private": "a private file's bytes for its caller: the "
    "snapshots' record (session/stat_cache.py:save), sizes and times of the workspace's files",
    "system/files/opener.py:replace_whole": "a file's bytes for its caller (each one listed)",
    "system/files/opener.py:write_into_stream": "a pipe's bytes for its caller (each one listed)",
    "system/stop_signals.py:say": "a fixed line naming the signal",
    "cli/output.py:_write_whole": "the text Writer.line has passed through the guarded place",
    "system/stop_signals.py:_restore_terminal": "fixed terminal reset bytes",
    "system/stop_signals.py:_saying_pipe": "one fixed byte into a pipe of its own",
    "system/lone_copy.py:_done_in_copy": "one fixed byte to di-code: its copy began",
    "batch/checkout.py:_raw_attributes": "fixed git attributes",
    "batch/worker.py:_run_process": "the user's task prompt; the task's `run` writes its logs",
    "cli/batch_command.py:batch_command": "makes the results file, writes nothing",
    "config/trust.py:_write": "trust records: folders and hashes",
    "session/git_run.py:_wait": "git's stdin: the workspace's own names and bytes",
    "session/safe_files.py:write_file": "undo's backups and restores: a file's exact bytes",
    "session/stat_cache.py:_write": "the private index: names, blobs and stat data of files",
    "session/undo_plan.py:_written_as_text": "undo's exact text through the editor",
    "tools/builtin/support/atomic_write.py:write_atomically": "the write and edit tools' file",
    "tools/builtin/edit.py:_edit_in_editor": "the edit tool's file through the editor",
    "tools/builtin/write.py:run": "the write tool's file through the editor",
    "tools/builtin/support/spill.py:open": "bash's full output file, the session's private record",
    "tools/builtin/support/jobs.py:type": "what the model types into its job: an action",
    "tools/extensions/mcp.py:__init__": "/dev/null for an MCP server's stderr",
}
"""Places that write bytes that are not shown to anyone: an action's exact bytes, or fixed
text. (What the model does is not redacted: a command runs as written, a file is written as
given; what anyone is shown of it is.)"""

WRITERS = {"write_text", "write_bytes", "connect_write_pipe", "basicConfig", "FileHandler"}
WRITERS |= {"communicate", "build_request", "post", "replace_whole", "write_into_stream"}
WRITERS |= {"feed_stdin"}
"""Calls that write out whatever their receiver is (a path, a pipe, a child's stdin, a
server)."""


def _mode(call: ast.Call, position: int) -> str:
    for argument in call.args[position : position + 1]:
        if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
            return argument.value
    for keyword in call.keywords:
        if keyword.arg == "mode" and isinstance(keyword.value, ast.Constant):
            return str(keyword.value.value)
    return "r"


def _writes(call: ast.Call) -> str | None:
    """What kind of write `call` is (None when it writes nothing out)."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    on_os = isinstance(func, ast.Attribute) and getattr(func.value, "id", None) == "os"
    if on_os and name == "write":
        return "os.write"
    if on_os and name == "fdopen" and set(_mode(call, 1)) & set("wax+"):
        return "os.fdopen"
    if name in WRITERS:
        return str(name)
    is_method = isinstance(func, ast.Attribute) and not on_os  # `path.open("w")`
    if name == "open" and set(_mode(call, 0 if is_method else 1)) & set("wax+"):
        return "open"
    if any(keyword.arg == "input" for keyword in call.keywords) and name in {"run", "run_child"}:
        return "input="
    return None


def writers(source: str) -> Iterator[tuple[str, str]]:
    """(function, kind) for each write out in `source`, named by its innermost function."""
    for function in ast.walk(ast.parse(source)):
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            for node in _own_nodes(function):
                if isinstance(node, ast.Call) and (kind := _writes(node)):
                    yield function.name, kind


def _own_nodes(function: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function, not of the functions nested in it."""
    for child in ast.iter_child_nodes(function):
        if not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            yield child
            yield from _own_nodes(child)


def found() -> dict[str, set[str]]:
    places: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        for function, kind in writers(path.read_text(encoding="utf-8")):
            places.setdefault(f"{relative}:{function}", set()).add(kind)
    return places


def test_every_write_out_is_a_channel_through_the_guarded_place_or_says_why_not() -> None:
    listed = {**CHANNELS, **NOT_CHANNELS}
    unknown = {place: kinds for place, kinds in found().items() if place not in listed}
    assert unknown == {}, "pass the text through di_code.ai.redaction, or say why it is not shown"


def test_each_channel_uses_the_guarded_place_and_each_listed_place_still_writes() -> None:
    places = found()
    for place, guard in CHANNELS.items():
        module = place.partition(":")[0]
        tree = ast.parse((PACKAGE / module).read_text(encoding="utf-8"))
        imported = {
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module == "di_code.ai.redaction"
            for alias in node.names
        }
        used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        assert imported and guard in used, f"{place} writes around the guarded place"
    assert set(CHANNELS) | set(NOT_CHANNELS) <= set(places), "a listed place writes no more"


def test_the_cli_routes_stdout_and_stderr_through_the_guarded_place_first() -> None:
    source = (PACKAGE / "cli" / "guarded.py").read_text(encoding="utf-8")
    assert "redact_output()" in source


def test_the_reader_catches_a_planted_writer() -> None:
    planted = """
import os, subprocess
def leak(path, fd, text, child):
    path.write_text(text)
    os.write(fd, text.encode())
    open(path, "w").write(text)
    path.open("ab").write(b"x")
    os.fdopen(fd, "wb")
    subprocess.run(["cat"], input=text)
    child.communicate(text)
def reads(path, fd):
    open(path).read()
    os.fdopen(fd, "rb")
"""
    kinds = sorted(kind for _, kind in writers(planted))
    assert kinds == ["communicate", "input=", "open", "open", "os.fdopen", "os.write", "write_text"]


def test_the_pager_is_given_the_text_redacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The chat's full output (Ctrl-O) goes to $PAGER's stdin, not through stdout."""
    from di_code.ai.redaction import register
    from di_code.ui.pager import page

    key = "sk-pager-secret-0123456789"
    register(key)
    monkeypatch.setenv("PAGER", "cat")
    shown = tmp_path / "shown.txt"
    with shown.open("w") as out:
        page(f"bash printed {key}\n", out)
    assert shown.read_text() == "bash printed ***\n"
