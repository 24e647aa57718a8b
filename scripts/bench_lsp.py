"""Benchmark: what language servers cost an edit (issue 34).

    .venv/bin/python -m scripts.bench_lsp [--server pyright|ruff] [--edits 15]

A copy of di-code's own `di_code/` package (a real project, ~200 modules) in a temp folder;
each of 10 modules is first read by the server (timed apart: the first touch), then edited
3 times, each edit (a line appended, through the edit tool) once bare and once with the
language server's diagnostics: what every later edit of a session waits. Also: the
server's start (initialize) time, and its memory (RSS of its process tree) after the
edits. Prints one JSON object.
A benchmark, not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"

from di_code.ai import AbortController  # noqa: E402
from di_code.tools.builtin.edit import EditTool  # noqa: E402
from di_code.tools.common.workspace import Workspace  # noqa: E402
from di_code.tools.lsp.diagnosed import Diagnosed  # noqa: E402
from di_code.tools.lsp.manager import LanguageServers  # noqa: E402
from di_code.tools.lsp.servers import PRESETS, catalog  # noqa: E402


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


async def bench(server: str, edits: int, one_file: bool, rounds: int) -> dict[str, object]:
    project = Path(tempfile.mkdtemp(prefix="bench-lsp-"))
    shutil.copytree(ROOT / "di_code", project / "di_code")
    (project / "pyproject.toml").write_text("[project]\nname = 'copy'\n")
    files = sorted((project / "di_code").rglob("*.py"))[:edits]
    if one_file:  # every edit to one module: only it is open in the server
        files = [project / "di_code" / "tools" / "builtin" / "edit.py"] * edits
    space = Workspace.create(project)
    others = {candidates[0].name for candidates in PRESETS} - {server}
    servers = LanguageServers(
        catalog({name: {"enabled": False} for name in others}),
        space.root,
        wait=float(os.environ.get("BENCH_LSP_WAIT", "2")),
    )
    bare, checked = EditTool(space), Diagnosed(EditTool(space), space, servers)
    signal = AbortController().signal

    async def edit(tool: object, path: Path, n: int) -> float:
        text = path.read_text()  # the whole file: an old_text that occurs once
        params = {"path": str(path), "old_text": text, "new_text": f"{text}_bench_{n} = {n}\n"}
        started = time.perf_counter()
        await tool.execute("c", params, signal)  # type: ignore[attr-defined]
        return time.perf_counter() - started

    started = time.perf_counter()
    [connection] = await servers.connections(files[0])
    start_s = time.perf_counter() - started
    bare_s, lsp_s, first_s = [], [], []
    for n, path in enumerate(files):
        started = time.perf_counter()  # first touch: the server reads the file
        await servers.baseline(path)
        first_s.append(time.perf_counter() - started)
        for round_ in range(rounds):  # then the edits a session makes to it, interleaved
            bare_s.append(await edit(bare, path, 2 * (n * rounds + round_)))
            lsp_s.append(await edit(checked, path, 2 * (n * rounds + round_) + 1))
    rss = tree_rss_mib(connection.pid) if connection.pid is not None else 0.0
    await servers.aclose()
    shutil.rmtree(project)
    return {
        "server": " ".join(connection.spec.command),
        "edits": len(lsp_s),
        "files": len(set(files)),
        "start_s": round(start_s, 3),
        "edit_bare_median_ms": round(statistics.median(bare_s) * 1000, 1),
        "edit_lsp_median_ms": round(statistics.median(lsp_s) * 1000, 1),
        "edit_lsp_max_ms": round(max(lsp_s) * 1000, 1),
        "first_touch_median_ms": round(statistics.median(first_s) * 1000, 1),
        "server_rss_mib": round(rss, 1),
        "load": os.getloadavg()[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", default="pyright", choices=["pyright", "ruff"])
    parser.add_argument("--edits", type=int, default=10, help="files edited")
    parser.add_argument("--one-file", action="store_true", help="every edit to one module")
    parser.add_argument("--rounds", type=int, default=3, help="edits per file")
    args = parser.parse_args()
    print(json.dumps(asyncio.run(bench(args.server, args.edits, args.one_file, args.rounds))))


if __name__ == "__main__":
    main()
