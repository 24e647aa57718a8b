"""Write a synthetic session file (default 10,000 messages) and time loading it.

Usage: python scripts/make_session.py [--messages N] [--home DIR] [--cwd DIR]
The benchmark suite can call `scripts.synthetic_session.make_session_file` directly.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from di_code.session import SessionStore
from scripts.synthetic_session import make_session_file


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--home", type=Path, default=None)
    parser.add_argument("--cwd", type=Path, default=Path.cwd())
    args = parser.parse_args()
    home = args.home or Path(tempfile.mkdtemp(prefix="di-code-home-"))
    path = make_session_file(home, args.cwd, args.messages)
    started = time.perf_counter()
    session = SessionStore(home).open(path, args.cwd)
    loaded = time.perf_counter()
    context = session.context()
    done = time.perf_counter()
    print(f"{path} ({path.stat().st_size / 1e6:.1f} MB)")
    print(f"load: {(loaded - started) * 1000:.0f} ms, context(): {(done - loaded) * 1000:.0f} ms,")
    print(f"{len(context)} messages")


if __name__ == "__main__":
    main()
