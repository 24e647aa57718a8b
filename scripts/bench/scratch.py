"""Generated inputs for the tool figures, made in a scratch folder and removed afterwards."""

from __future__ import annotations

import random
from pathlib import Path

NEEDLE = "bench_needle_7f3a"
LINE_WIDTH = 1000


def make_tree(root: Path, files: int, needles: int) -> None:
    """`files` small source files in nested folders; `needles` of them contain NEEDLE once."""
    rng = random.Random(8)
    words = ["value", "result", "index", "config", "handler", "buffer", "stream", "token"]
    marked = set(rng.sample(range(files), needles))
    for i in range(files):
        folder = root / f"pkg{i % 50:02d}" / f"mod{i % 400 // 50}"
        folder.mkdir(parents=True, exist_ok=True)
        lines = [
            f"def {rng.choice(words)}_{i}_{n}(x):\n    return x + {n}  # {rng.choice(words)}\n"
            for n in range(20)
        ]
        if i in marked:
            lines.insert(10, f"# {NEEDLE} in file {i}\n")
        (folder / f"file{i}.py").write_text("".join(lines))


def make_big_file(path: Path, lines: int) -> str:
    """`lines` lines of LINE_WIDTH bytes each; returns the text of the last line."""
    body = ("x" * (LINE_WIDTH - 1) + "\n").encode()
    block_lines = 1000
    last = f"LINE-{lines}-".ljust(LINE_WIDTH - 1, "y")
    with path.open("wb") as out:
        full_blocks, rest = divmod(lines - 1, block_lines)
        block = body * block_lines
        for _ in range(full_blocks):
            out.write(block)
        out.write(body * rest)
        out.write((last + "\n").encode())
    return last
