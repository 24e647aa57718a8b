"""Imported at start-up by a Python process whose PYTHONPATH starts with this folder
(tests/test_guarded_first_use.py): each module it imports for the first time is written to
DI_CODE_IMPORT_SPY_LOG as `loop NAME` when the import runs on a thread whose event loop is
running, else as `off NAME`; each child process started on such a thread, as
`loop-spawn PROGRAM` (from the `subprocess.Popen` audit event)."""

import asyncio
import os
import sys


def on_a_running_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class ImportSpy:
    """A finder that finds nothing: it only notes each import the others will then make
    (and, as an audit hook, each child process started on the loop)."""

    def __init__(self, path: str) -> None:
        self.path = path

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name in sys.modules:
            return None
        self.write(f"{'loop' if on_a_running_loop() else 'off'} {name}")
        return None

    def write(self, line: str) -> None:
        with open(self.path, "a", encoding="utf-8") as log:
            log.write(line + "\n")

    def audit(self, event: str, args: tuple[object, ...]) -> None:
        if event == "subprocess.Popen" and on_a_running_loop():
            argv = args[1]
            program = argv[0] if isinstance(argv, list | tuple) and argv else args[0]
            self.write(f"loop-spawn {os.path.basename(str(program))}")


if os.environ.get("DI_CODE_IMPORT_SPY_LOG"):
    spy = ImportSpy(os.environ["DI_CODE_IMPORT_SPY_LOG"])
    sys.meta_path.insert(0, spy)
    sys.addaudithook(spy.audit)
