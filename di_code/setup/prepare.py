"""The composition root shared by `run` and `chat`: options → settings → model → provider →
tools (permission-gated) → system prompt → Agent.

Every problem the user must fix (a bad flag value, a missing key, an unknown provider or tool)
raises `ConfigError` with one line; the command turns it into exit code 2.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, cast

from di_code.agent.agent import Agent
from di_code.agent.loop import DEFAULT_MAX_TURNS
from di_code.agent.tool import AgentTool
from di_code.ai.budget import RequestBudget
from di_code.ai.stream import Provider, StreamOptions, close_provider
from di_code.ai.types import Message, Model, ReasoningLevel
from di_code.config.provider_factory import ProviderFactory, key_variables
from di_code.config.selection import Selection
from di_code.config.settings import (
    PERMISSION_MODES,
    SANDBOX_MODES,
    ConfigError,
    Settings,
    di_code_home,
)
from di_code.config.settings import load_settings as load_settings_files
from di_code.config.skills import Skill, load_skills
from di_code.config.system_prompt import build_system_prompt, prompt_text, with_context_files
from di_code.setup.environment import environment_block, git_state
from di_code.setup.flags import CliOptions
from di_code.setup.gate_paths import gate_paths
from di_code.setup.hooks import agent_hooks
from di_code.setup.lsp import language_servers, warm_when_allowed
from di_code.setup.mcp import start_mcp_servers
from di_code.setup.model import model_list, session_model
from di_code.setup.prepared import Notify, Prepared
from di_code.setup.recording import session_recorder, snapshot_refs
from di_code.system.first_use import import_off_loop
from di_code.system.http_client import warm_up_http
from di_code.tools import plan_tool
from di_code.tools.builtin.support.job_history import job_notices
from di_code.tools.policy.modes import PLAN_TOOL, PermissionMode, offered_tools, session_tools
from di_code.tools.policy.permissions import Approver, PermissionGate, PermissionRules
from di_code.tools.process.sandbox import probe_off_the_loop

if TYPE_CHECKING:
    from di_code.session import Session
    from di_code.tools.builtin.support.bash_policy import BashPolicy
    from di_code.tools.builtin.support.editor_files import EditorFiles
    from di_code.tools.builtin.support.editor_terminal import EditorTerminals
    from di_code.tools.extensions.mcp_config import McpServerConfig
    from di_code.tools.lsp.manager import LanguageServers
    from di_code.tools.process.sandbox_mounts import SandboxPaths

TASK_TOOL = "task"
"""Made after the other tools (it hands them to subagents): di_code.setup.subagents."""


async def prepare(
    options: CliOptions,
    *,
    approver: Approver | None = None,
    env: Mapping[str, str] | None = None,
    workspace: Path | None = None,
    notify: Notify,
    editor: EditorFiles | None = None,
    terminals: EditorTerminals | None = None,
    mcp_servers: Sequence[McpServerConfig] = (),
    chat: bool = False,
    switchable: bool = False,
) -> Prepared:
    """For the chat, MCP servers start in the background and `-c` continues the newest chat;
    the chat adds what only it uses to what this returns. `switchable`: the permission mode
    may change later (an editor's sessions; a chat's always may)."""
    env = os.environ if env is None else env
    workspace = (workspace or Path.cwd()).resolve()
    home = di_code_home()
    settings = load_settings_files(home, workspace, env)
    for warning in settings.warnings:
        notify(warning)
    budget = RequestBudget(options.max_turns or settings.max_turns or DEFAULT_MAX_TURNS)
    factory = ProviderFactory(settings, env, notify, budget)
    session, history = open_session(options, home, workspace, notify, "chat" if chat else "run")
    selection = await session_model(options, factory, session)
    provider = factory.open(selection)  # its key and URL are never printed nor saved from here on
    warm_up_http(*filter(None, [selection.model.base_url]))  # beside the set-up below
    roots = extra_roots(options.add_dir, workspace)
    git = None  # overlaps the set-up below; a replaced system prompt needs none of it
    if options.system_prompt is None:
        refs = "" if chat or switchable or session is None else snapshot_refs(session)
        git = asyncio.create_task(asyncio.to_thread(git_state, workspace, refs))
    skills = load_skills(home, workspace)
    for warning in skills.warnings:
        notify(warning)
    skill_roots = [s.folder for s in skills.skills if not s.path.is_relative_to(workspace)]
    rules = PermissionRules.parse(settings.allow, settings.deny)
    mode = permission_mode(options, settings)
    gate = PermissionGate(mode, rules, approver)
    gate.protected, gate.place = gate_paths(workspace, roots, home)
    requested_sandbox = options.sandbox or settings.sandbox_mode
    await probe_off_the_loop(requested_sandbox, gate.mode, switchable=chat or switchable)
    bash = bash_policy(options, settings, gate, selection, env, session, notify, home, terminals)
    mcp = await start_mcp_servers(settings, home, workspace, notify, mcp_servers, wait=not chat)
    lsp = language_servers(
        settings, workspace, notify, env, bash.hidden_env, bash.sandboxing.paths, gate.mode
    )
    if chat or switchable:
        warm_when_allowed(lsp, gate)
    await import_off_loop("importlib.metadata")  # select_tools finds the plugins with it
    offered = select_tools(
        workspace, roots, options.tools, bash, notify, skill_roots, editor, rules.fetch_hosts(), lsp
    )
    mcp_tools = mcp.new_tools(taken=[tool.name for tool in offered]) if mcp else []
    tools = session_tools([*offered, *mcp_tools, plan_tool(lambda: gate.mode)], gate.mode)
    names = [tool.name for tool in tools if tool.name != PLAN_TOOL]  # its card says it all
    task = options.tools is None or TASK_TOOL in {n.strip() for n in options.tools.split(",")}
    hooks, prompt_hooks, session_hooks = agent_hooks(
        settings, gate, workspace, session, notify, bash.hidden_env, home / "config.toml"
    )
    state = await git if git else None
    agent = Agent(
        provider,
        selection.model,
        tools,
        system_prompt(
            options,
            [*names, TASK_TOOL] if task else names,
            workspace,
            home,
            roots,
            skills.skills,
            environment_block(state.text, gate.mode, bash.sandbox()) if state else "",
        ),
        messages=history,
        budget=budget,
        options=StreamOptions(reasoning=reasoning(options, settings)),
        hooks=hooks,
        prompt_hooks=prompt_hooks,
        offer=lambda tools: offered_tools(tools, gate.mode),
    )
    agent.notices = job_notices(bash.jobs, history, notify, as_they_end=not chat)
    if task:
        from di_code.setup.subagents import add_task_tool

        add_task_tool(agent, factory, workspace, roots, skills.skills, session)
    # a chat's or an editor's first prompt may come long after start-up (a `git init`, a
    # removed `.git` in between), and /clear's sessions later still: only a run's follows
    attach = session_recorder(workspace, roots, notify, None if chat or switchable else state)
    if session is not None:
        attach(agent, session)
    return Prepared(
        agent,
        session,
        gate=gate,
        workspace=workspace,
        home=home,
        switch_model=lambda spec: switched(factory, spec),
        models=lambda: model_list(settings, env),
        mcp=mcp,
        lsp=lsp,
        attach_session=attach,
        jobs=bash.jobs,
        bash_state=bash.state,
        hidden_env=bash.hidden_env,
        session_hooks=session_hooks,
        notify=settings.notify or "auto",
    )


def switched(factory: ProviderFactory, spec: str) -> tuple[Provider, Model]:
    """The chat's /model provider/id: resolved like --model, with the same keys and settings."""
    chosen = factory.choose(spec)
    assert chosen is not None  # the user named it: an error is raised, never held back
    return chosen


