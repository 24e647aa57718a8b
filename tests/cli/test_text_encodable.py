"""Text from outside is made valid where it enters: a prompt argument or piped stdin that is
not UTF-8 (Python reads such bytes as lone surrogates) reaches the model and the session as
U+FFFD, and the session goes on."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.cli.conftest import DI_CODE, cli_env, request_text
from tests.support.llm_server import LLMServer, Turn


def run_bytes(
    home: Path, server: LLMServer, workspace: Path, *args: bytes, stdin: bytes = b""
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [os.fsencode(DI_CODE), *args],
        cwd=workspace,
        env=cli_env(home, server),
        input=stdin,
        capture_output=True,
        timeout=60,
    )


def test_a_prompt_that_is_not_utf8_is_replaced_and_the_session_goes_on(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    llm_server.script(Turn(text="one"), Turn(text="two"))
    first = run_bytes(
        di_code_home, llm_server, workspace, b"run", b"caf\xe9 arg", stdin=b"piped \xff\xfe end"
    )
    assert first.returncode == 0, first.stderr
    assert first.stderr == b""
    sent = request_text(llm_server.requests[0].body)
    assert "caf\ufffd arg" in sent and "piped \ufffd\ufffd end" in sent
    (session,) = di_code_home.glob("sessions/*/*.jsonl")
    lines = [json.loads(line) for line in session.read_bytes().splitlines()]
    assert "caf\ufffd arg" in json.dumps(lines, ensure_ascii=False)

    second = run_bytes(di_code_home, llm_server, workspace, b"run", b"-c", b"again")
    assert second.returncode == 0, second.stderr
    assert b"two" in second.stdout


def test_a_folder_whose_name_is_not_utf8_has_sessions_like_any_other(
    llm_server: LLMServer, di_code_home: Path, tmp_path: Path
) -> None:
    folder = os.path.join(os.fsencode(tmp_path), b"caf\xe9")
    os.mkdir(folder)
    llm_server.script(Turn(text="one"), Turn(text="two"))
    first = run_bytes(di_code_home, llm_server, Path(os.fsdecode(folder)), b"run", b"remember 4711")
    assert first.returncode == 0, first.stderr
    assert first.stderr == b""
    (session,) = di_code_home.glob("sessions/*/*.jsonl")
    header = json.loads(session.read_bytes().splitlines()[0])
    assert os.fsencode(header["cwd"]) == os.path.realpath(folder)  # the folder, exactly
    second = run_bytes(
        di_code_home, llm_server, Path(os.fsdecode(folder)), b"run", b"-c", b"which?"
    )
    assert second.returncode == 0, second.stderr
    assert "remember 4711" in request_text(llm_server.requests[1].body)
