"""The permission gate: which tool calls may run without asking, which are refused.

Modes (README, Permissions): `auto` runs everything; `ask` needs approval for every tool but the
reading ones (READ_ONLY_TOOLS: bash, write, edit, fetch, MCP and plugin tools ask); `accept-edits`
runs write and edit and asks for bash; `read-only` offers the model only READ_ONLY_MODE_TOOLS.
`plan` offers what read-only offers, and the plan tool (`exit_plan_mode`): the model explores,
then presents its plan, which the user approves (the gate then switches to the build mode the
user chose), sends back to be planned further, or refuses. Rules from settings allow or deny a
tool (`"write"`), a bash command prefix (`"bash:git status"`) or a file (`"edit:src/app.py"`); a
deny rule wins over an allow rule, in every mode. Bash commands are parsed
(`di_code.tools.policy.shell_parse`): a deny rule matches any simple command anywhere in the
line, through wrappers; an allow rule covers a line only when it is plain and every command
in it is allowed (README, "Permissions", says it exactly).

Write and edit on a protected path (`protected.py`: git directories, `.di-code/`, `.mcp.json`,
`.claude/`, DI_CODE_HOME) always ask in ask and accept-edits modes; no rule or grant covers them.

An approval can grant more for the rest of the session: the command prefixes of a plain bash
line (the program, the options before its subcommand and the subcommand; only that exact line
when it runs a destructive program or an interpreter, or when no prefix can be told), one file,
or all edits. Grants are allow rules kept in the gate; /permissions lists and
revokes them.

A refusal is a tool result with is_error set, phrased for the model, so the run goes on and the
model can choose another way.
"""

from __future__ import annotations

import posixpath
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, Literal, TypeAlias

import msgspec
from msgspec import Struct

from di_code.agent.tool_call import ToolCallContext
from di_code.system.web_address import rule_host
from di_code.tools import JOB_WATCHING_TOOLS, READ_ONLY_MODE_TOOLS, READ_ONLY_TOOLS
from di_code.tools.policy.bash_forms import exact_only
from di_code.tools.policy.modes import (
    BUILD_MODES,
    PLAN_HINT,
    PLAN_TOOL,
    PLAN_UNREVIEWED,
    PermissionMode,
)
from di_code.tools.policy.rules import Place, Rule
from di_code.tools.policy.shell_parse import parse_line
from di_code.tools.policy.subcommands import leading_options

HookOpinion: TypeAlias = Literal["allow", "ask"] | None

EDIT_TOOLS = frozenset({"write", "edit"})
GRANT_KEYS = ("a", "e")


class PermissionRules(Struct, frozen=True):
    allow: tuple[Rule, ...] = ()
    deny: tuple[Rule, ...] = ()

    @classmethod
    def parse(cls, allow: Iterable[str] = (), deny: Iterable[str] = ()) -> PermissionRules:
        return cls(tuple(map(Rule.parse, allow)), tuple(map(Rule.parse, deny)))

    def fetch_hosts(self) -> frozenset[str]:
        """The hosts allow rules name for fetch, normalised: it may reach them at a private
        address."""
        named = (r.prefix for r in self.allow if r.tool == "fetch" and r.prefix)
        return frozenset(host for host in map(rule_host, named) if host is not None)

    def decide(
        self,
        tool_name: str,
        arguments: dict[str, Any],
        grants: Iterable[Rule] = (),
        place: Place = posixpath.normpath,
    ) -> Literal["allow", "deny"] | None:
        """deny if any deny rule matches; allow if the allow rules (and grants) cover the
        whole call; else None (ask). A grant's prefix never covers a command that only an
        exact grant may (`exact_only`: "always" for `find . -name x` grants `find .`, which
        must not run `find . -delete` unasked); the user's own rules do."""
        deny = [rule for rule in self.deny if rule.names(tool_name)]
        own = [rule for rule in self.allow if rule.names(tool_name)]
        allow = [*own, *(rule for rule in grants if rule.names(tool_name))]
        if tool_name != "bash":
            if any(rule.covers_path(arguments, place) for rule in deny):
                return "deny"
            return "allow" if any(rule.covers_path(arguments, place) for rule in allow) else None
        command = arguments.get("command")
        line = exact_line(command) if isinstance(command, str) else None
        parsed = parse_line(command) if isinstance(command, str) else None
        commands = parsed.commands if parsed is not None else None
        if any(
            rule.prefix is None or commands is None or any(map(rule.denies, commands))
            for rule in deny
        ):
            return "deny"
        if any(rule.prefix is None for rule in allow):
            return "allow"
        plain = parsed.plain if parsed is not None else None
        if plain and any(rule.exact and rule.prefix == line for rule in allow):
            return "allow"
        if plain and all(
            any(rule.allows_words(words) for rule in (own if exact_only(words) else allow))
            for words in plain
        ):
            return "allow"
        return None


