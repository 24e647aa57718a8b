"""A deny rule holds for what the model would type into a shell job as for a bash call: with
`bash:touch` denied, a background `bash` to type `touch` into is refused at its start (in auto
mode too), so nothing is typed and nothing is touched; a rule on `job_input` itself refuses
every typing into any job."""

from __future__ import annotations

from pathlib import Path

from tests.cli.conftest import RunDiCode
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn


def call(name: str, **arguments: object) -> Turn:
    return Turn(tool_calls=(ToolCallSpec(name, dict(arguments)),))


def tool_results(server: LLMServer) -> list[str]:
    return [m["content"] for m in server.requests[-1].body["messages"] if m["role"] == "tool"]


def test_a_shell_job_to_type_a_denied_command_into_is_refused(
    run_di_code: RunDiCode, llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    (di_code_home / "config.toml").write_text('[permissions]\ndeny = ["bash:touch"]\n')
    llm_server.script(
        call("bash", command="exec bash", background=True),
        call("job_input", job_id=1, text="touch denied-file\n"),
        Turn(text="Done."),
    )
    done = run_di_code("run", "--yes", "--sandbox", "off", "go")
    assert done.returncode == 0, done.stderr
    refused, typed = tool_results(llm_server)
    assert refused.startswith("Permission denied: a deny rule"), refused
    assert "No background job 1" in typed
    assert not (workspace / "denied-file").exists()


def test_a_deny_rule_on_job_input_refuses_all_typing(
    run_di_code: RunDiCode, llm_server: LLMServer, di_code_home: Path
) -> None:
    (di_code_home / "config.toml").write_text('[permissions]\ndeny = ["job_input"]\n')
    llm_server.script(
        call("bash", command="exec cat", background=True),
        call("job_input", job_id=1, text="typed-in\n"),
        call("job_output", job_id=1, wait=1),
        Turn(text="Done."),
    )
    done = run_di_code("run", "--yes", "--sandbox", "off", "go")
    assert done.returncode == 0, done.stderr
    _, refused, read = tool_results(llm_server)
    assert refused.startswith("Permission denied: a deny rule in the settings blocks job_input")
    assert "typed-in" not in read
