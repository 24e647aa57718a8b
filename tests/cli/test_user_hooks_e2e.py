"""The user's PreToolUse and PostToolUse hooks in a real `di-code run` (real bash hooks, the
loopback model): a hook refuses `rm` with a reason the model reads; a failing hook refuses
(fails closed); "allow" and "ask" steer the question; PostToolUse can tell the model more;
an untrusted project's hooks never run."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.cli.conftest import API_KEY, RunDiCode, WriteHook, request_text
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn

NO_RM = """
input=$(cat)
case "$input" in
  *'"rm '*) echo "no rm here: use git rm" >&2; exit 2 ;;
esac
exit 0
"""


@dataclass
class HookedRun:
    """A user hook for the bash tool, then a `di-code run` whose model calls bash once."""

    run_di_code: RunDiCode
    llm_server: LLMServer
    user_hook: WriteHook

    def hook(self, event: str, name: str, body: str) -> None:
        """The hook: a bash script `name` holding `body`, for the bash tool (replaces any)."""
        self.user_hook(event, name, body, "bash")

    def bash(self, command: str, *flags: str) -> subprocess.CompletedProcess[str]:
        """`di-code run` (with `flags`) while the model runs `command` then says it finished."""
        call = ToolCallSpec("bash", {"command": command})
        self.llm_server.script(Turn(tool_calls=(call,)), Turn(text="finished"))
        return self.run_di_code("run", *flags, "make it")

    def sent(self) -> str:
        """What the model was sent last: where a hook's words reach it."""
        return request_text(self.llm_server.requests[-1].body)


@pytest.fixture
def hooked(run_di_code: RunDiCode, llm_server: LLMServer, user_hook: WriteHook) -> HookedRun:
    return HookedRun(run_di_code, llm_server, user_hook)


def test_a_pre_tool_use_hook_refuses_rm_and_the_model_reads_why(
    hooked: HookedRun, workspace: Path
) -> None:
    (workspace / "keep.txt").write_text("precious\n")
    hooked.hook("PreToolUse", "no_rm.sh", NO_RM)
    done = hooked.bash("rm keep.txt", "--yes")
    assert done.returncode == 0, done.stderr
    assert (workspace / "keep.txt").exists()
    assert "Permission denied by a PreToolUse hook: no rm here: use git rm" in hooked.sent()


def test_the_hook_sees_the_call_as_json_and_lets_others_run(
    hooked: HookedRun, workspace: Path, tmp_path: Path
) -> None:
    seen = tmp_path / "seen.json"
    hooked.hook("PreToolUse", "log.sh", f"cat > {seen}\n")
    assert hooked.bash("touch made.txt", "--yes").returncode == 0
    assert (workspace / "made.txt").exists()
    event = json.loads(seen.read_text())
    assert event["hook_event_name"] == "PreToolUse" and event["tool_name"] == "bash"
    assert event["tool_input"] == {"command": "touch made.txt"}
    assert event["cwd"] == str(workspace.resolve())
    assert event["transcript_path"].endswith(f"{event['session_id']}.jsonl")  # Claude Code's


def test_a_failing_hook_fails_closed(hooked: HookedRun, workspace: Path) -> None:
    hooked.hook("PreToolUse", "broken.sh", "echo oops >&2\nexit 1\n")
    assert hooked.bash("touch made.txt", "--yes").returncode == 0
    assert not (workspace / "made.txt").exists()
    assert "exited 1: oops" in hooked.sent()


def test_allow_skips_the_question_and_ask_asks_even_in_auto(
    hooked: HookedRun, workspace: Path
) -> None:
    allow = '{"hookSpecificOutput": {"permissionDecision": "allow"}}'
    hooked.hook("PreToolUse", "allow.sh", f"echo '{allow}'\n")
    assert hooked.bash("touch allowed.txt").returncode == 0  # ask mode, no terminal to ask
    assert (workspace / "allowed.txt").exists()

    ask = '{"hookSpecificOutput": {"permissionDecision": "ask"}}'
    hooked.hook("PreToolUse", "ask.sh", f"echo '{ask}'\n")
    assert hooked.bash("touch asked.txt", "--yes").returncode == 0
    assert not (workspace / "asked.txt").exists()
    assert "no terminal to ask" in hooked.sent()


def test_a_post_tool_use_hook_tells_the_model_more(hooked: HookedRun, workspace: Path) -> None:
    hooked.hook("PostToolUse", "lint.sh", "echo 'lint: 3 warnings in made.txt' >&2\nexit 2\n")
    assert hooked.bash("touch made.txt", "--yes").returncode == 0
    assert (workspace / "made.txt").exists()
    assert "[PostToolUse hook] lint: 3 warnings in made.txt" in hooked.sent()


