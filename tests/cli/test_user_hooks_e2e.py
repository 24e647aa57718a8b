"""The user's PreToolUse and PostToolUse hooks in a real `di-code run` (real bash hooks, the
loopback model): a hook refuses `rm` with a reason the model reads; a failing hook refuses
(fails closed); "allow" and "ask" steer the question; PostToolUse can tell the model more;
an untrusted project's hooks never run."""

from __future__ import annotations

from pathlib import Path

from tests.cli.conftest import RunDiCode, request_text
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn

NO_RM = """
input=$(cat)
case "$input" in
  *'"rm '*) echo "no rm here: use git rm" >&2; exit 2 ;;
esac
exit 0
"""


def bash_then_answer(server: LLMServer, command: str) -> None:
    server.script(
        Turn(tool_calls=(ToolCallSpec("bash", {"command": command}),)), Turn(text="finished")
    )


def hook_config(home: Path, event: str, script: Path, matcher: str = "bash") -> None:
    (home / "config.toml").write_text(
        f'[[hooks.{event}]]\nmatcher = "{matcher}"\n'
        f'hooks = [{{ type = "command", command = "bash {script}", timeout = 10 }}]\n'
    )


def script(folder: Path, name: str, body: str) -> Path:
    path = folder / name
    path.write_text(body)
    return path


def test_a_pre_tool_use_hook_refuses_rm_and_the_model_reads_why(
    run_di_code: RunDiCode,
    llm_server: LLMServer,
    workspace: Path,
    di_code_home: Path,
    tmp_path: Path,
) -> None:
    (workspace / "keep.txt").write_text("precious\n")
    hook_config(di_code_home, "PreToolUse", script(tmp_path, "no_rm.sh", NO_RM))
    bash_then_answer(llm_server, "rm keep.txt")
    done = run_di_code("run", "--yes", "clean up")
    assert done.returncode == 0, done.stderr
    assert (workspace / "keep.txt").exists()
    sent = request_text(llm_server.requests[-1].body)
    assert "Permission denied by a PreToolUse hook: no rm here: use git rm" in sent


def test_the_hook_sees_the_call_as_json_and_lets_others_run(
    run_di_code: RunDiCode,
    llm_server: LLMServer,
    workspace: Path,
    di_code_home: Path,
    tmp_path: Path,
) -> None:
    seen = tmp_path / "seen.json"
    hook_config(di_code_home, "PreToolUse", script(tmp_path, "log.sh", f"cat > {seen}\n"))
    bash_then_answer(llm_server, "touch made.txt")
    assert run_di_code("run", "--yes", "make it").returncode == 0
    assert (workspace / "made.txt").exists()
    import json

    event = json.loads(seen.read_text())
    assert event["hook_event_name"] == "PreToolUse" and event["tool_name"] == "bash"
    assert event["tool_input"] == {"command": "touch made.txt"}
    assert event["cwd"] == str(workspace.resolve())


def test_a_failing_hook_fails_closed(
    run_di_code: RunDiCode,
    llm_server: LLMServer,
    workspace: Path,
    di_code_home: Path,
    tmp_path: Path,
) -> None:
    hook_config(
        di_code_home, "PreToolUse", script(tmp_path, "broken.sh", "echo oops >&2\nexit 1\n")
    )
    bash_then_answer(llm_server, "touch made.txt")
    assert run_di_code("run", "--yes", "make it").returncode == 0
    assert not (workspace / "made.txt").exists()
    assert "exited 1: oops" in request_text(llm_server.requests[-1].body)


def test_allow_skips_the_question_and_ask_asks_even_in_auto(
    run_di_code: RunDiCode,
    llm_server: LLMServer,
    workspace: Path,
    di_code_home: Path,
    tmp_path: Path,
) -> None:
    allow = '{"hookSpecificOutput": {"permissionDecision": "allow"}}'
    hook_config(di_code_home, "PreToolUse", script(tmp_path, "allow.sh", f"echo '{allow}'\n"))
    bash_then_answer(llm_server, "touch allowed.txt")
    assert run_di_code("run", "make it").returncode == 0  # ask mode, no terminal to ask
    assert (workspace / "allowed.txt").exists()

    ask = '{"hookSpecificOutput": {"permissionDecision": "ask"}}'
    hook_config(di_code_home, "PreToolUse", script(tmp_path, "ask.sh", f"echo '{ask}'\n"))
    bash_then_answer(llm_server, "touch asked.txt")
    assert run_di_code("run", "--yes", "make it").returncode == 0
    assert not (workspace / "asked.txt").exists()
    assert "no terminal to ask" in request_text(llm_server.requests[-1].body)


def test_a_post_tool_use_hook_tells_the_model_more(
    run_di_code: RunDiCode,
    llm_server: LLMServer,
    workspace: Path,
    di_code_home: Path,
    tmp_path: Path,
) -> None:
    body = "echo 'lint: 3 warnings in made.txt' >&2\nexit 2\n"
    hook_config(di_code_home, "PostToolUse", script(tmp_path, "lint.sh", body))
    bash_then_answer(llm_server, "touch made.txt")
    assert run_di_code("run", "--yes", "make it").returncode == 0
    assert (workspace / "made.txt").exists()
    sent = request_text(llm_server.requests[-1].body)
    assert "[PostToolUse hook] lint: 3 warnings in made.txt" in sent


def test_an_untrusted_projects_hooks_never_run(
    run_di_code: RunDiCode,
    llm_server: LLMServer,
    workspace: Path,
    tmp_path: Path,
) -> None:
    marker = tmp_path / "ran"
    (workspace / ".di-code").mkdir()
    (workspace / ".di-code" / "config.toml").write_text(
        '[[hooks.PreToolUse]]\nmatcher = ""\n'
        f'hooks = [{{ type = "command", command = "touch {marker}" }}]\n'
    )
    bash_then_answer(llm_server, "touch made.txt")
    done = run_di_code("run", "--yes", "make it")
    assert done.returncode == 0
    assert (workspace / "made.txt").exists() and not marker.exists()
    assert "ignored until you trust this project" in done.stderr and "hooks" in done.stderr


def test_a_malformed_hooks_table_is_one_line_and_exit_2(
    run_di_code: RunDiCode, di_code_home: Path
) -> None:
    (di_code_home / "config.toml").write_text("[[hooks.BeforeEverything]]\nhooks = []\n")
    done = run_di_code("run", "hi")
    assert done.returncode == 2
    assert "hooks.BeforeEverything is not a hook event" in done.stderr
    assert "Traceback" not in done.stderr
