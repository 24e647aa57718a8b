"""Issue 23 §6: an untrusted project may only tighten what the user set: it cannot lift the
user's limits, nor send the prompt to a provider or local server the user never set up."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from di_code.config.settings import load_settings
from di_code.config.trust import trusted_mcp_json
from di_code.config.trusting import HeldBack, held_back_items, trust_offer, trust_project
from tests.support.files import write
from tests.support.llm_server import LLMServer, Turn

DI_CODE = str(Path(sys.executable).parent / "di-code")
KEY = "sk-user-own-key-0123456789abcdef"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "clone"
    (root / ".git").mkdir(parents=True)
    return root


def project(repo: Path, text: str) -> Path:
    return write(repo / ".di-code" / "config.toml", text)


def test_a_project_cannot_lift_the_users_turn_limit(repo: Path, di_code_home: Path) -> None:
    write(di_code_home / "config.toml", "[limits]\nmax_turns = 5\n")
    project(repo, "[limits]\nmax_turns = 100000\n")
    assert load_settings(di_code_home, repo).max_turns == 5
    trust_project(di_code_home, repo)
    assert load_settings(di_code_home, repo).max_turns == 5  # trusted or not: only lower


def test_a_project_may_lower_the_limit_or_set_one(repo: Path, di_code_home: Path) -> None:
    project(repo, "[limits]\nmax_turns = 3\n")
    assert load_settings(di_code_home, repo).max_turns == 3
    write(di_code_home / "config.toml", "[limits]\nmax_turns = 5\n")
    assert load_settings(di_code_home, repo).max_turns == 3


@pytest.mark.parametrize("model", ["llamacpp/any", "ollama/llama3", "evil/x", "gpt-4.1"])
def test_a_project_model_on_a_provider_the_user_never_set_up_waits_for_trust(
    repo: Path, di_code_home: Path, model: str
) -> None:
    path = project(repo, f'model = "{model}"\n')
    settings = load_settings(di_code_home, repo, env={})
    assert settings.model is None
    assert settings.warnings == (
        f"{path}: ignored until you trust this project (di-code trust): model",
    )
    trust_project(di_code_home, repo)
    assert load_settings(di_code_home, repo, env={}).model == model


@pytest.mark.parametrize(
    ("user", "env"),
    [
        ("[providers.llamacpp]\nbase_url = 'http://gpu:8080/v1'\n", {}),
        ("model = 'llamacpp/mine'\n", {}),
        ("[discovery]\nurls = ['llamacpp=http://127.0.0.1:8080/v1']\n", {}),
        ("", {"LLAMACPP_BASE_URL": "http://127.0.0.1:8080/v1"}),
        ("", {"DI_CODE_DISCOVERY": "llamacpp=http://127.0.0.1:8080/v1"}),
    ],
)
def test_a_project_model_on_a_provider_the_user_set_up_applies(
    repo: Path, di_code_home: Path, user: str, env: dict[str, str]
) -> None:
    write(di_code_home / "config.toml", user)
    project(repo, 'model = "llamacpp/any"\n')
    settings = load_settings(di_code_home, repo, env=env)
    assert settings.model == "llamacpp/any"
    assert settings.warnings == ()


def test_a_keyed_provider_counts_once_its_key_is_set(repo: Path, di_code_home: Path) -> None:
    project(repo, 'model = "anthropic/claude-sonnet-4-5"\n')
    assert load_settings(di_code_home, repo, env={}).model is None
    with_key = load_settings(di_code_home, repo, env={"ANTHROPIC_API_KEY": KEY})
    assert with_key.model == "anthropic/claude-sonnet-4-5"


def test_the_prompt_goes_to_the_users_server_not_the_projects_local_one(
    repo: Path, di_code_home: Path
) -> None:
    with LLMServer() as own, LLMServer() as local:
        own.script(Turn(text="from the user's own server"))
        local.script(Turn(text="from the project's server"))
        project(repo, 'model = "llamacpp/any"\n')
        user = (
            f'model = "openai/test-model"\n[providers.openai]\nbase_url = "{own.openai_base_url}"'
        )
        write(di_code_home / "config.toml", user + "\n")
        env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL"))}
        env.update(
            DI_CODE_HOME=str(di_code_home),
            DI_CODE_DISCOVERY=f"{local.openai_base_url}",  # a bare URL names no provider
            OPENAI_API_KEY=KEY,
        )
        env.pop("DI_CODE_MODEL", None)
        done = subprocess.run(
            [DI_CODE, "run", "--no-session", "hi"],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout == "from the user's own server\n"
        assert local.requests == []
    assert "ignored until you trust this project (di-code trust): model" in done.stderr


def project_mcp_json(home: Path, workspace: Path) -> tuple[Path | None, str | None]:
    """The `.mcp.json` used (if trusted) and why not."""
    path, data, why_not = trusted_mcp_json(home, workspace)
    return (path if data is not None else None), why_not


def mcp_json(folder: Path, command: str = "./server.sh") -> Path:
    (folder / ".git").mkdir(parents=True, exist_ok=True)
    return write(folder / ".mcp.json", f'{{"mcpServers": {{"s": {{"command": "{command}"}}}}}}')


def run_trust(home: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DI_CODE_HOME": str(home)}
    return subprocess.run(
        [DI_CODE, "trust", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )


def test_a_symlink_to_a_trusted_projects_mcp_json_is_not_trusted(
    tmp_path: Path, di_code_home: Path
) -> None:
    trusted, clone = tmp_path / "mine", tmp_path / "clone"
    mcp_json(trusted)
    assert run_trust(di_code_home, trusted).returncode == 0
    assert project_mcp_json(di_code_home, trusted) == (trusted / ".mcp.json", None)
    (clone / ".git").mkdir(parents=True)
    (clone / ".mcp.json").symlink_to(trusted / ".mcp.json")
    path, why_not = project_mcp_json(di_code_home, clone)
    assert path is None
    assert why_not == (
        f"{clone / '.mcp.json'}: its MCP servers start once you trust the project (di-code trust)"
    )


def test_mcp_json_trust_is_listed_and_revoked(tmp_path: Path, di_code_home: Path) -> None:
    folder = tmp_path / "repo"
    path = mcp_json(folder)
    assert run_trust(di_code_home, folder).stdout == (
        f"trusted {path} as it is now: its MCP servers may start\n"
    )
    listed = run_trust(di_code_home, folder, "--list").stdout.splitlines()
    assert len(listed) == 1
    assert listed[0].startswith(f"{path}  sha256:") and listed[0].endswith("  trusted")
    path.write_text('{"mcpServers": {}}', encoding="utf-8")
    assert run_trust(di_code_home, folder, "--list").stdout.endswith("  changed since\n")
    revoked = run_trust(di_code_home, folder, "--revoke")
    assert revoked.stdout == f"no longer trusted: {path}\n"
    assert run_trust(di_code_home, folder, "--list").stdout == "no trusted projects\n"


def test_revoke_takes_back_the_settings_file_and_mcp_json(repo: Path, di_code_home: Path) -> None:
    path = mcp_json(repo)
    project(repo, "[permissions]\nmode = 'auto'\n")
    assert run_trust(di_code_home, repo).returncode == 0
    assert project_mcp_json(di_code_home, repo) == (path, None)
    assert len(run_trust(di_code_home, repo, "--list").stdout.splitlines()) == 2
    revoked = run_trust(di_code_home, repo, "--revoke").stdout
    assert revoked == f"no longer trusted: {repo}\nno longer trusted: {path}\n"
    assert project_mcp_json(di_code_home, repo)[0] is None
    assert load_settings(di_code_home, repo).permission_mode is None


def test_the_first_run_question_names_a_held_back_model(
    repo: Path, di_code_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = project(repo, 'model = "llamacpp/any"\n')
    monkeypatch.delenv("LLAMACPP_BASE_URL", raising=False)
    monkeypatch.delenv("DI_CODE_DISCOVERY", raising=False)
    offer = trust_offer(di_code_home, repo)
    assert offer is not None and offer.text == f'{path} would set:\n  model = "llamacpp/any"'


def test_the_held_back_values_are_listed_for_the_question(
    repo: Path, di_code_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DI_CODE_DISCOVERY", raising=False)
    settings = project(
        repo,
        'model = "llamacpp/any"\n[providers.openai]\nbase_url = "http://127.0.0.1:9/v1"\n'
        '[permissions]\nallow = ["bash"]\n',
    )
    servers = mcp_json(repo, "./run-me.sh")
    assert held_back_items(di_code_home, repo) == [
        HeldBack(
            settings,
            (
                ("model", '"llamacpp/any"'),
                ("providers.openai.base_url", '"http://127.0.0.1:9/v1"'),
                ("permissions.allow", '["bash"]'),
            ),
        ),
        HeldBack(servers, (("mcpServers.s", "./run-me.sh"),)),
    ]
    trust_project(di_code_home, repo)
    assert held_back_items(di_code_home, repo) == []


def test_a_settings_file_linked_to_a_trusted_projects_is_not_trusted(
    tmp_path: Path, di_code_home: Path
) -> None:
    mine, clone = tmp_path / "mine", tmp_path / "clone"
    for folder in (mine, clone):
        (folder / ".git").mkdir(parents=True)
    project(mine, "[permissions]\nmode = 'auto'\n")
    trust_project(di_code_home, mine)
    (clone / ".di-code").mkdir()
    (clone / ".di-code" / "config.toml").symlink_to(mine / ".di-code" / "config.toml")
    assert load_settings(di_code_home, mine).permission_mode == "auto"
    assert load_settings(di_code_home, clone).permission_mode is None
