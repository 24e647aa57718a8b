"""The composition root shared by `run` and `chat`: options → settings → model → provider →
tools (permission-gated) → system prompt → Agent.

Every problem the user must fix (a bad flag value, a missing key, an unknown provider or tool)
raises `ConfigError` with one line; the command turns it into exit code 2.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import cast

from di_code.agent.agent import Agent
from di_code.agent.tool import AgentTool
from di_code.ai.stream import Provider, StreamOptions
from di_code.ai.types import Message, Model, ReasoningLevel
from di_code.cli.options import CliOptions
from di_code.config.discovery import candidates, discover
from di_code.config.models import PRESETS, resolve_model
from di_code.config.selection import (
    ModelRequest,
    Selection,
    select_model,
    timeouts_from,
    with_limits,
)
from di_code.config.settings import PERMISSION_MODES, ConfigError, Settings, di_code_home
from di_code.config.settings import load_settings as load_settings_files
from di_code.config.system_prompt import build_system_prompt, prompt_text
from di_code.session import Session, SessionError, SessionStore
from di_code.tools.permissions import (
    Approver,
    PermissionGate,
    PermissionMode,
    PermissionRules,
    gate_tools,
)

Notify = Callable[[str], None]


def notify_stderr(text: str) -> None:
    print(f"di-code: {text}", file=sys.stderr, flush=True)


@dataclass(frozen=True, slots=True)
class Prepared:
    """Everything a command needs to run prompts."""

    agent: Agent
    model: Model
    gate: PermissionGate
    settings: Settings
    workspace: Path
    home: Path
    secrets: tuple[str, ...]
    """Strings that must never be printed (the API key)."""
    session: Session | None
    """Where the conversation is recorded; None with --no-session."""


async def prepare(
    options: CliOptions,
    *,
    approver: Approver | None = None,
    env: Mapping[str, str] | None = None,
    workspace: Path | None = None,
    notify: Notify = notify_stderr,
) -> Prepared:
    env = os.environ if env is None else env
    workspace = (workspace or Path.cwd()).resolve()
    home = di_code_home()
    settings = load_settings_files(home, workspace)
    selection = await with_limits(
        await choose_model(options, settings, env, notify), settings, options.context_window
    )
    roots = extra_roots(options.add_dir, workspace)
    rules = PermissionRules.parse(settings.allow, settings.deny)
    gate = PermissionGate(permission_mode(options, settings), rules, approver)
    tools = gate_tools(select_tools(workspace, roots, options.tools), gate)
    session, history = open_session(options, home, workspace, notify)
    agent = Agent(
        make_provider(selection),
        selection.model,
        tools,
        system_prompt(options, [tool.name for tool in tools], workspace, home, roots),
        messages=history,
        max_turns=options.max_turns or settings.max_turns,
        options=StreamOptions(reasoning=reasoning(options, settings)),
    )
    if session is not None:
        session.record(agent)
    secrets = (selection.api_key,) if selection.api_key else ()
    return Prepared(agent, selection.model, gate, settings, workspace, home, secrets, session)


def open_session(
    options: CliOptions, home: Path, workspace: Path, notify: Notify
) -> tuple[Session | None, list[Message]]:
    """The session to record into (None with --no-session) and the messages to resume."""
    store = SessionStore(home)
    try:
        if options.session is not None:
            resumed: Session | None = store.find(options.session, workspace)
        elif options.continue_session:
            resumed = store.latest(workspace)
            if resumed is None:
                raise ConfigError(f"no session to continue in {workspace}")
        else:
            resumed = None
        for warning in resumed.warnings if resumed else ():
            notify(warning)
        history = resumed.context() if resumed else []
        if options.no_session:
            return None, history
        return resumed or store.create(workspace), history
    except SessionError as exc:
        raise ConfigError(str(exc)) from exc


async def choose_model(
    options: CliOptions, settings: Settings, env: Mapping[str, str], notify: Notify
) -> Selection:
    """The configured model, else the first local server that answers, else exit 2."""
    request = ModelRequest(options.model, options.provider, options.base_url, options.api_key)
    selection = select_model(request, settings, env)
    if selection is not None:
        return selection
    preset_urls = {name: preset.base_url for name, preset in PRESETS.items()}
    server = await discover(candidates(env, settings.discovery, preset_urls))
    if server is None:
        raise ConfigError(
            "no model configured: set OPENAI_API_KEY or ANTHROPIC_API_KEY, pass "
            "--model PROVIDER/ID (or set DI_CODE_MODEL or model in config.toml), or start a "
            "local server (Ollama, LM Studio, llama.cpp or vLLM)"
        )
    notify(f"using {server.model_id} from the local {server.name} server at {server.base_url}")
    preset = PRESETS.get(server.name) or PRESETS["llamacpp"]
    return Selection(resolve_model(preset, server.model_id, server.base_url), options.api_key or "")


def make_provider(selection: Selection) -> Provider:
    from di_code.ai.providers import PROVIDER_CLASSES

    api = selection.model.api
    provider_class = PROVIDER_CLASSES.get(api)
    if provider_class is None:
        raise ConfigError(f'unknown api "{api}" (known: {", ".join(sorted(PROVIDER_CLASSES))})')
    base_url = selection.model.base_url
    if not base_url:
        raise ConfigError(f"no base URL for {selection.model.provider}: pass --base-url")
    timeouts = timeouts_from(os.environ)
    provider: Provider = provider_class(
        api_key=selection.api_key or None, base_url=base_url, **timeouts
    )
    return provider


async def close_provider(provider: Provider) -> None:
    """Close the provider's HTTP client, if it has one, before the event loop ends."""
    aclose = getattr(provider, "aclose", None)
    if aclose is not None:
        await aclose()