UNREADABLE_HINT = (
    " This line holds code a deny rule cannot check (a form the parser cannot read, or one"
    " that runs code hidden in an argument: eval, source, traps, aliases, subscripts,"
    " arithmetic on variables, ${x@P}); write the commands out plainly."
)
"""Told to the model with a refusal of a line that no deny rule can read, so it can rewrite."""


def _unreadable_bash(tool_name: str, arguments: dict[str, Any]) -> bool:
    command = arguments.get("command")
    return tool_name == "bash" and isinstance(command, str) and parse_line(command).commands is None


def exact_line(command: str) -> str:
    """The line an exact grant names: the command without bash's own blanks around it.
    Python's `strip()` takes any Unicode space too, which bash reads as part of a word
    (`rm -f notes.txt\x1f` removes another file than `rm -f notes.txt`)."""
    return command.strip(" \t\n")


def command_prefix(words: Sequence[str]) -> str | None:
    """What "don't ask again" remembers: the program, the options before its subcommand and
    the subcommand (`git --no-pager log -5` → `git --no-pager log`, `git -C dir log` → `git
    -C dir log`). None when there is none or it cannot be told where it is (`ls -la`, `tool -x
    build`: `-x` may take `build` as its value), or a word would read as other words (`git
    'config x'`): then only the exact line is granted."""
    at = leading_options(words[0], words[1:]).at
    if at is None or at >= len(words):
        return None
    kept = words[: at + 1]
    if any(word.split() != [word] for word in kept):
        return None
    return " ".join(kept)


class GrantOffer(Struct, frozen=True):
    """A "yes, and don't ask again for …" choice: what it says and the rules it adds."""

    label: str
    rules: tuple[Rule, ...]


def grant_offers(tool_name: str, arguments: dict[str, Any]) -> tuple[GrantOffer, ...]:
    """The session grants an approval may add: the command prefixes of a plain bash line
    (none for a line with expansions, which no prefix rule could cover; only the exact line
    when it runs a destructive program or an interpreter, or when a command's prefix cannot
    be told: `command_prefix`), for write and edit
    this file or all edits, for any other tool (MCP, Python tools) that tool; none for
    job_input, whose text is code for a job's program (a REPL's) that no rule reads."""
    if tool_name == "job_input":
        return ()
    path = arguments.get("path")
    if tool_name in EDIT_TOOLS and isinstance(path, str):
        this_file = tuple(Rule(tool, path) for tool in sorted(EDIT_TOOLS))
        every_edit = tuple(Rule(tool) for tool in sorted(EDIT_TOOLS))
        return (GrantOffer(f"edits to {path}", this_file), GrantOffer("all edits", every_edit))
    if tool_name != "bash":
        return (GrantOffer(tool_name, (Rule(tool_name),)),)
    command = arguments.get("command")
    if not isinstance(command, str) or not (plain := parse_line(command).plain):
        return ()
    prefixes: list[str] = []
    for words in plain:
        prefix = None if exact_only(words) else command_prefix(words)
        if prefix is None:
            line = (Rule("bash", exact_line(command), exact=True),)
            return (GrantOffer("this exact command only", line),)
        prefixes.append(prefix)
    prefixes = list(dict.fromkeys(prefixes))
    return (GrantOffer(", ".join(prefixes), tuple(Rule("bash", p) for p in prefixes)),)


