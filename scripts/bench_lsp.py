"""Benchmark: what language servers cost an edit, and where an edit's wait goes (issues 34, 47).

    .venv/bin/python -m scripts.bench_lsp [--server pyright|ruff] [--project generated|self]
        [--edits 10] [--rounds 3] [--code DIR]... [--setting 'typeCheckingMode = "basic"']...

The project: 200 generated modules that import each other (`generated`, the default) or a
copy of di-code's own `di_code/` package (`self`), in a temp folder. Each of `--edits` modules
is first read by the server (timed apart: the first touch), then edited `--rounds` times (a
line appended, through the edit tool), each edit once bare and once with the server's
diagnostics. Every edit with diagnostics is cut into its parts by timestamps taken here:

    before   the tool called → the file's write starts (what is known of it before)
    write    the edit tool's own work (reading, replacing, writing the file)
    send     the write done → the new text sent to the server (didChange)
    server   sent → the server's diagnostics for it arrive (publishDiagnostics, or the answer
             to a textDocument/diagnostic request), as read off the wire
    after    arrived → the tool's result, diagnostics in it

di-code's share is before + send + after. `--code DIR` (repeatable) measures the di-code tree
at DIR (e.g. an export of main) too, each in its own process, the trees interleaved edit
round by edit round, so that old and new are compared under the same load. Prints one JSON
object per tree. A benchmark, not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MODULES = 200


def tree_rss_mib(pid: int) -> float:
    """Resident memory of `pid` and its descendants, in MiB."""
    children: dict[int, list[int]] = {}
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                ppid = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(proc.name))
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        todo += children.get(current, [])
        try:
            status = Path(f"/proc/{current}/status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1])
    return total / 1024


def generate(project: Path) -> list[Path]:
    """MODULES typed modules in one package, each importing the three before it and using
    what they define (so a change is checked against real imports); their paths."""
    package = project / "app"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (project / "pyproject.toml").write_text("[project]\nname = 'app'\n")
    paths = []
    for n in range(MODULES):
        imports = [f"from app.m{k:03d} import Thing{k:03d}, make{k:03d}" for k in range(n)][-3:]
        uses = [f"    total += make{k:03d}(x).size()" for k in range(max(0, n - 3), n)]
        body = "\n".join(
            [
                '"""A generated module."""',
                "from __future__ import annotations",
                "from dataclasses import dataclass",
                *imports,
                "",
                "@dataclass",
                f"class Thing{n:03d}:",
                "    name: str",
                "    items: list[int]",
                "",
                "    def size(self) -> int:",
                "        return len(self.items) + len(self.name)",
                "",
                f"def make{n:03d}(x: int) -> Thing{n:03d}:",
                f"    return Thing{n:03d}(str(x), list(range(x)))",
                "",
                f"def use{n:03d}(x: int) -> int:",
                "    total = 0",
                *uses,
                "    return total",
                "",
            ]
        )
        path = package / f"m{n:03d}.py"
        path.write_text(body)
        paths.append(path)
    return paths


def project_files(kind: str, project: Path, edits: int, settings: list[str]) -> list[Path]:
    """The project's modules to edit; `settings` (TOML lines) go in its pyproject.toml's
    [tool.basedpyright] table, where a user would put them."""
    if kind == "generated":
        files = generate(project)
        files = files[len(files) // 2 :][:edits]  # modules with imports (and importers)
    else:
        shutil.copytree(ROOT / "di_code", project / "di_code")
        (project / "pyproject.toml").write_text("[project]\nname = 'copy'\n")
        files = sorted((project / "di_code").rglob("*.py"))[:edits]
    if settings:
        with (project / "pyproject.toml").open("a") as toml:
            toml.write("\n[tool.basedpyright]\n" + "\n".join(settings) + "\n")
    return files


class Stamps:
    """The moments of one edit, set by the hooks below."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.start = self.written_from = self.written = self.sent = self.arrived = 0.0
        self.uri = ""
        self.version = 0


def watch(connection: Any, stamps: Stamps) -> None:
    """Hooks on one connection (this benchmark's own, not the product's): when the new text
    went out, and when the server's diagnostics for it came in off the wire."""
    sync = connection.sync
    protocol = connection.client.protocol
    handle = protocol.handle_message

    def timed_sync(path: Path, text: str) -> int:
        version: int = sync(path, text)
        stamps.sent, stamps.uri, stamps.version = time.perf_counter(), path.as_uri(), version
        return version

    def timed_handle(message: Any) -> None:
        now = time.perf_counter()
        params = getattr(message, "params", None)
        method = getattr(message, "method", None)
        if method == "textDocument/publishDiagnostics" and stamps.sent and not stamps.arrived:
            if params.uri == stamps.uri and (params.version or stamps.version) >= stamps.version:
                stamps.arrived = now
        elif method is None and stamps.sent and not stamps.arrived:  # a request's answer
            stamps.arrived = now
        handle(message)

    connection.sync = timed_sync
    protocol.handle_message = timed_handle


class TimedTool:
    """The bare edit tool, its write's start and end stamped."""

    def __init__(self, tool: Any, stamps: Stamps) -> None:
        self._tool, self._stamps = tool, stamps
        self.name, self.description, self.parameters = tool.name, tool.description, {}

    async def execute(self, *args: Any, **kwargs: Any) -> Any:
        self._stamps.written_from = time.perf_counter()
        result = await self._tool.execute(*args, **kwargs)
        self._stamps.written = time.perf_counter()
        return result


def ms(values: list[float]) -> dict[str, float]:
    return {
        "median": round(statistics.median(values) * 1000, 1),
        "max": round(max(values) * 1000, 1),
    }


