"""Settings files: `$DI_CODE_HOME/config.toml` and the project's `.di-code/config.toml`.

The project file (found and trusted as di_code.config.project and .trust say) wins for single
values, except limits, which a project can only lower (a cloned repository must not lift the
user's turn limit); permission rules from both files add up (a deny rule wins over an allow
rule anyway); provider tables merge key by key, the project's keys winning.
A bad file is a configuration error with a one-line message naming the file, never a crash.
Layout (README.md shows a full example):

    model = "openai/gpt-4.1"          # default model, PROVIDER/ID
    thinking = "off|low|medium|high"
    [permissions] mode = "ask|auto|read-only", allow = [...], deny = [...]
    [limits] max_turns = 50
    [providers.NAME] api, base_url, api_key_env, models = [...], default_model
    [providers.NAME.models.ID] context_window = N, max_output_tokens = N   (instead of the list)
    [discovery] urls = ["ollama=http://127.0.0.1:11434/v1", ...]
    [sandbox] mode = "off|workspace-write|read-only", network = true|false,
              hide = ["~/.secret", ...], reveal = ["~/.npmrc", ...]
    [mcp_servers.NAME] command, args, env, cwd | url, headers; enabled, timeout
    [[hooks.PreToolUse]] matcher = "bash", hooks = [{type = "command", command = "..."}]
    [subagents] model = "PROVIDER/ID"   # the task tool's subagents (default: the session's)
    notify = "auto|bell|off" or a command   # how chat says it needs you (di_code.ui.attention)
    [lsp.NAME] command, extensions, globs, root_markers, initialization_options, ...
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
from msgspec.structs import replace

from di_code.config.models import PRESETS
from di_code.config.project import ProjectFile, find_project_config, unsafe_reason
from di_code.config.toml_file import ConfigError as ConfigError  # where callers look for it
from di_code.config.toml_file import decode_toml, read_bytes, read_toml
from di_code.config.trust import TrustStore, digest, split_untrusted

if TYPE_CHECKING:
    from di_code.ai.types import ReasoningLevel

REASONING_LEVELS: tuple[ReasoningLevel, ...] = ("off", "low", "medium", "high")
PERMISSION_MODES = ("ask", "accept-edits", "auto", "read-only", "plan")
SANDBOX_MODES = ("off", "workspace-write", "read-only")
DISCOVERY_ENV = "DI_CODE_DISCOVERY"
"""Local servers to look for (`NAME=URL` or `URL`, comma-separated): di_code.config.discovery."""


class ModelLimits(msgspec.Struct, frozen=True):
    """A `[providers.NAME.models.ID]` table: limits the user knows better than di-code."""

    context_window: int | None = None
    max_output_tokens: int | None = None


class ProviderSettings(msgspec.Struct, frozen=True):
    """A `[providers.NAME]` table: a custom provider, or overrides for a preset."""

    name: str
    api: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    models: tuple[str, ...] = ()
    default_model: str | None = None
    limits: Mapping[str, ModelLimits] = msgspec.field(default_factory=dict)
    """Model id → its configured limits (when `models` is written as tables)."""


class Settings(msgspec.Struct, frozen=True):
    model: str | None = None
    thinking: ReasoningLevel | None = None
    permission_mode: str | None = None
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    max_turns: int | None = None
    providers: Mapping[str, ProviderSettings] = msgspec.field(default_factory=dict)
    discovery: tuple[str, ...] | None = None
    warnings: tuple[str, ...] = ()
    """Settings that were ignored, one line each, to show the user."""
    sandbox_mode: str | None = None
    sandbox_network: bool | None = None
    sandbox_hide: tuple[str, ...] = ()
    sandbox_reveal: tuple[str, ...] = ()
    """Paths a sandboxed command sees empty besides the defaults, and defaults it sees."""
    mcp_servers: Mapping[str, Any] = msgspec.field(default_factory=dict)
    """`[mcp_servers.NAME]` tables as written (di_code.tools.extensions.mcp_config reads them)."""
    hooks: tuple[tuple[str, Any], ...] = ()
    """(file, its `hooks` table as written), the user's then a trusted project's
    (di_code.tools.policy.hook_config reads them)."""
    claude_hooks: tuple[tuple[str, Any], ...] = ()
    """(file, its `hooks` object) of a trusted project's `.claude/settings.json`."""
    lsp: Mapping[str, Any] = msgspec.field(default_factory=dict)
    """`[lsp.NAME]` tables as written (di_code.tools.lsp.servers reads them)."""
    subagent_model: str | None = None
    """`[subagents] model`: the model the task tool's subagents use (None: the session's)."""
    notify: str | None = None
    """How chat tells the user it needs them while its terminal is not focused: "auto",
    "bell", "off", or a command of the user's (None: auto)."""