class ApprovalRequest(Struct, frozen=True):
    """What the user is asked about: the tool, its arguments, a one-line summary and the
    session grants a "don't ask again" answer may add."""

    tool_name: str
    arguments: dict[str, Any]
    summary: str
    offers: tuple[GrantOffer, ...] = ()
    why: str = ""
    """Why it is asked whatever the rules and grants (a protected path), else empty."""
    modes: tuple[PermissionMode, ...] = ()
    """A plan to approve: the modes it may be built in (BUILD_MODES), else empty."""

    def offer_keys(self) -> dict[str, GrantOffer]:
        """The offers by the key that picks them: [a] this prefix or file, [e] all edits."""
        return dict(zip(GRANT_KEYS, self.offers, strict=False))


class Approval(Struct, frozen=True):
    """The user's answer: run or not, the grant chosen (if any), and what to tell the model
    instead (with a refusal)."""

    allow: bool
    grant: GrantOffer | None = None
    feedback: str = ""
    mode: PermissionMode | None = None
    """The mode an approved plan is built in (one of the request's `modes`)."""


YES = Approval(True)
NO = Approval(False)

Approver = Callable[[ApprovalRequest], Awaitable[Approval]]
"""Asks the user (the REPL, a terminal prompt). None where there is nobody to ask."""


def summarize(tool_name: str, arguments: dict[str, Any]) -> str:
    """The line a user approves: the command for bash, the path for write and edit."""
    for key in ("command", "path", "url"):
        value = arguments.get(key)
        if isinstance(value, str):
            return f"{tool_name}: {value}"
    return tool_name


DECLINED_STOP = (
    "Stop here and wait for the user: do not try to reach the same result another way "
    "(another tool or command); say what you wanted to do."
)
"""Told with a declined call that came without the user's own words on what to do instead."""