def test_a_failing_post_tool_use_hook_is_reported_and_the_result_stands(
    hooked: HookedRun, workspace: Path
) -> None:
    hooked.hook("PostToolUse", "broken.sh", "echo lint crashed >&2\nexit 3\n")
    done = hooked.bash("touch made.txt", "--yes")
    assert done.returncode == 0, done.stderr
    assert (workspace / "made.txt").exists()
    assert "PostToolUse hook `bash " in done.stderr and "exited 3: lint crashed" in done.stderr
    assert "lint crashed" not in hooked.sent()


def test_an_untrusted_projects_hooks_never_run(
    hooked: HookedRun, workspace: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    (workspace / ".di-code").mkdir()
    (workspace / ".di-code" / "config.toml").write_text(
        '[[hooks.PreToolUse]]\nmatcher = ""\n'
        f'hooks = [{{ type = "command", command = "touch {marker}" }}]\n'
    )
    done = hooked.bash("touch made.txt", "--yes")
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
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_hooks_get_the_environment_bash_gets_without_the_keys(
    run_di_code: RunDiCode, llm_server: LLMServer, di_code_home: Path, tmp_path: Path
) -> None:
    """Every hook (around a tool call and around the prompt) starts with the environment a
    bash command gets: the provider keys di-code holds, a configured `api_key_env` among them,
    are not in it; other variables and the project folder are."""
    dumps = {event: tmp_path / f"{event}.env" for event in ("PreToolUse", "Stop")}
    tables = "".join(
        f'[[hooks.{event}]]\nhooks = [{{ type = "command", command = "env > {path}" }}]\n'
        for event, path in dumps.items()
    )
    gateway = '[providers.gateway]\napi = "openai"\napi_key_env = "MY_GATEWAY_TOKEN"\n'
    gateway += 'base_url = "http://127.0.0.1:9/v1"\n'
    (di_code_home / "config.toml").write_text(gateway + tables)
    call = ToolCallSpec("bash", {"command": "true"})
    llm_server.script(Turn(tool_calls=(call,)), Turn(text="finished"))
    keys = {
        "ANTHROPIC_API_KEY": "sk-ant-hook-0001",
        "GEMINI_API_KEY": "gm-hook-0002",
        "MY_GATEWAY_TOKEN": "gw-hook-0003",
    }
    done = run_di_code("run", "--yes", "go", env_extra={**keys, "DI_CODE_TEST_SEEN": "kept"})
    assert done.returncode == 0, done.stderr
    for event, path in dumps.items():
        seen = path.read_text()
        for secret in (API_KEY, *keys.values()):
            assert secret not in seen, event
        assert "DI_CODE_TEST_SEEN=kept" in seen and "DI_CODE_PROJECT_DIR=" in seen


def test_only_the_users_own_config_passes_a_hidden_variable_to_a_hook(
    run_di_code: RunDiCode,
    llm_server: LLMServer,
    di_code_home: Path,
    workspace: Path,
    tmp_path: Path,
) -> None:
    """`env = [...]` on a hook in the user's own config passes those variables (a key the hook
    needs); the same line in a trusted project's file passes nothing and says so."""
    mine, theirs = tmp_path / "mine.env", tmp_path / "theirs.env"
    (di_code_home / "config.toml").write_text(
        '[[hooks.Stop]]\nhooks = [{ type = "command", command = "env > '
        f'{mine}", env = ["ANTHROPIC_API_KEY"] }}]\n'
    )
    (workspace / ".git").mkdir()
    project = workspace / ".di-code" / "config.toml"
    project.parent.mkdir()
    project.write_text(
        '[[hooks.Stop]]\nhooks = [{ type = "command", command = "env > '
        f'{theirs}", env = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY"] }}]\n'
    )
    assert run_di_code("trust", server=False).returncode == 0
    llm_server.script(Turn(text="finished"))
    done = run_di_code("run", "go", env_extra={"ANTHROPIC_API_KEY": "sk-ant-for-my-hook"})
    assert done.returncode == 0, done.stderr
    assert "ANTHROPIC_API_KEY=sk-ant-for-my-hook" in mine.read_text()
    assert API_KEY not in mine.read_text()
    assert "sk-ant-for-my-hook" not in theirs.read_text()
    assert API_KEY not in theirs.read_text()
    assert f"{project}: a hook's env is honoured only in your own config" in done.stderr
