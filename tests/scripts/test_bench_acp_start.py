"""Figure 13's editor: it starts an ACP agent with the SDK's own client and reports the time
to the answer of `initialize`, for `di-code acp` and for the bare SDK agent (which answers
once the SDK is imported); an npm prefix that lacks a package added since it was installed
is installed again."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from scripts.bench.peers import NPM_PACKAGES, ensure_npm_peers

pytest.importorskip("acp", reason="the ACP SDK (di-code[acp]) is not installed")

ROOT = Path(__file__).resolve().parents[2]
WORKERS = ROOT / "scripts" / "bench" / "workers"
DI_CODE = Path(sys.executable).parent / "di-code"


@pytest.mark.parametrize(
    ("agent", "name"),
    [
        ([str(DI_CODE), "acp"], "di-code"),
        ([sys.executable, str(WORKERS / "bare_acp_agent.py")], None),
    ],
)
def test_the_editor_times_initialize(
    agent: list[str], name: str | None, tmp_path: Path, di_code_home: Path
) -> None:
    done = subprocess.run(
        [sys.executable, str(WORKERS / "acp_initialize.py"), *agent],
        capture_output=True, text=True, timeout=120, cwd=tmp_path, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert answer["agent"] == name and answer["initialize_ms"] > 0


def test_a_package_added_since_the_install_is_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prefix = tmp_path / "npm"
    for package in list(NPM_PACKAGES.values())[:-1]:
        (prefix / "node_modules" / package).mkdir(parents=True)
    (prefix / ".installed").write_text("npm install ...\n")
    bin_folder = tmp_path / "bin"
    bin_folder.mkdir()
    npm = bin_folder / "npm"
    npm.write_text(f'#!/bin/sh\necho "$@" > {tmp_path / "ran"}\n')
    npm.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_folder))
    ensure_npm_peers(tmp_path)
    assert list(NPM_PACKAGES.values())[-1] in (tmp_path / "ran").read_text()
