"""Fixtures for the config tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`~` for the test, so this machine's ~/.claude and ~/.agents stay out of it."""
    home = tmp_path / "user"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return home
