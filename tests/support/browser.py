"""Headless Chromium for checking a page di-code wrote (the HTML export): every request the
browser makes goes through a loopback proxy that answers nothing and records it."""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
BROWSER_OWN = re.compile(
    r"^\S+ (https?://)?[a-z0-9.-]*\b(google\.com|gstatic\.com|googleapis\.com)[:/]"
)
"""What Chromium asks its own services for whatever the page (its clock, its updates)."""


class RecordingProxy:
    """An HTTP proxy on 127.0.0.1 that answers nothing and records every request line."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.port = self.sock.getsockname()[1]
        self.asked: list[str] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                try:
                    self.asked.append(conn.recv(4096).decode("latin-1").split("\r\n")[0])
                    conn.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
                except OSError:
                    pass


@pytest.fixture
def proxy() -> Iterator[RecordingProxy]:
    recording = RecordingProxy()
    yield recording
    recording.sock.close()


def chromium(page: Path, proxy: RecordingProxy, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",  # root in the test container
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={page.parent / 'chromium-profile'}",
            f"--proxy-server=http://127.0.0.1:{proxy.port}",
            "--proxy-bypass-list=<-loopback>",
            *args,
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
