"""`di-code export` end to end (issue 45 item 1): a real di-code process exports a saved
session with every kind of entry, the key the environment holds hidden; a hostile session
file is one line and exit 1; the HTML opened in headless Chromium shows the conversation and
asks for nothing (every request of the browser goes through a loopback proxy that records it)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from di_code.session.store import workspace_slug
from tests.cli.conftest import RunDiCode
from tests.support.browser import BROWSER_OWN, CHROMIUM, RecordingProxy, chromium
from tests.support.browser import proxy as proxy  # the fixture
from tests.support.session_files import KEY, every_kind_session


@pytest.fixture
def saved(di_code_home: Path, workspace: Path) -> Path:
    return every_kind_session(di_code_home, workspace)


def export(run_di_code: RunDiCode, *args: str) -> subprocess.CompletedProcess[str]:
    return run_di_code("export", *args, server=False, env_extra={"OPENAI_API_KEY": KEY})


@pytest.mark.parametrize("kind", ["html", "md", "json"])
def test_each_format_on_stdout_with_the_key_hidden(
    run_di_code: RunDiCode, saved: Path, kind: str
) -> None:
    done = export(run_di_code, "--format", kind)
    assert done.returncode == 0, done.stderr
    assert "ANSWER-MARK" in done.stdout and "ERROR-MARK" in done.stdout
    assert KEY not in done.stdout + done.stderr and "***" in done.stdout
    if kind == "json":  # the messages only: a compaction's summary is no message
        assert len(json.loads(done.stdout)["messages"]) == 14
    else:
        assert "SUMMARY-MARK" in done.stdout


def test_a_session_named_by_number_or_id_prefix_to_a_file(
    run_di_code: RunDiCode, saved: Path, workspace: Path
) -> None:
    session_id = saved.stem.partition("_")[2]
    for choice in ("1", session_id[:6]):
        out = workspace / f"out-{choice}.md"
        done = export(run_di_code, choice, "--format", "md", "-o", str(out))
        assert done.returncode == 0, done.stderr
        assert done.stdout == "" and f"exported session {session_id[:8]}" in done.stderr
        assert "THINKING-MARK" in out.read_text() and KEY not in out.read_text()


def test_nothing_to_export_and_bad_options_are_one_line(
    run_di_code: RunDiCode, workspace: Path
) -> None:
    done = export(run_di_code)
    assert (done.returncode, done.stderr) == (1, "di-code: no session in this folder to export\n")
    done = export(run_di_code, "ffff")
    assert done.returncode == 1 and done.stderr.count("\n") == 1
    done = export(run_di_code, "--format", "pdf")
    assert (
        done.returncode == 2 and done.stderr == "di-code: --format must be one of html, md, json\n"
    )


@pytest.mark.parametrize(
    "content",
    [
        b"\xff\xfe not json at all\n",
        b'{"type": "session", "version": 999, "id": "x", "cwd": "/", "timestamp": 1}\n',
        b"[" * 100_000 + b"\n",
        b'{"type": "session", "id": 7, "cwd": ["no"], "timestamp": "soon"}\n',
        b"",
    ],
    ids=["bytes", "newer-version", "deep", "wrong-types", "empty"],
)
def test_a_hostile_session_file_is_one_line_and_exit_1(
    run_di_code: RunDiCode, di_code_home: Path, workspace: Path, content: bytes
) -> None:
    folder = di_code_home / "sessions" / workspace_slug(workspace)
    folder.mkdir(parents=True)
    (folder / "2026-01-01T00-00-00-000000Z_abcdef0123456789.jsonl").write_bytes(content)
    done = export(run_di_code, "abcdef")
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout == "" and done.stderr.count("\n") == 1
    assert done.stderr.startswith("di-code: ") and "Traceback" not in done.stderr


def test_hostile_lines_after_a_good_header_are_skipped_and_said(
    run_di_code: RunDiCode, saved: Path
) -> None:
    with saved.open("ab") as file:
        file.write(b'{"type": "message", "id": 5, "message": {"role": "user", "content": 9}}\n')
        file.write(b"\x00\x1b]0;title\x07 torn line\n")
    done = export(run_di_code, "--format", "md")
    assert done.returncode == 0, done.stderr
    assert "ANSWER-MARK" in done.stdout and "was skipped" in done.stderr
    assert "\x1b" not in done.stderr


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt install chromium)")
def test_the_html_in_a_real_browser_shows_the_chat_and_asks_for_nothing(
    run_di_code: RunDiCode, saved: Path, workspace: Path, proxy: RecordingProxy
) -> None:
    page = workspace / "chat.html"
    done = export(run_di_code, "-o", str(page))
    assert done.returncode == 0, done.stderr
    shown = chromium(page, proxy, "--dump-dom")
    assert "ANSWER-MARK" in shown.stdout, shown.stderr
    assert "<title>di-code session" in shown.stdout  # the script in the output did not run
    assert "&lt;script&gt;document.title=" in shown.stdout
    assert "key=***" in shown.stdout and KEY not in shown.stdout
    screenshot = workspace / "chat.png"
    chromium(page, proxy, f"--screenshot={screenshot}", "--window-size=1000,1400")
    assert screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page_asked = [line for line in proxy.asked if not BROWSER_OWN.search(line)]
    assert page_asked == [], page_asked