def permission_mode(options: CliOptions, settings: Settings) -> PermissionMode:
    """--permission-mode, then --yes (auto), then the settings, then ask."""
    mode = options.permission_mode or ("auto" if options.yes else None)
    mode = mode or settings.permission_mode or "ask"
    if mode not in PERMISSION_MODES:
        raise ConfigError(f"--permission-mode must be one of {', '.join(PERMISSION_MODES)}")
    return cast(PermissionMode, mode)


def reasoning(options: CliOptions, settings: Settings) -> ReasoningLevel:
    """--thinking turns reasoning on: the settings' level, else medium."""
    if options.thinking:
        return "medium" if settings.thinking in (None, "off") else settings.thinking
    return settings.thinking or "off"


def extra_roots(add_dirs: Sequence[str], workspace: Path) -> list[Path]:
    roots = []
    for entry in add_dirs:
        root = (workspace / Path(entry).expanduser()).resolve()
        if not root.is_dir():
            raise ConfigError(f"--add-dir: not a folder: {entry}")
        roots.append(root)
    return roots


def select_tools(workspace: Path, roots: Sequence[Path], names: str | None) -> list[AgentTool]:
    """The default tools, or only those `--tools a,b` names (an unknown name is an error)."""
    from di_code.tools import default_tools

    tools = list(default_tools(workspace, extra_roots=tuple(roots)))
    if names is None:
        return tools
    wanted = [name.strip() for name in names.split(",") if name.strip()]
    known = {tool.name for tool in tools}
    unknown = [name for name in wanted if name not in known]
    if unknown:
        raise ConfigError(f"unknown tool {unknown[0]!r} (known: {', '.join(sorted(known))})")
    return [tool for tool in tools if tool.name in wanted]


def system_prompt(
    options: CliOptions,
    tool_names: Sequence[str],
    workspace: Path,
    home: Path,
    roots: Sequence[Path],
) -> str:
    """--system-prompt replaces the default; --append-system-prompt adds to either."""
    if options.system_prompt is not None:
        text = prompt_text(options.system_prompt)
    else:
        text = build_system_prompt(
            tool_names=tool_names,
            workspace=workspace,
            home=home,
            today=date.today(),
            extra_roots=roots,
        )
    if options.append_system_prompt is not None:
        text = f"{text}\n\n{prompt_text(options.append_system_prompt)}"
    return text