async def bench(args: argparse.Namespace, go: Callable[[], None]) -> dict[str, object]:
    server, kind, edits, rounds = args.server, args.project, args.edits, args.rounds
    from di_code.ai import AbortController
    from di_code.tools.builtin.edit import EditTool
    from di_code.tools.common.workspace import Workspace
    from di_code.tools.lsp.diagnosed import Diagnosed
    from di_code.tools.lsp.manager import LanguageServers
    from di_code.tools.lsp.servers import PRESETS, catalog

    go()  # the start too: one tree's at a time
    project = Path(tempfile.mkdtemp(prefix="bench-lsp-"))
    files = project_files(kind, project, edits, args.setting)
    space = Workspace.create(project)
    others = {candidates[0].name for candidates in PRESETS} - {server}
    servers = LanguageServers(
        catalog({name: {"enabled": False} for name in others}),
        space.root,
        wait=float(os.environ.get("BENCH_LSP_WAIT", "2")),
    )
    stamps = Stamps()
    bare = EditTool(space)
    checked = Diagnosed(TimedTool(EditTool(space), stamps), space, servers)
    signal = AbortController().signal

    async def edit(tool: Any, path: Path, n: int) -> float:
        text = path.read_text()  # the whole file: an old_text that occurs once
        params = {"path": str(path), "old_text": text, "new_text": f"{text}_bench_{n} = {n}\n"}
        stamps.reset()
        stamps.start = time.perf_counter()
        await tool.execute("c", params, signal)
        return time.perf_counter() - stamps.start

    started = time.perf_counter()
    [connection] = await servers.connections(files[0])
    start_s = time.perf_counter() - started
    watch(connection, stamps)
    bare_s, lsp_s, first_s = [], [], []
    parts: dict[str, list[float]] = {k: [] for k in ("before", "write", "send", "server", "after")}
    shares: list[float] = []
    for n, path in enumerate(files):
        started = time.perf_counter()  # first touch: the server reads the file
        await servers.baseline(path)
        first_s.append(time.perf_counter() - started)
        for round_ in range(rounds):  # then the edits a session makes to it, interleaved
            go()
            bare_s.append(await edit(bare, path, 2 * (n * rounds + round_)))
            total = await edit(checked, path, 2 * (n * rounds + round_) + 1)
            lsp_s.append(total)
            if not stamps.arrived:
                continue  # no diagnostics in time: not cut into parts
            end = stamps.start + total
            split = {
                "before": stamps.written_from - stamps.start,
                "write": stamps.written - stamps.written_from,
                "send": stamps.sent - stamps.written,
                "server": stamps.arrived - stamps.sent,
                "after": end - stamps.arrived,
            }
            for key, value in split.items():
                parts[key].append(value)
            shares.append(split["before"] + split["send"] + split["after"])
    rss = tree_rss_mib(connection.pid) if connection.pid is not None else 0.0
    await servers.aclose()
    shutil.rmtree(project)
    return {
        "server": " ".join(connection.spec.command),
        "project": kind,
        "settings": args.setting,
        "edits": len(lsp_s),
        "cut": len(shares),
        "files": len(set(files)),
        "start_s": round(start_s, 3),
        "first_touch_median_ms": round(statistics.median(first_s) * 1000, 1),
        "edit_bare_ms": ms(bare_s),
        "edit_lsp_ms": ms(lsp_s),
        "server_ms": ms(parts["server"]) if shares else None,
        "di_code_ms": ms(shares) if shares else None,
        "parts_ms": {k: ms(v) for k, v in parts.items() if v},
        "server_rss_mib": round(rss, 1),
        "load": os.getloadavg()[0],
    }


def child(args: argparse.Namespace) -> None:
    """One tree's run (in its own process: its own di_code imported); it waits for a line on
    stdin before each round, so the parent can interleave the trees."""
    sys.path.insert(0, args.child)
    path = os.environ.get("PATH", "")
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{path}"

    def go() -> None:
        print("ready", flush=True)
        sys.stdin.readline()

    result = asyncio.run(bench(args, go))
    print(json.dumps({"code": args.child, **result}), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", default="pyright", choices=["pyright", "ruff"])
    parser.add_argument("--project", default="generated", choices=["generated", "self"])
    parser.add_argument("--edits", type=int, default=10, help="files edited")
    parser.add_argument("--rounds", type=int, default=3, help="edits per file")
    parser.add_argument("--code", action="append", default=[], help="another di-code tree")
    parser.add_argument("--setting", action="append", default=[], help="a [tool.basedpyright] line")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    flags = ["--server", args.server, "--project", args.project]
    flags += ["--edits", str(args.edits), "--rounds", str(args.rounds)]
    flags += [f"--setting={line}" for line in args.setting]
    runs = [
        subprocess.Popen(
            [sys.executable, "-m", "scripts.bench_lsp", *flags, "--child", str(Path(tree))],
            cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )
        for tree in [ROOT, *args.code]
    ]  # fmt: skip
    waiting = {run: _line(run) for run in runs}  # each waits before its first step
    while waiting:  # one step of each tree in turn, the others waiting
        for run, line in list(waiting.items()):
            if line.startswith("ready"):
                assert run.stdin is not None
                run.stdin.write("\n")
                run.stdin.flush()
                waiting[run] = _line(run)  # the step done: it waits again, or it ended
                continue
            print(line.strip(), flush=True)
            del waiting[run]
            run.wait()


def _line(run: subprocess.Popen[str]) -> str:
    assert run.stdout is not None
    return run.stdout.readline() or "{}"


if __name__ == "__main__":
    main()
