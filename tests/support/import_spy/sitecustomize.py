"""Imported at start-up by a Python process whose PYTHONPATH starts with this folder
(tests/test_door_first_use.py): each module it imports for the first time is written to
DI_CODE_IMPORT_SPY_LOG as `loop NAME` when the import runs on a thread whose event loop is
running, else as `off NAME`."""

import asyncio
import os
import sys


class ImportSpy:
    """A finder that finds nothing: it only notes each import the others will then make."""

    def __init__(self, path: str) -> None:
        self.path = path

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name in sys.modules:
            return None
        try:
            asyncio.get_running_loop()
            where = "loop"
        except RuntimeError:
            where = "off"
        with open(self.path, "a", encoding="utf-8") as log:
            log.write(f"{where} {name}\n")
        return None


if os.environ.get("DI_CODE_IMPORT_SPY_LOG"):
    sys.meta_path.insert(0, ImportSpy(os.environ["DI_CODE_IMPORT_SPY_LOG"]))
