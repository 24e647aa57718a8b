"""Two processes opening one session to write at once: exactly one holds it and writes, the
other is refused with one line before it writes anything; every line stays whole."""

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
from di_code.session import SessionStore, SessionError

home, path, name, count = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
print("ready", flush=True)
sys.stdin.readline()  # start together
try:
    session = SessionStore(home).open(path, Path(sys.argv[5]))
except SessionError as exc:
    print(f"refused: {exc}", flush=True)
    sys.exit(3)
print("holding", flush=True)
for i in range(count):
    session.append_message(UserMessage.of(f"{name}-{i}:" + name * 70_000, i))
sys.stdin.readline()  # hold until told
"""

COUNT = 40


def test_two_processes_open_at_once_one_writes(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.create(tmp_path)
    session.append_message(UserMessage.of("start", 0))
    session.release()
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
    for writer in writers:
        assert writer.stdout is not None
        assert writer.stdout.readline() == "ready\n"
    for writer in writers:
        assert writer.stdin is not None
        writer.stdin.write("go\n")
        writer.stdin.flush()
    said = [writer.stdout.readline() for writer in writers if writer.stdout is not None]
    assert sorted(line.split(":")[0].strip() for line in said) == ["holding", "refused"], said
    (refused,) = [line for line in said if line.startswith("refused")]
    assert "is in use by another di-code process" in refused
    for writer in writers:
        assert writer.stdin is not None
        writer.stdin.write("done\n")
        writer.stdin.close()
    assert sorted(writer.wait(timeout=60) for writer in writers) == [0, 3]
    for line in session.path.read_text().splitlines():
        json.loads(line)  # every line whole
    loaded = store.open(session.path, tmp_path)  # free again: the holder ended
    assert loaded.warnings == []
    entries = [e for e in loaded.entries if isinstance(e, MessageEntry)]
    assert len(entries) == 1 + COUNT


def test_this_process_cannot_open_a_session_it_holds_twice(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.create(tmp_path)
    session.append_message(UserMessage.of("start", 0))
    try:
        store.open(session.path, tmp_path)
    except Exception as exc:
        assert str(exc).endswith("is already open here: one session is written by one owner.")
    else:
        raise AssertionError("opened twice")
    reader = store.open(session.path, tmp_path, write=False)  # reading needs no hold
    assert len(reader.entries) == 1
    session.release()
    store.open(session.path, tmp_path).release()