async def close_prepared(
    prepared: Prepared, provider: Provider, notify: Notify | None = None
) -> None:
    """Close the HTTP client and stop the MCP and language servers, before the loop ends;
    let the session go (another process, or a later load, may then write it) once its last
    entry is on the disk (a failed fsync told to `notify`)."""
    await close_provider(provider)
    if prepared.jobs is not None:
        await prepared.jobs.stop_all()
    if prepared.session is not None:
        await prepared.session.synced(notify)
        prepared.session.release()
    if prepared.mcp is not None:
        await prepared.mcp.aclose()
    if prepared.lsp is not None:
        await prepared.lsp.aclose()


def open_session(
    options: CliOptions, home: Path, workspace: Path, notify: Notify, origin: str
) -> tuple[Session | None, list[Message]]:
    """The session to record into (None with --no-session) and the messages to resume
    (`chat -c` continues the newest chat, `run -c` the newest session of either)."""
    if options.no_session and options.session is None and not options.continue_session:
        return None, []  # nothing to read or write: the session code is not even loaded
    from di_code.session import SessionError, SessionStore

    store = SessionStore(home)
    if options.session is None and not options.continue_session and not options.fork:
        return store.create(workspace, origin), []  # nothing stored to find: its code unloaded
    from di_code.setup.session_choice import chosen_session

    try:
        resumed = chosen_session(options, store, workspace, origin)
        for warning in resumed.warnings if resumed else ():
            notify(warning)
        history = resumed.context() if resumed else []
        if options.no_session:
            if resumed is not None:
                resumed.release()  # read, not written: another process may go on with it
            return None, history
        if options.fork and resumed is not None:  # read, not held: it stays as it was
            from di_code.session.fork import fork

            return fork(store, resumed, workspace, resumed.leaf_id, origin), history
        return resumed or store.create(workspace, origin), history
    except SessionError as exc:
        raise ConfigError(str(exc)) from exc


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


