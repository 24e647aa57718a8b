"""Two processes appending to one session file at once: nothing lost, no line interleaved."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from di_code.ai.types import UserMessage
from di_code.session import MessageEntry, SessionStore

WRITER = """
import sys
from pathlib import Path
from di_code.ai.types import UserMessage
from di_code.session import SessionStore

home, path, name, count = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
session = SessionStore(home).open(path, Path(sys.argv[5]))
print("ready", flush=True)
sys.stdin.readline()  # start together
for i in range(count):
    session.append_message(UserMessage.of(f"{name}-{i}:" + name * 70_000, i))
"""

COUNT = 40


def test_two_processes_append_at_once(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.create(tmp_path)
    root = session.append_message(UserMessage.of("start", 0))
    args = [str(tmp_path), str(session.path)]
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, *args, name, str(COUNT), str(tmp_path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for name in ("a", "b")
    ]
    for writer in writers:  # both have loaded the file before either writes
        assert writer.stdout is not None
        assert writer.stdout.readline() == "ready\n"
    for writer in writers:
        assert writer.stdin is not None
        writer.stdin.write("go\n")
        writer.stdin.close()
    for writer in writers:
        assert writer.wait(timeout=60) == 0
    for line in session.path.read_text().splitlines():
        json.loads(line)  # every line whole
    loaded = store.open(session.path, tmp_path)
    assert loaded.warnings == []
    entries = [e for e in loaded.entries if isinstance(e, MessageEntry)]
    assert len(entries) == 1 + 2 * COUNT
    by_id = {e.id: e for e in entries}
    for name in ("a", "b"):
        own = [e for e in entries if e.message.content[0].text.startswith(f"{name}-")]  # type: ignore[union-attr]
        chain, current = [], own[-1]
        while current.parent_id is not None:
            chain.append(current)
            current = by_id[current.parent_id]
        assert current.id == root.id
        texts = [e.message.content[0].text.split(":")[0] for e in reversed(chain)]  # type: ignore[union-attr]
        assert texts == [f"{name}-{i}" for i in range(COUNT)]
