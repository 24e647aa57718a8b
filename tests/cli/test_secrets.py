"""Issue 14 items 4, 5, 6, 15, 16: no key or URL password in stdout, stderr, JSON or the session
file; a key with stray whitespace works, one with control characters is refused unseen; a
settings file that is not UTF-8 is a one-line error."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import RunDiCode
from tests.support.llm_server import HttpError, LLMServer, ToolCallSpec, Turn

KEY = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz012345"
PIECE = 12


def everything_written(home: Path, *outputs: str) -> str:
    """The outputs and every file di-code wrote under its home (sessions, logs)."""
    files = [
        p.read_text(encoding="utf-8", errors="replace") for p in home.rglob("*") if p.is_file()
    ]
    return "\n".join([*outputs, *files])


def has_piece_of(secret: str, text: str) -> bool:
    return any(secret[i : i + PIECE] in text for i in range(len(secret) - PIECE + 1))


def test_a_key_with_a_windows_line_ending_works_and_is_never_shown(
    run_di_code: RunDiCode, llm_server: LLMServer, di_code_home: Path
) -> None:
    llm_server.script(Turn(text="fine"))
    done = run_di_code(
        "run", "--output-format", "json", "hi", env_extra={"OPENAI_API_KEY": KEY + "\r\n"}
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"] == "fine"
    assert llm_server.requests[0].headers["authorization"] == f"Bearer {KEY}"
    assert not has_piece_of(KEY, everything_written(di_code_home, done.stdout, done.stderr))


def test_a_key_with_a_control_character_inside_is_refused_unseen(
    run_di_code: RunDiCode, llm_server: LLMServer
) -> None:
    bad = KEY[:20] + "\x1b" + KEY[20:]
    done = run_di_code("run", "hi", env_extra={"OPENAI_API_KEY": bad})
    assert done.returncode == 2
    assert done.stderr == "di-code: the API key in OPENAI_API_KEY contains control characters\n"
    assert llm_server.requests == []


def test_an_error_body_echoing_the_key_across_the_cut_leaves_none_of_it(
    run_di_code: RunDiCode, llm_server: LLMServer, di_code_home: Path
) -> None:
    llm_server.script(HttpError(401, "x" * 450 + f" Incorrect API key provided: {KEY}"))
    done = run_di_code("run", "--output-format", "json", "hi", env_extra={"OPENAI_API_KEY": KEY})
    assert done.returncode == 1
    assert json.loads(done.stdout)["is_error"] is True
    assert not has_piece_of(KEY, everything_written(di_code_home, done.stdout, done.stderr))


def test_a_key_printed_by_bash_never_reaches_the_session_or_the_output(
    run_di_code: RunDiCode, llm_server: LLMServer, di_code_home: Path
) -> None:
    llm_server.script(
        Turn(
            tool_calls=(
                ToolCallSpec(
                    "bash", {"command": "printenv OPENAI_API_KEY; echo ${OPENAI_API_KEY:0:20}"}
                ),
            )
        ),
        Turn(text=f"the key is {KEY}"),
    )
    done = run_di_code(
        "run", "--yes", "--output-format", "stream-json", "hi", env_extra={"OPENAI_API_KEY": KEY}
    )
    assert done.returncode == 0, done.stderr
    assert "the key is ***" in done.stdout
    sessions = list((di_code_home / "sessions").rglob("*.jsonl"))
    assert sessions and "the key is ***" in sessions[0].read_text(encoding="utf-8")
    assert not has_piece_of(KEY, everything_written(di_code_home, done.stdout, done.stderr))


def test_a_password_in_the_base_url_is_never_printed_nor_saved(
    run_di_code: RunDiCode, di_code_home: Path
) -> None:
    url = "htp://me:hunter2-secret-pw@127.0.0.1:9/v1"  # a typo in the scheme: a final error
    for fmt in ("text", "json"):
        done = run_di_code("run", "--output-format", fmt, "hi", env_extra={"OPENAI_BASE_URL": url})
        assert done.returncode == 1
        shown = done.stderr if fmt == "text" else json.loads(done.stdout)["result"]
        assert "me:***@127.0.0.1:9" in shown
        assert "hunter2" not in everything_written(di_code_home, done.stdout, done.stderr)


def test_a_settings_file_that_is_not_utf8_is_a_usage_error(
    run_di_code: RunDiCode, di_code_home: Path
) -> None:
    path = di_code_home / "config.toml"
    path.write_bytes(b'model = "caf\xe9"\n')
    done = run_di_code("run", "hi")
    assert done.returncode == 2
    assert done.stderr == f"di-code: cannot read {path}: not UTF-8 text (byte 0xe9 at offset 12)\n"
