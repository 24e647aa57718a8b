"""Language servers for a command: which exist (the settings' `[lsp.NAME]` and the presets
on PATH), and `di-code lsp`. A server is a program, so an untrusted project's `[lsp]` never
reaches here: di_code.config.trust leaves the key out until the project is trusted."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from di_code.config.settings import Settings, di_code_home
from di_code.config.settings import load_settings as load_settings_files
from di_code.setup.prepared import Notify

if TYPE_CHECKING:
    from di_code.tools.lsp.manager import LanguageServers
    from di_code.tools.policy.permissions import PermissionGate
    from di_code.tools.process.sandbox_mounts import SandboxPaths


OFF_VARIABLE = "DI_CODE_LSP"
"""`DI_CODE_LSP=off` starts no language server (write and edit then wait for none)."""


def language_servers(
    settings: Settings,
    workspace: Path,
    notify: Notify,
    env: Mapping[str, str] = os.environ,
    hidden: frozenset[str] = frozenset(),
    paths: SandboxPaths | None = None,
    mode: str = "ask",
) -> LanguageServers:
    """The servers that may start (none with DI_CODE_LSP=off, nor in read-only mode, which
    offers the model only read, grep, find, ls and todo); `hidden` are the variables kept
    from their environment besides the known key variables (bash's set), `paths` what the
    sandbox hides (DI_CODE_HOME, `[sandbox] hide`)."""
    from di_code.config.trust import project_trusted
    from di_code.tools.lsp.manager import LanguageServers
    from di_code.tools.lsp.servers import Catalog, catalog
    from di_code.tools.lsp.spawn import ServerStarter
    from di_code.tools.process.program_env import KEY_VARIABLES
    from di_code.tools.process.sandbox_mounts import SandboxPaths

    off = env.get(OFF_VARIABLE, "").lower() in ("off", "0", "false", "no")
    if off or mode == "read-only":
        return LanguageServers(Catalog((), ()), workspace)
    found = catalog(settings.lsp)
    for warning in found.warnings:
        notify(warning)
    home = di_code_home(env)
    starter = ServerStarter(
        KEY_VARIABLES | hidden,
        paths or SandboxPaths(home),
        home / CACHE,
        trusted=project_trusted(home, workspace),
    )
    return LanguageServers(found, workspace, starter=starter)


WITHOUT_SERVERS = frozenset({"plan", "read-only"})
"""The modes that run only the reading tools, so no language server: read-only starts none
(`language_servers`), plan mode none until it is left for a mode that edits."""


def warm_when_allowed(servers: LanguageServers, gate: PermissionGate) -> None:
    """A chat's (an editor's) servers start in the background as the session opens, so the
    first edit finds them ready; in plan mode, which runs only the reading tools, once the
    mode switches to one that edits (an approved plan; an editor's switch to read-only, which
    starts none, is not one)."""

    def warm(mode: str) -> None:
        if mode not in WITHOUT_SERVERS:
            servers.warm()

    warm(gate.mode)
    gate.watchers.append(warm)  # says nothing: starting servers is no news for the user


CACHE = "lsp-cache"
"""The servers' own caches, one folder each, in DI_CODE_HOME: their `~/.cache` in the sandbox."""


def lsp_status_lines(workspace: Path | None = None) -> list[str]:
    """`di-code lsp`: the servers di-code would start here, and the missing presets."""
    from di_code.tools.lsp.manager import status_lines

    home, workspace = di_code_home(), (workspace or Path.cwd()).resolve()
    settings = load_settings_files(home, workspace)
    return status_lines(language_servers(settings, workspace, lambda line: None))