def di_code_home(env: Mapping[str, str] | None = None) -> Path:
    """`$DI_CODE_HOME` (of `env`, default this process's), else `~/.di-code`, `~` being the
    `HOME` of `env` (another process's home: a batch task's own)."""
    env = os.environ if env is None else env
    configured, home = env.get("DI_CODE_HOME"), env.get("HOME")
    if configured:
        return Path(configured).expanduser()
    return (Path(home) if home else Path.home()) / ".di-code"


def load_settings(home: Path, workspace: Path, env: Mapping[str, str] | None = None) -> Settings:
    """The user's own file, then the project's as far as it is safe and trusted; either may
    be missing. What was ignored, and why, is in `warnings`. `env` (default: this process's)
    says which providers the user has keys or URLs for."""
    settings = load_user_settings(home)
    project = find_project_config(workspace, home)
    if project is not None:
        usable = user_providers(settings, os.environ if env is None else env)
        settings = merge(settings, _project_settings(home, project, usable))
    from di_code.config.claude_settings import claude_hooks

    hooks, warnings = claude_hooks(home, workspace)
    return replace(settings, claude_hooks=hooks, warnings=settings.warnings + warnings)


def load_user_settings(home: Path) -> Settings:
    """`$DI_CODE_HOME/config.toml` alone (empty when there is none)."""
    user_file = home / "config.toml"
    if not os.path.lexists(user_file):  # a folder or a FIFO there is said, not skipped
        return Settings()
    return parse_settings(read_toml(user_file), str(user_file))


def user_providers(user: Settings, env: Mapping[str, str]) -> frozenset[str]:
    """The providers the user has set up: their own `[providers.NAME]` tables and `model`, a
    preset whose key variable or `<NAME>_BASE_URL` is set, a local preset that `[discovery]
    urls` or `DI_CODE_DISCOVERY` names at the preset's own URL (`NAME/ID` goes there; listed at
    another URL, the preset's own port is not one the user chose). What a project names may
    pick only these: any other would send the prompt somewhere the user never chose."""
    names = set(user.providers)
    if user.model and "/" in user.model:
        names.add(user.model.split("/", 1)[0])
    for name, preset in PRESETS.items():
        if env.get(preset.api_key_env or "") or env.get(f"{name.upper()}_BASE_URL"):
            names.add(name)
    listed = [*(user.discovery or ()), *env.get(DISCOVERY_ENV, "").split(",")]
    for entry in listed:
        name, _, url = (part.strip() for part in entry.partition("="))
        known = PRESETS.get(name)
        if known is not None and _same_place(url, known.base_url):
            names.add(name)
    return frozenset(names)


LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def _same_place(url: str, other: str) -> bool:
    """Whether two base URLs reach the same server and path, their hosts normalised by the one
    place (di_code.system.web_address: `LOCALHOST.` is `localhost`, `127.1` is `127.0.0.1`), and
    `localhost` and the loopback addresses one place."""
    from urllib.parse import urlsplit

    from di_code.system.web_address import BadAddress, web_address

    def place(text: str) -> tuple[str, str, int, str]:
        address = web_address(text.strip())
        host = "localhost" if address.host in LOOPBACK_NAMES else address.host
        return address.scheme, host, address.port, urlsplit(address.url).path.rstrip("/")

    try:
        return place(url) == place(other)
    except BadAddress:
        return False


