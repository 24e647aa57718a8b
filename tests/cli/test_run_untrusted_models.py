"""What a cloned project names cannot pick where a request goes (issue 32, models).

A real listener on a local server's own port (tests/support/local_port.py) stands in for
whatever a cloned project would like the prompt sent to. The user's own model is the loopback
test server. Each untrusted source names the local preset; the listener must see no
connection, and a subagent still runs, on the user's model.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.conftest import RunDiCode
from tests.support.agent_files import agent_file, script_one_task, task
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn
from tests.support.local_port import Listener, local_preset_listener


@pytest.fixture
def local_port() -> Iterator[Listener]:
    with local_preset_listener() as listener:
        yield listener


def a_repository(workspace: Path) -> None:
    (workspace / ".git").mkdir()


@pytest.mark.parametrize("folder", [".claude/agents", ".di-code/agents"])
def test_a_project_s_agent_file_cannot_send_its_subagent_to_a_local_port(
    run_di_code: RunDiCode,
    llm_server: LLMServer,
    workspace: Path,
    local_port: Listener,
    folder: str,
) -> None:
    a_repository(workspace)
    path = agent_file(workspace / folder, f"{local_port.name}/any")
    script_one_task(llm_server, "helper")
    done = run_di_code("run", "delegate it")
    assert done.returncode == 0, done.stderr
    assert local_port.connections == 0
    assert done.stdout.strip() == "all done"
    sub = llm_server.requests[1].body
    assert sub["model"] == "test-model"  # the subagent ran, on the user's own model
    said = [line for line in done.stderr.splitlines() if f"{local_port.name}/any" in line]
    assert len(said) == 1, done.stderr
    assert str(path) in said[0] and "not one you set up" in said[0]


def test_every_task_of_a_held_back_file_says_it_once(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, local_port: Listener
) -> None:
    a_repository(workspace)
    agent_file(workspace / ".claude" / "agents", f"{local_port.name}/any")
    calls = tuple(
        ToolCallSpec(
            "task", {"description": "j", "prompt": f"job {n}", "subagent_type": "helper"}, f"t{n}"
        )
        for n in range(3)
    )
    llm_server.script(Turn(tool_calls=calls), *[Turn(text="ok")] * 3, Turn(text="done"))
    done = run_di_code("run", "delegate")
    assert done.returncode == 0, done.stderr
    assert local_port.connections == 0
    assert done.stderr.count(f"{local_port.name}/any") == 1


def test_the_user_s_own_agent_file_still_picks_the_local_server(
    run_di_code: RunDiCode,
    llm_server: LLMServer,
    workspace: Path,
    di_code_home: Path,
    local_port: Listener,
) -> None:
    """The control: the listener is reachable, and the user's own choice is kept."""
    a_repository(workspace)
    agent_file(di_code_home / "agents", f"{local_port.name}/any")
    llm_server.script(Turn(tool_calls=(task("helper"),)), Turn(text="done anyway"))
    done = run_di_code("run", "delegate it")
    assert local_port.connections >= 1, done.stderr


def test_a_project_agent_file_may_name_a_provider_the_user_set_up(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    a_repository(workspace)
    agent_file(workspace / ".claude" / "agents", "openai/cheap-model")
    llm_server.script(
        Turn(tool_calls=(task("helper"),)),
        Turn(text="cheap answer", model="cheap-model"),
        Turn(text="done"),
    )
    done = run_di_code("run", "delegate it")
    assert done.returncode == 0, done.stderr
    assert llm_server.requests[1].body["model"] == "cheap-model"
    assert "cheap-model" not in done.stderr


@pytest.mark.parametrize(
    "config",
    ['model = "{name}/any"\n', '[subagents]\nmodel = "{name}/any"\n'],
    ids=["model", "subagents.model"],
)
def test_a_project_config_cannot_pick_a_local_port(
    run_di_code: RunDiCode,
    llm_server: LLMServer,
    workspace: Path,
    local_port: Listener,
    config: str,
) -> None:
    a_repository(workspace)
    (workspace / ".di-code").mkdir()
    (workspace / ".di-code" / "config.toml").write_text(config.format(name=local_port.name))
    script_one_task(llm_server, None)
    done = run_di_code("run", "delegate it", env_extra={"DI_CODE_MODEL": ""})
    assert done.returncode == 0, done.stderr
    assert local_port.connections == 0
    assert "ignored until you trust this project" in done.stderr


def test_a_project_command_or_skill_naming_a_model_picks_none(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, local_port: Listener
) -> None:
    a_repository(workspace)
    model = f"{local_port.name}/any"
    commands = workspace / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "go.md").write_text(f"---\nmodel: {model}\n---\nDelegate the job.\n")
    skill = workspace / ".claude" / "skills" / "helper"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        f"---\nname: helper\ndescription: helps\nmodel: {model}\n---\nUse {model}.\n"
    )
    script_one_task(llm_server, None)
    done = run_di_code("run", "/go")
    assert done.returncode == 0, done.stderr
    assert local_port.connections == 0
    assert [r.body["model"] for r in llm_server.requests] == ["test-model"] * 3


def test_a_discovery_entry_elsewhere_does_not_open_the_preset_s_own_port(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, local_port: Listener
) -> None:
    """`NAME=URL` in DI_CODE_DISCOVERY sets up NAME at URL; `NAME/ID` would go to the preset's
    own port instead, which the user never named: a project may not pick it."""
    a_repository(workspace)
    agent_file(workspace / ".di-code" / "agents", f"{local_port.name}/any")
    (workspace / ".di-code" / "config.toml").write_text(f'model = "{local_port.name}/any"\n')
    script_one_task(llm_server, "helper")
    elsewhere = f"{local_port.name}={llm_server.openai_base_url}"
    done = run_di_code("run", "delegate it", env_extra={"DI_CODE_DISCOVERY": elsewhere})
    assert done.returncode == 0, done.stderr
    assert local_port.connections == 0
    assert "ignored until you trust this project (di-code trust): model" in done.stderr
    assert f"ignored model '{local_port.name}/any'" in done.stderr
