"""The coding tools: read, write, edit, bash and its job tools, grep, find, ls, fetch, todo, and
lsp where a language server is found; the plan tool (`plan_tool`) and `task` (made with the
subagents, di_code.setup.subagents) are made apart.

`default_tools(workspace)` makes fresh instances bound to a workspace; nothing is created at
import time, and each tool's module is imported only when the model first calls it (`LazyTool`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from di_code.agent.tool import AgentTool
    from di_code.tools.builtin.support.bash_policy import BashPolicy
    from di_code.tools.builtin.support.editor_files import EditorFiles
    from di_code.tools.lsp.manager import LanguageServers

READ_ONLY_TOOLS = frozenset({"read", "grep", "find", "ls", "todo", "task", "lsp"})
"""Tools that change nothing: they run unasked (a task's subagent is asked about each of its
own calls like the session is)."""
JOB_WATCHING_TOOLS = frozenset({"job_output", "job_list", "job_kill"})
"""Tools that read or stop the session's own background jobs: they run unasked (starting a job
was asked about as bash is), but are not offered in read-only mode, where none can start.
job_input is asked about: what it types, a REPL runs."""
JOB_TOOLS = JOB_WATCHING_TOOLS | {"job_input"}
READ_ONLY_MODE_TOOLS = READ_ONLY_TOOLS - {"lsp"}
"""What read-only mode offers and lets run: not lsp, which starts language servers (programs
that read the project and may run what it names)."""


def with_job_tools(names: Sequence[str]) -> set[str]:
    """`names` (`--tools`), and the job tools when bash is among them: its jobs need them."""
    return set(names) | JOB_TOOLS if "bash" in names else set(names)


def default_tools(
    workspace: Path,
    extra_roots: Sequence[Path] = (),
    read_roots: Sequence[Path] = (),
    bash: BashPolicy | None = None,
    editor: EditorFiles | None = None,
    fetch_hosts: frozenset[str] = frozenset(),
    lsp: LanguageServers | None = None,
) -> list[AgentTool]:
    """read, write, edit, bash (and the job tools for its background jobs), grep, find, ls,
    confined to `workspace` and `extra_roots`, and fetch and todo;
    read may also read in `read_roots` (the folders of skills kept outside the workspace) and
    the full-output files bash wrote;
    `bash` says how commands run (sandbox, hidden variables, spill folder); `editor`, when
    given, is where read, write and edit find text (an editor's buffers, over ACP);
    `fetch_hosts` are the hosts fetch may reach at a private or local address; with `lsp`,
    write and edit report the language servers' new diagnostics and the lsp tool is offered."""
    from di_code.tools.builtin import cards, job_cards
    from di_code.tools.builtin.support.bash_policy import BashPolicy
    from di_code.tools.builtin.support.lazy import LazyTool
    from di_code.tools.common.workspace import Workspace

    space = Workspace.create(workspace, extra_roots)
    policy = bash or BashPolicy()
    readable = Workspace.create(workspace, (*extra_roots, *read_roots), policy.spill.written)
    tools: list[AgentTool] = [
        LazyTool(cards.READ, "di_code.tools.builtin.read", "ReadTool", readable, editor),
        LazyTool(cards.WRITE, "di_code.tools.builtin.write", "WriteTool", space, editor),
        LazyTool(cards.EDIT, "di_code.tools.builtin.edit", "EditTool", space, editor),
        LazyTool(
            cards.BASH,
            "di_code.tools.builtin.bash",
            "BashTool",
            space,
            policy,
            describe=policy.tool_description,
        ),
        LazyTool(cards.GREP, "di_code.tools.builtin.grep", "GrepTool", space),
        LazyTool(cards.FIND, "di_code.tools.builtin.find", "FindTool", space),
        LazyTool(cards.LS, "di_code.tools.builtin.ls", "LsTool", space),
        LazyTool(cards.FETCH, "di_code.tools.builtin.fetch", "FetchTool", fetch_hosts),
        LazyTool(cards.TODO, "di_code.tools.builtin.todo", "TodoTool"),
        *(
            LazyTool(card, "di_code.tools.builtin.job_tools", make, policy.jobs)
            for card, make in (
                (job_cards.JOB_OUTPUT, "JobOutputTool"),
                (job_cards.JOB_INPUT, "JobInputTool"),
                (job_cards.JOB_KILL, "JobKillTool"),
                (job_cards.JOB_LIST, "JobListTool"),
            )
        ),
    ]
    if lsp is not None and lsp.catalog.servers:  # the servers' client loads on the first call
        from di_code.tools.lsp.card import LSP_CARD
        from di_code.tools.lsp.diagnosed import Diagnosed

        changes = ("write", "edit")
        tools = [Diagnosed(t, space, lsp, editor) if t.name in changes else t for t in tools]
        tools.append(LazyTool(LSP_CARD, "di_code.tools.lsp.tool", "LspTool", space, lsp, editor))
    return tools


def plan_tool(mode: Callable[[], str]) -> AgentTool:
    """The plan tool (`exit_plan_mode`), in every session since plan mode may be reached
    later; offered only in plan mode (policy.modes), where the gate puts the plan to the user
    first. `mode` is the gate's mode now: the build mode chosen, once it runs."""
    from di_code.tools.builtin import cards
    from di_code.tools.builtin.support.lazy import LazyTool

    return LazyTool(cards.PLAN, "di_code.tools.builtin.plan", "PlanTool", mode)