def _project_settings(home: Path, project: ProjectFile, usable: frozenset[str]) -> Settings:
    """A project file another user could have written is skipped; one the user has not
    trusted (as it is now) keeps only the keys any project may set, and a `model` only on a
    provider the user has set up (`usable`)."""
    reason = unsafe_reason(project)
    if reason is not None:
        return Settings(warnings=(f"ignored {project.path}: {reason}",))
    data = read_bytes(project.path)
    document = decode_toml(data, project.path)
    source = str(project.path)
    trusted = parse_settings(document, source)  # a broken file is an error either way
    if TrustStore(home).trusts(project.folder.resolve(), digest(data)):
        return trusted
    kept, dropped = split_untrusted(document, usable)
    if not dropped:
        return trusted
    warning = (
        f"{source}: ignored until you trust this project (di-code trust): {', '.join(dropped)}"
    )
    return replace(parse_settings(kept, source), warnings=(warning,))


def merge(base: Settings, top: Settings) -> Settings:
    """`top` (the project) wins for single values but may only lower limits; rules add up;
    providers merge per key."""
    providers = dict(base.providers)
    for name, provider in top.providers.items():
        providers[name] = _merge_provider(providers.get(name), provider)
    return replace(
        base,
        model=top.model or base.model,
        thinking=top.thinking or base.thinking,
        permission_mode=top.permission_mode or base.permission_mode,
        allow=base.allow + top.allow,
        deny=base.deny + top.deny,
        max_turns=_lower(base.max_turns, top.max_turns),
        providers=providers,
        discovery=top.discovery if top.discovery is not None else base.discovery,
        warnings=base.warnings + top.warnings,
        sandbox_mode=top.sandbox_mode or base.sandbox_mode,
        sandbox_hide=base.sandbox_hide + top.sandbox_hide,
        sandbox_reveal=base.sandbox_reveal + top.sandbox_reveal,
        mcp_servers={**base.mcp_servers, **top.mcp_servers},
        lsp={**base.lsp, **top.lsp},
        hooks=base.hooks + top.hooks,
        subagent_model=top.subagent_model or base.subagent_model,
        notify=top.notify or base.notify,
        sandbox_network=(
            top.sandbox_network if top.sandbox_network is not None else base.sandbox_network
        ),
    )


def _lower(limit: int | None, project: int | None) -> int | None:
    """The project's limit only where it is tighter than the user's (or the user set none)."""
    if limit is None or project is None:
        return project if limit is None else limit
    return min(limit, project)


def _merge_provider(base: ProviderSettings | None, top: ProviderSettings) -> ProviderSettings:
    if base is None:
        return top
    return ProviderSettings(
        name=top.name,
        api=top.api or base.api,
        base_url=top.base_url or base.base_url,
        api_key_env=top.api_key_env or base.api_key_env,
        models=top.models or base.models,
        default_model=top.default_model or base.default_model,
        limits={**base.limits, **top.limits},
    )


def parse_settings(data: Mapping[str, Any], source: str) -> Settings:
    """Check a parsed TOML document's shape; a wrong key or type names the file and key."""
    reader = _Reader(source)
    tables = {"permissions", "limits", "providers", "discovery", "sandbox", "mcp_servers", "hooks"}
    tables |= {"subagents", "lsp"}
    reader.keys(data, "", {"model", "thinking", "notify", *tables})
    permissions = reader.table(data, "permissions", {"mode", "allow", "deny"})
    limits = reader.table(data, "limits", {"max_turns"})
    subagents = reader.table(data, "subagents", {"model"})
    discovery = reader.table(data, "discovery", {"urls"})
    sandbox = reader.table(data, "sandbox", {"mode", "network", "hide", "reveal"})
    network = sandbox.get("network")
    if network is not None and not isinstance(network, bool):
        raise reader.fail("sandbox.network", "true or false")
    thinking = reader.choice(data, "thinking", REASONING_LEVELS)
    max_turns = reader.typed(limits, "limits.max_turns", int)
    if max_turns is not None and max_turns < 1:
        raise ConfigError(f"{source}: limits.max_turns must be at least 1")
    providers = reader.table(data, "providers", None)
    notify = reader.typed(data, "notify", str)
    if notify is not None and not notify.strip():
        raise reader.fail("notify", '"auto", "bell", "off" or a command')
    return Settings(
        notify=notify,
        model=reader.typed(data, "model", str),
        thinking=thinking,  # type: ignore[arg-type]
        permission_mode=reader.choice(permissions, "permissions.mode", PERMISSION_MODES),
        allow=reader.strings(permissions, "permissions.allow") or (),
        deny=reader.strings(permissions, "permissions.deny") or (),
        max_turns=max_turns,
        providers={name: reader.provider(providers, name) for name in providers},
        discovery=reader.strings(discovery, "discovery.urls"),
        sandbox_mode=reader.choice(sandbox, "sandbox.mode", SANDBOX_MODES),
        sandbox_network=network,
        sandbox_hide=reader.strings(sandbox, "sandbox.hide") or (),
        sandbox_reveal=reader.strings(sandbox, "sandbox.reveal") or (),
        mcp_servers=reader.table(data, "mcp_servers", None),
        lsp=reader.table(data, "lsp", None),
        hooks=((source, data["hooks"]),) if "hooks" in data else (),
        subagent_model=reader.typed(subagents, "subagents.model", str),
    )