def bash_policy(
    options: CliOptions,
    settings: Settings,
    gate: PermissionGate,
    selection: Selection,
    env: Mapping[str, str],
    session: Session | None,
    notify: Notify,
    home: Path,
    terminals: EditorTerminals | None = None,
) -> BashPolicy:
    """The sandbox (--sandbox, else [sandbox] mode, else by the gate's permission mode of the
    moment), the key variables hidden from commands, the session's folder for long
    outputs, and the editor's terminals commands run in (`di-code acp`)."""
    from di_code.tools.builtin.support.bash_policy import BashPolicy
    from di_code.tools.builtin.support.spill import SpillFolder
    from di_code.tools.process.program_env import KEY_VARIABLES
    from di_code.tools.process.sandbox import SandboxUnavailable, choose_sandbox

    requested = options.sandbox or settings.sandbox_mode
    if requested is not None and requested not in SANDBOX_MODES:
        raise ConfigError(f"--sandbox must be one of {', '.join(SANDBOX_MODES)}")
    try:
        network = bool(settings.sandbox_network)
        paths = sandbox_paths(settings, home)
        sandbox, note = choose_sandbox(requested, gate.mode, network, paths)  # type: ignore[arg-type]
    except SandboxUnavailable as exc:
        raise ConfigError(str(exc)) from exc
    if note is not None:
        notify(note)
    gate.watchers.append(sandbox.note)  # a switch into auto says when bash runs unsandboxed
    holding_key = [name for name, value in env.items() if value and value == selection.api_key]
    hidden = KEY_VARIABLES | key_variables(settings) | set(holding_key)
    spill = SpillFolder.for_session(session.path) if session is not None else SpillFolder()
    return BashPolicy(sandbox, hidden, spill, lambda: gate.mode, terminals)


def sandbox_paths(settings: Settings, home: Path) -> SandboxPaths:
    """DI_CODE_HOME and `[sandbox] hide` / `reveal`: absolute paths, or from `~`."""
    from di_code.tools.process.sandbox_mounts import SandboxPaths

    def absolute(key: str, entries: Sequence[str]) -> tuple[Path, ...]:
        paths = tuple(Path(entry).expanduser() for entry in entries)
        for entry, path in zip(entries, paths, strict=True):
            if not path.is_absolute():
                raise ConfigError(f"sandbox.{key}: {entry!r} must be absolute or start with ~")
        return paths

    hide = absolute("hide", settings.sandbox_hide)
    return SandboxPaths(home, hide, absolute("reveal", settings.sandbox_reveal))


def extra_roots(add_dirs: Sequence[str], workspace: Path) -> list[Path]:
    roots = []
    for entry in add_dirs:
        root = (workspace / Path(entry).expanduser()).resolve()
        if not root.is_dir():
            raise ConfigError(f"--add-dir: not a folder: {entry}")
        roots.append(root)
    return roots


def select_tools(
    workspace: Path,
    roots: Sequence[Path],
    names: str | None,
    bash: BashPolicy | None,
    notify: Notify,
    read_roots: Sequence[Path] = (),
    editor: EditorFiles | None = None,
    fetch_hosts: frozenset[str] = frozenset(),
    lsp: LanguageServers | None = None,
) -> list[AgentTool]:
    """The default tools and those of installed plugins, or only those `--tools a,b` names
    (an unknown name is an error). `read_roots` are folders only the read tool may read;
    `editor` is where the file tools find text instead of the disk (`di-code acp`)."""
    from di_code.tools import default_tools, with_job_tools
    from di_code.tools.extensions.plugins import load_plugin_tools

    tools = list(
        default_tools(
            workspace,
            extra_roots=tuple(roots),
            read_roots=tuple(read_roots),
            bash=bash,
            editor=editor,
            fetch_hosts=fetch_hosts,
            lsp=lsp,
        )
    )
    plugins = load_plugin_tools(taken=[tool.name for tool in tools])
    for warning in plugins.warnings:
        notify(warning)
    tools += plugins.tools
    if names is None:
        return tools
    wanted = [name.strip() for name in names.split(",") if name.strip()]
    known = {tool.name for tool in tools} | {TASK_TOOL}
    unknown = [name for name in wanted if name not in known]
    if unknown:
        raise ConfigError(f"unknown tool {unknown[0]!r} (known: {', '.join(sorted(known))})")
    return [tool for tool in tools if tool.name in with_job_tools(wanted)]


def system_prompt(
    options: CliOptions,
    tool_names: Sequence[str],
    workspace: Path,
    home: Path,
    roots: Sequence[Path],
    skills: Sequence[Skill] = (),
    environment: str = "",
) -> str:
    """--system-prompt replaces the default (the context files still follow it);
    --append-system-prompt adds to either."""
    if options.system_prompt is not None:
        text = with_context_files(prompt_text(options.system_prompt), home, workspace)
    else:
        text = build_system_prompt(
            tool_names=tool_names,
            workspace=workspace,
            home=home,
            today=date.today(),
            extra_roots=roots,
            skills=skills,
            environment=environment,
        )
    if options.append_system_prompt is not None:
        text = f"{text}\n\n{prompt_text(options.append_system_prompt)}"
    return text
