"""The file opener: every file a model names or a workspace holds is opened through
di_code.system.files (non-blocking, regular files only, confined where the caller is, bounded
reads). Read from the code: any other open of a file, anywhere in the package, fails here
unless its module is one of OWN_FILES, which open only di-code's own files (sessions, caches,
/proc) or a file the user names for a batch, and say which."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "di_code"
GUARDED = "di_code.system.files"

OWN_FILES: dict[str, str] = {
    "di_code.system.children": "/proc of the process groups it started",
    "di_code.system.lazy_exports": "di-code's own package source (its __init__ files)",
    "di_code.system.private_files": "the opener for di-code's own private files (sessions, spill)",
    "di_code.ai.providers.request_slots": "lock files in di-code's home",
    "di_code.system.stop_signals": "os.devnull, where stdout points once its reader is gone",
    "di_code.system.fifo_waits": "/proc of rg, and a FIFO rg waits to open: O_PATH, then opened "
    "for writing (and closed, never written) only when it is a FIFO",
    "di_code.batch.checkout": "info/attributes in a task checkout's git folder, made by di-code; "
    "the copy of a folder the user names for a batch, links copied as links and all but regular "
    "files left out before the copy opens them (_not_copied)",
    "di_code.batch.results": "the results file the user names for the batch",
    "di_code.batch.tasks": "the task file the user names (a pipe such as <(…) is welcome)",
    "di_code.batch.worker": "a task's prompt, stream and stderr files in the batch's folder",
    "di_code.cli.batch_child": "/proc of the batch's children",
    "di_code.cli.batch_command": "the results file the user names",
    "di_code.config.trust": "di-code's trust file in its home",
    "di_code.session.jsonl": "session files",
    "di_code.session.stat_cache": "the snapshot stat cache in di-code's home",
    "di_code.session.store": "session files",
    "di_code.tools.builtin.support.output_buffer": "bash's spill file (SpillFolder.open)",
    "di_code.tools.builtin.support.job_log": "a job's output file (SpillFolder.open)",
    "di_code.tools.process.session_network": "/proc/<pid>/ns/net of the bubblewrap it started",
    "di_code.tools.extensions.mcp": "os.devnull for an MCP server's stderr",
    "di_code.tools.process.placeholders": "a folder opened to hold sandbox placeholders",
    "di_code.tools.process.sandbox_mounts": "/proc/self/mountinfo",
}
"""Modules that open only di-code's own files (or the system's), never one a model names or a
workspace holds: each says which."""

COPIES = {"copy", "copy2", "copyfile", "copytree", "move"}
"""shutil's copies, which open what they copy themselves (a FIFO, a device, through a link)."""

PATH_ARGS = {"read_text": 0, "read_bytes": 0, "write_text": 1, "write_bytes": 1}
"""pathlib's reading and writing methods and how many positional arguments each takes."""


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def opens(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """(line, what) for each call in `tree` that opens a file by name: builtins.open, io.open,
    os.open, shutil's copies, and pathlib's open, read_text, read_bytes, write_text and
    write_bytes (told from methods of the same name by their arguments: a Path's take none, or
    only a mode)."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func, args = node.func, node.args
        if isinstance(func, ast.Name) and func.id == "open":
            yield node.lineno, "open()"
        elif isinstance(func, ast.Attribute):
            owner = func.value.id if isinstance(func.value, ast.Name) else None
            if func.attr == "open" and owner in ("os", "io", "builtins"):
                yield node.lineno, f"{owner}.open()"
            elif owner == "shutil" and func.attr in COPIES:
                yield node.lineno, f"shutil.{func.attr}()"
            elif func.attr == "open" and (not args or _is_mode(args[0])):
                yield node.lineno, ".open()"
            elif len(args) == PATH_ARGS.get(func.attr, -1):
                yield node.lineno, f".{func.attr}()"


def _is_mode(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def violations(name: str, source: str) -> list[str]:
    """Where module `name` opens a file around the opener (none for the opener and OWN_FILES)."""
    if name == GUARDED or name.startswith(GUARDED + ".") or name in OWN_FILES:
        return []
    return [f"{name}:{line} {what}" for line, what in sorted(opens(ast.parse(source)))]


def test_every_file_is_opened_through_the_guarded_place() -> None:
    found = [
        v
        for path in sorted(PACKAGE.rglob("*.py"))
        for v in violations(module_name(path), path.read_text(encoding="utf-8"))
    ]
    assert found == []


def test_each_exception_is_still_needed() -> None:
    paths = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    stale = [
        name
        for name in OWN_FILES
        if name not in paths or not list(opens(ast.parse(paths[name].read_text("utf-8"))))
    ]
    assert stale == []


def test_the_check_catches_each_way_around_the_guarded_place() -> None:
    source = (
        "import os\n"
        "from pathlib import Path\n"
        "def peek(path: Path, name: str) -> bytes:\n"
        "    with open(name, 'rb') as f:\n"
        "        f.read()\n"
        "    os.close(os.open(name, os.O_RDONLY))\n"
        "    path.read_text()\n"
        "    path.write_bytes(b'x')\n"
        "    shutil.copytree(path, name, symlinks=True)\n"
        "    with path.open('rb') as f:\n"
        "        return f.read()\n"
    )
    name = "di_code.tools.builtin.planted"
    assert violations(name, source) == [
        f"{name}:4 open()", f"{name}:6 os.open()", f"{name}:7 .read_text()",
        f"{name}:8 .write_bytes()", f"{name}:9 shutil.copytree()", f"{name}:10 .open()",
    ]  # fmt: skip
    assert violations("di_code.session.jsonl", source) == []  # a named exception
    editor_read = "async def f(editor, path):\n    await editor.read_text(path)\n"
    assert violations(name, editor_read) == []  # the editor's buffers: not opened here
