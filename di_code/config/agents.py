"""Custom subagents: Markdown files whose front matter names a subagent the `task` tool can start.

Files `*.md` are read from the project's `.di-code/agents/` and `.claude/agents/` (in every
folder from the workspace up to the repository root), then `$DI_CODE_HOME/agents/` and
`~/.claude/agents/`; the first file for a name wins. Claude Code's format:

    ---
    name: code-reviewer
    description: Reviews a change for bugs; use after editing code.
    tools: Read, Grep, Glob        # optional; Claude Code's names are understood
    disallowedTools: Bash          # optional: taken away from what `tools` gives
    model: inherit                 # optional: PROVIDER/ID; inherit, sonnet, opus, haiku:
                                   # the subagents' default model
    ---
    You are a careful reviewer...  (the subagent's instructions)

A subagent file is only a prompt, so an untrusted project's are used too (like commands): its
`tools` can only narrow the tools the session already has (`disallowedTools` only takes some
away), every call still passes the session's permission rules and hooks, and its `model`
counts only on a provider the user set up (di_code.config.provider_factory).
"""

from __future__ import annotations

import re
from pathlib import Path

import msgspec
from msgspec.structs import replace

from di_code.config.front_matter import (
    NAME_CAP,
    Document,
    first_line,
    markdown_files,
    project_of,
    read_or_warn,
    search_folders,
    short_description,
    shown,
)

AGENT_FOLDERS = (Path(".di-code") / "agents", Path(".claude") / "agents")
NAME = re.compile(rf"[A-Za-z0-9][A-Za-z0-9_.-]{{0,{NAME_CAP - 1}}}")
FILE_CAP = 256 * 1024
CLAUDE_TOOL_NAMES = {
    "glob": "find",
    "multiedit": "edit",
    "webfetch": "fetch",
    "todowrite": "todo",
}
"""Claude Code's tool names that differ from di-code's (the others only differ in case)."""
CLAUDE_MODEL_ALIASES = frozenset({"inherit", "sonnet", "opus", "haiku"})
"""Claude Code's model names, which name no model of a di-code provider: the default is used."""


class AgentFile(msgspec.Struct, frozen=True):
    name: str
    description: str
    tools: tuple[str, ...] | None
    """di-code tool names; None: the session's tools."""
    denied: tuple[str, ...]
    """Claude Code's `disallowedTools`: taken away from what `tools` gives."""
    model: str | None
    """`PROVIDER/ID` (or an ID); None: the subagents' default model."""
    prompt: str
    path: Path
    from_project: bool = False
    """Found in the project's folders (read untrusted) rather than the user's own."""

    @property
    def model_named_by(self) -> str | None:
        """The file, when a project's file names the model: the provider factory holds such a
        `model` to the providers the user set up."""
        return shown(self.path) if self.from_project and self.model else None


class AgentSet(msgspec.Struct, frozen=True):
    agents: dict[str, AgentFile]
    warnings: tuple[str, ...] = ()
    """Files that were skipped, and why, one line each."""


def load_agents(home: Path, workspace: Path) -> AgentSet:
    """Every subagent file, nearest first."""
    agents: dict[str, AgentFile] = {}
    warnings: list[str] = []
    users = user_folders(home)
    project = project_of(workspace)
    for path in markdown_files(agent_folders(home, workspace)):
        agent = read_or_warn(path, FILE_CAP, _agent, warnings, project)
        if agent is None:
            continue
        agent = replace(agent, from_project=path.parent not in users)
        if not NAME.fullmatch(agent.name):
            name = short_description(agent.name)
            warnings.append(f"{shown(path)}: skipped: {name!r} is not a usable subagent name")
        elif agent.name in agents:  # said, as for skills: a repository's file may shadow yours
            warnings.append(f"{shown(path)}: skipped: subagent {agent.name} is already defined")
        else:
            agents[agent.name] = agent
    return AgentSet(agents, tuple(warnings))


def agent_folders(home: Path, workspace: Path) -> list[Path]:
    """Where subagent files are looked for, nearest first."""
    return search_folders(workspace, AGENT_FOLDERS, user_folders(home))


def user_folders(home: Path) -> list[Path]:
    """The user's own subagent folders (`$DI_CODE_HOME/agents`, `~/.claude/agents`)."""
    return [home / "agents", Path.home() / ".claude" / "agents"]


def _agent(path: Path, document: Document) -> AgentFile:
    fields = document.fields
    body = document.body.strip("\n")
    description = short_description(fields.get("description", "")) or short_description(
        first_line(body)
    )
    model = fields.get("model", "").strip()
    return AgentFile(
        name=fields.get("name", "").strip() or path.stem,
        description=description,
        tools=tool_names(fields["tools"]) if "tools" in fields else None,
        denied=tool_names(fields.get("disallowedTools", "")),
        model=None if model.lower() in CLAUDE_MODEL_ALIASES or not model else model,
        prompt=body,
        path=path,
    )


def tool_names(raw: str) -> tuple[str, ...]:
    """`Read, Grep, Glob`, `[read, grep]` or a `- Read` list as di-code's tool names."""
    words = re.split(r"[,\n]", raw.strip().strip("[]"))
    names = (word.strip().lstrip("-").strip().strip("'\"") for word in words)
    return tuple(dict.fromkeys(CLAUDE_TOOL_NAMES.get(n.lower(), n.lower()) for n in names if n))