class PermissionGate(Struct):
    """Decides each gated call; keeps the session's grants ("don't ask again")."""

    mode: PermissionMode
    """The one record of the mode: what runs unasked, and (bash_policy) what runs sandboxed."""
    rules: PermissionRules = msgspec.field(default_factory=PermissionRules)
    approver: Approver | None = None
    plan_reviewer: Approver | None = None
    """Who reviews a plan presented in plan mode (chat's question, the editor's): None where
    nobody can while the model waits (`run`, whose answer the plan then is)."""
    presented: str | None = None
    """The last plan put to nobody (no `plan_reviewer`): `run`'s answer. Set here, where a
    call arrives only once its arguments are valid and the user's hooks let it through."""
    grants: list[Rule] = msgspec.field(default_factory=list)
    watchers: list[Callable[[PermissionMode], str | None]] = msgspec.field(default_factory=list)
    """Asked at each switch what the user should know about the new mode (the bash policy:
    that auto runs unsandboxed); each such line is said once a session."""
    said: set[str] = msgspec.field(default_factory=set)
    protected: Callable[[str], str | None] | None = None
    """Why the file a write or edit names is protected (`protected.protected_path`): such a
    call is asked in ask and accept-edits modes, whatever the rules and grants."""
    place: Place = posixpath.normpath
    """Where a path names a file, as the file tools find it (the workspace's real path), so
    that a file rule holds for every spelling of its file."""

    def switch(self, mode: PermissionMode) -> list[str]:
        """Change the mode (Shift+Tab, /permissions); the lines to tell the user."""
        self.mode = mode
        notes = [note for watch in self.watchers if (note := watch(mode)) is not None]
        fresh = [note for note in dict.fromkeys(notes) if note not in self.said]
        self.said.update(fresh)
        return fresh

    async def before_tool_call(self, context: ToolCallContext) -> str | None:
        """The agent loop's hook: every call is checked here once its arguments are valid."""
        return await self.check(context.call.name, context.params)

    async def check(
        self, tool_name: str, arguments: dict[str, Any], hook: HookOpinion = None
    ) -> str | None:
        """None if the call may run, else the reason it may not (for the model). `hook` is
        what the user's PreToolUse hooks said: "allow" skips the question, "ask" asks even
        where nothing would; deny rules and read-only mode refuse either way, and a protected
        path is asked about in ask and accept-edits modes whatever a hook or grant says."""
        decision = self.rules.decide(tool_name, arguments, self.grants, self.place)
        if decision == "deny":
            return f"Permission denied: a deny rule in the settings blocks {tool_name} here." + (
                UNREADABLE_HINT if _unreadable_bash(tool_name, arguments) else ""
            )
        if tool_name == PLAN_TOOL:
            return await self._review_plan(arguments)
        if self.mode in ("read-only", "plan") and tool_name not in READ_ONLY_MODE_TOOLS:
            return f"Permission denied: {tool_name} is not available in {self.mode} mode." + (
                PLAN_HINT if self.mode == "plan" else ""
            )
        unasked_tool = tool_name in READ_ONLY_TOOLS or tool_name in JOB_WATCHING_TOOLS
        if hook != "ask" and (self.mode == "auto" or unasked_tool):
            return None
        guarded = self._protection(tool_name, arguments)
        unasked = hook == "allow" or decision == "allow"
        if (
            guarded is None
            and hook != "ask"
            and (unasked or (self.mode == "accept-edits" and tool_name in EDIT_TOOLS))
        ):
            return None
        if self.approver is None:
            why = "" if guarded is None else f" ({guarded})"
            return (
                f"Permission denied: {tool_name} needs the user's approval{why} and there is "
                "no terminal to ask (the user can run di-code with --yes to allow it)."
            )
        summary = summarize(tool_name, arguments)
        request = (
            ApprovalRequest(tool_name, arguments, summary, grant_offers(tool_name, arguments))
            if guarded is None
            else ApprovalRequest(tool_name, arguments, f"{summary} ({guarded})", why=guarded)
        )
        answer = await self.approver(request)
        if answer.allow:
            if answer.grant is not None:
                self.grant(answer.grant.rules)
            return None
        refusal = f"Permission denied: the user declined this {tool_name} call."
        if answer.feedback.strip():
            return f"{refusal} The user says what to do instead: {answer.feedback.strip()}"
        return f"{refusal} {DECLINED_STOP}"

    async def _review_plan(self, arguments: dict[str, Any]) -> str | None:
        """The plan tool: None once the user approved (the gate is then in the build mode
        chosen), else what the model reads instead. Asked whatever the rules and hooks say:
        it is a question about the work, not a permission."""
        if self.mode != "plan":
            return f"Not in plan mode (the mode is {self.mode}): go on with the work itself."
        if self.plan_reviewer is None:
            self.presented = str(arguments.get("plan", ""))
            return PLAN_UNREVIEWED
        summary = f"{PLAN_TOOL}: the plan"
        request = ApprovalRequest(PLAN_TOOL, arguments, summary, modes=BUILD_MODES)
        answer = await self.plan_reviewer(request)
        if answer.allow and answer.mode in BUILD_MODES:
            self.switch(answer.mode)  # neither build mode runs bash unapproved: nothing to say
            return None
        if answer.feedback.strip():
            return (
                f"The user wants the plan changed before anything is built: "
                f"{answer.feedback.strip()} Stay in plan mode, explore as needed, then present "
                f"the new plan with {PLAN_TOOL}."
            )
        return f"The user did not approve the plan. {DECLINED_STOP}"

    def _protection(self, tool_name: str, arguments: dict[str, Any]) -> str | None:
        path = arguments.get("path")
        if self.protected is None or tool_name not in EDIT_TOOLS or not isinstance(path, str):
            return None
        return self.protected(path)

    def grant(self, rules: Iterable[Rule]) -> None:
        self.grants.extend(rule for rule in rules if rule not in self.grants)

    def revoke(self, which: str) -> list[Rule]:
        """Revoke grant number `which` (1-based, as /permissions lists them) or `all`."""
        if which == "all":
            revoked, self.grants[:] = list(self.grants), []
            return revoked
        if not which.isdigit() or not 1 <= int(which) <= len(self.grants):
            raise ValueError(f"no grant {which!r}: /permissions lists them, numbered")
        return [self.grants.pop(int(which) - 1)]