class _Reader(msgspec.Struct, frozen=True):
    source: str

    def fail(self, key: str, expected: str) -> ConfigError:
        return ConfigError(f"{self.source}: {key} must be {expected}")

    def keys(self, table: Mapping[str, Any], prefix: str, allowed: set[str]) -> None:
        for key in table:
            if key not in allowed:
                raise ConfigError(f"{self.source}: unknown setting {prefix}{key}")

    def table(
        self, data: Mapping[str, Any], key: str, allowed: set[str] | None
    ) -> Mapping[str, Any]:
        value = data.get(key, {})
        if not isinstance(value, dict):
            raise self.fail(key, "a table")
        if allowed is not None:
            self.keys(value, f"{key}.", allowed)
        return value

    def typed(self, table: Mapping[str, Any], key: str, kind: type) -> Any:
        value = table.get(key.rsplit(".", 1)[-1])
        if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
            raise self.fail(key, f"a {'string' if kind is str else 'number'}")
        return value

    def choice(self, table: Mapping[str, Any], key: str, allowed: tuple[str, ...]) -> str | None:
        value = self.typed(table, key, str)
        if value is not None and value not in allowed:
            raise self.fail(key, "one of " + ", ".join(allowed))
        return value  # type: ignore[no-any-return]

    def strings(self, table: Mapping[str, Any], key: str) -> tuple[str, ...] | None:
        value = table.get(key.rsplit(".", 1)[-1])
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise self.fail(key, "a list of strings")
        return tuple(value)

    def provider(self, providers: Mapping[str, Any], name: str) -> ProviderSettings:
        key = f"providers.{name}"
        table = self.table(providers, name, None)
        fields = {"api", "base_url", "api_key_env", "models", "default_model"}
        self.keys(table, f"{key}.", fields)
        models = table.get("models")
        limits = self.model_limits(models, f"{key}.models") if isinstance(models, dict) else {}
        return ProviderSettings(
            name=name,
            api=self.typed(table, f"{key}.api", str),
            base_url=self.typed(table, f"{key}.base_url", str),
            api_key_env=self.typed(table, f"{key}.api_key_env", str),
            models=tuple(limits) or self.strings(table, f"{key}.models") or (),
            default_model=self.typed(table, f"{key}.default_model", str),
            limits=limits,
        )

    def model_limits(self, models: Mapping[str, Any], key: str) -> dict[str, ModelLimits]:
        """`[providers.NAME.models.ID]` tables: positive whole numbers of tokens."""
        found = {}
        for model_id in models:
            table = self.table(models, model_id, {"context_window", "max_output_tokens"})
            values = {}
            for name in ("context_window", "max_output_tokens"):
                value = self.typed(table, f"{key}.{model_id}.{name}", int)
                if value is not None and value < 1:
                    raise self.fail(f"{key}.{model_id}.{name}", "a positive number")
                values[name] = value
            found[model_id] = ModelLimits(**values)
        return found
