"""The permission gate: modes, rules (deny wins), approvals, grants and refusals the model can
read."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

from di_code.agent.tool import FunctionTool, ToolResult
from di_code.ai.types import TextContent
from di_code.system.abort import AbortController
from di_code.tools import READ_ONLY_MODE_TOOLS, READ_ONLY_TOOLS
from di_code.tools.policy.modes import PLAN_HINT
from di_code.tools.policy.permissions import (
    NO,
    YES,
    Approval,
    ApprovalRequest,
    PermissionGate,
    PermissionMode,
    PermissionRules,
    Rule,
)
from di_code.tools.process.sandbox import SandboxChoice
from tests.support.gated import gate_tools


def make_tool(name: str, runs: list[str]) -> FunctionTool:
    async def run(_id: str, params: dict[str, Any], _signal: object) -> list[TextContent]:
        runs.append(name)
        return [TextContent(f"{name} ran")]

    return FunctionTool(name, f"the {name} tool", {"type": "object"}, run)


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("git status", "allow"),
        ("git status --short", "allow"),
        ("git statusx", None),
        ("git status && ls -la", "allow"),
        ("git status && rm -rf /tmp/x", "deny"),
        ("git status; curl evil", None),
        ("git status $(curl evil)", None),
        ("git status > out.txt", None),
        ("git status > /dev/null 2>&1", "allow"),
        ("git status | ls", "allow"),
        ("X=1 git status", None),
        ("./git status", None),
        ("(git status)", None),
        ("git status )", "deny"),  # unreadable: matches every deny rule
        ("rm -rf /", "deny"),
    ],
)
def test_bash_prefix_rules(command: str, expected: str | None) -> None:
    rules = PermissionRules.parse(allow=["bash:git status", "bash:ls"], deny=["bash:rm"])
    assert rules.decide("bash", {"command": command}) == expected


# Each word here expands: a prefix rule for echo must not cover the line.
EXPANSIONS = [
    "echo $HOME",
    "echo ${x}",
    "echo $((1+2))",
    "echo $(date)",
    "echo `date`",
    "cat <(date)",
    "echo $'\\x41'",
    'echo "$HOME"',
    "echo !!",
    "echo *",
    "echo ~",
    "echo a{b,c}",
    "eval echo hi",
    "source x",
    ". x",
    "sh -c 'echo hi'",
    "bash -c 'echo hi'",
    "echo hi > out",
    "echo hi >> /dev/null.bak",
    "echo hi <<< x",
    "cat <<EOF\nhi\nEOF",
    "echo ${x:=$'\\x24(touch P)'}${x@P}",
]


@pytest.mark.parametrize("command", EXPANSIONS)
def test_an_allow_rule_never_covers_an_expansion(command: str) -> None:
    rules = PermissionRules.parse(allow=["bash:echo", "bash:cat", "bash:eval", "bash:sh"])
    assert rules.decide("bash", {"command": command}) is None


def test_literal_words_are_read_as_bash_reads_them() -> None:
    rules = PermissionRules.parse(allow=["bash:echo a b"])
    for command in ("echo a b", "echo 'a' \"b\"", "echo \\a b", 'e"ch"o a b', "echo a b c"):
        assert rules.decide("bash", {"command": command}) == "allow", command
    assert rules.decide("bash", {"command": "echo 'a b'"}) is None


DENY_EVASIONS = [
    "rm x",
    "/bin/rm x",
    "\\rm x",
    "'rm' x",
    "(rm x)",
    "{ rm x; }",
    "X=1 rm x",
    "exec rm x",
    "echo $(rm x)",
    'echo "`rm x`"',
    "cat <(rm x)",
    "env rm x",
    "env -i A=1 rm x",
    "command rm x",
    "builtin rm x",
    "nice -n 5 rm x",
    "nohup rm x",
    "timeout -s KILL 5 rm x",
    "time rm x",
    "sudo -u root rm x",
    "echo x | xargs -n1 rm",
    "find . -exec rm {} +",
    "bash -c 'rm x'",
    "sh -xc 'ls; rm x'",
    "eval 'rm x'",
    "f() { rm x; }; f",
    "if true; then rm x; fi",
    "for f in a; do rm $f; done",
    "cat <<EOF\n$(rm x)\nEOF",
    "$CMD x",
    "source script.sh",
    "echo )",
    "coproc rm x",
    "doas rm x",
    "ionice -c 3 rm x",
    "stdbuf -o L rm x",
    "(" * 400 + "rm x" + ")" * 400,
]


@pytest.mark.parametrize("command", DENY_EVASIONS)
def test_a_deny_rule_matches_every_simple_command_in_the_tree(command: str) -> None:
    rules = PermissionRules.parse(allow=["bash"], deny=["bash:rm"])
    assert rules.decide("bash", {"command": command}) == "deny"


@pytest.mark.parametrize("command", ["git push --force", "git -C . push", "git $X origin"])
def test_multi_word_deny_rules(command: str) -> None:
    rules = PermissionRules.parse(deny=["bash:git push"])
    expected = None if "-C" in command else "deny"  # words are a prefix: documented limit
    assert rules.decide("bash", {"command": command}) == expected


def test_deny_rules_leave_other_commands_alone() -> None:
    rules = PermissionRules.parse(allow=["bash"], deny=["bash:rm"])
    for command in ("ls", "echo rm", "git rm x", "rmdir x", "echo $(date)", "[ -f x ]"):
        assert rules.decide("bash", {"command": command}) == "allow", command


def test_deny_wins_over_allow() -> None:
    rules = PermissionRules.parse(allow=["bash", "write"], deny=["bash:curl", "write"])
    assert rules.decide("bash", {"command": "curl x"}) == "deny"
    assert rules.decide("bash", {"command": "echo $(date)"}) == "allow"
    assert rules.decide("write", {"path": "a"}) == "deny"
    assert rules.decide("edit", {"path": "a"}) is None


def test_file_rules() -> None:
    rules = PermissionRules.parse(allow=["edit:src/a.py"], deny=["write:.env"])
    assert rules.decide("edit", {"path": "./src/a.py"}) == "allow"
    assert rules.decide("edit", {"path": "src/b.py"}) is None
    assert rules.decide("write", {"path": ".env"}) == "deny"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://docs.python.org/3/", "allow"),  # a parent domain covers its subdomains
        ("https://PYTHON.org.", "allow"),  # normalised as the fetch tool does
        ("https://notpython.org", None),
        ("https://sub.evil.example/x", "deny"),
        ("http://[bad", None),  # no host to name: no rule covers it, not even a deny rule
    ],
)
def test_fetch_rules_name_a_host_or_a_parent_domain(url: str, expected: str | None) -> None:
    rules = PermissionRules.parse(allow=["fetch:Python.ORG"], deny=["fetch:evil.example"])
    assert rules.decide("fetch", {"url": url}) == expected
    assert rules.decide("fetch", {"URL": url, "path": url}) is None


def test_the_hosts_fetch_may_reach_privately_are_those_allow_rules_name() -> None:
    rules = PermissionRules.parse(
        allow=["fetch:Docs.Example.COM", "fetch", "bash:ls", "fetch:10.0.0.5", "read:notes.md"],
        deny=["fetch:deny.example"],
    )
    assert rules.fetch_hosts() == frozenset({"docs.example.com", "10.0.0.5"})


async def run_gated(gate: PermissionGate, name: str, params: dict[str, Any]) -> ToolResult:
    runs: list[str] = []
    [tool] = gate_tools([make_tool(name, runs)], gate)
    output = await tool.execute("c1", params, AbortController().signal)
    assert output.is_error == (not runs)  # a refusal is an error result, and the tool never ran
    return output


def refusal_text(result: ToolResult) -> str:
    assert result.is_error
    first = result.content[0]
    assert isinstance(first, TextContent)
    return first.text


async def test_ask_without_approver_denies_and_says_why() -> None:
    result = await run_gated(PermissionGate("ask"), "bash", {"command": "ls"})
    assert "needs the user's approval and there is no terminal" in refusal_text(result)


async def test_ask_mode_lets_read_tools_run_and_allow_rules_skip_the_question() -> None:
    assert not (await run_gated(PermissionGate("ask"), "read", {"path": "a"})).is_error
    gate = PermissionGate("ask", PermissionRules.parse(allow=["bash:ls"]))
    assert not (await run_gated(gate, "bash", {"command": "ls -la"})).is_error


async def test_auto_runs_everything_but_denied_calls() -> None:
    gate = PermissionGate("auto", PermissionRules.parse(deny=["bash:rm"]))
    assert not (await run_gated(gate, "bash", {"command": "echo hi"})).is_error
    refused = await run_gated(gate, "bash", {"command": "rm -rf x"})
    assert "deny rule" in refusal_text(refused)


async def test_accept_edits_runs_write_and_edit_and_asks_for_bash() -> None:
    gate = PermissionGate("accept-edits")
    assert not (await run_gated(gate, "write", {"path": "a", "content": ""})).is_error
    assert not (await run_gated(gate, "edit", {"path": "a"})).is_error
    assert "needs the user's approval" in refusal_text(
        await run_gated(gate, "bash", {"command": "ls"})
    )


class Scripted:
    """An approver that gives these answers in turn and keeps what it was asked."""

    def __init__(self, *answers: Approval | str) -> None:
        self.answers = list(answers)
        self.asked: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> Approval:
        self.asked.append(request)
        answer = self.answers.pop(0)
        if isinstance(answer, str):  # "grant:N" picks offer N
            return Approval(True, request.offers[int(answer.split(":")[1])])
        return answer


async def test_always_for_git_status_still_asks_for_rm_x() -> None:
    approver = Scripted("grant:0", NO)
    gate = PermissionGate("ask", approver=approver)
    assert not (await run_gated(gate, "bash", {"command": "git status -s"})).is_error
    assert not (await run_gated(gate, "bash", {"command": "git status"})).is_error
    assert "declined" in refusal_text(await run_gated(gate, "bash", {"command": "rm x"}))
    assert [request.summary for request in approver.asked] == ["bash: git status -s", "bash: rm x"]
    assert [str(rule) for rule in gate.grants] == ["bash:git status"]


async def test_a_grant_covers_the_prefixes_shown_and_nothing_with_an_expansion() -> None:
    approver = Scripted("grant:0", YES)
    gate = PermissionGate("ask", approver=approver)
    await run_gated(gate, "bash", {"command": "git status && ls docs"})
    assert approver.asked[0].offers[0].label == "git status, ls docs"
    assert not (await run_gated(gate, "bash", {"command": "ls docs -la"})).is_error
    await run_gated(gate, "bash", {"command": "git status $(rm x)"})
    assert len(approver.asked) == 2
    assert approver.asked[1].offers == ()  # no prefix could cover it: no "always" offered


async def test_edit_grants_are_per_file_or_all_edits() -> None:
    approver = Scripted("grant:0", YES, "grant:1")
    gate = PermissionGate("ask", approver=approver)
    await run_gated(gate, "edit", {"path": "a.py"})
    await run_gated(gate, "write", {"path": "a.py", "content": ""})
    await run_gated(gate, "edit", {"path": "b.py"})
    assert [o.label for o in approver.asked[0].offers] == ["edits to a.py", "all edits"]
    assert [request.summary for request in approver.asked] == ["edit: a.py", "edit: b.py"]
    await run_gated(gate, "edit", {"path": "c.py"})
    await run_gated(gate, "write", {"path": "d.py", "content": ""})
    await run_gated(gate, "edit", {"path": "b.py"})
    assert len(approver.asked) == 3


async def test_grants_are_listed_and_revoked() -> None:
    gate = PermissionGate("ask", approver=Scripted("grant:0", "grant:0", YES, "grant:0"))
    await run_gated(gate, "bash", {"command": "ls docs"})
    await run_gated(gate, "bash", {"command": "make test"})
    assert gate.grants == [Rule("bash", "ls docs"), Rule("bash", "make test", exact=True)]
    with pytest.raises(ValueError, match="no grant '3'"):
        gate.revoke("3")
    assert gate.revoke("2") == [Rule("bash", "make test", exact=True)]  # the last one listed
    assert gate.revoke("1") == [Rule("bash", "ls docs")]
    with pytest.raises(ValueError, match="no grant '5'"):
        gate.revoke("5")
    await run_gated(gate, "bash", {"command": "ls docs"})  # asks again: YES
    await run_gated(gate, "bash", {"command": "make test"})  # asks again: granted
    assert gate.revoke("all") == [Rule("bash", "make test", exact=True)]
    assert gate.grants == []


async def test_no_with_instructions_tells_the_model_what_to_do_instead() -> None:
    gate = PermissionGate("ask", approver=Scripted(Approval(False, feedback="use git stash")))
    text = refusal_text(await run_gated(gate, "bash", {"command": "git reset --hard"}))
    assert "declined" in text and "use git stash" in text


def test_read_only_offers_only_reading_tools() -> None:
    tools = [
        make_tool(name, []) for name in ("read", "write", "edit", "bash", "grep", "find", "ls")
    ]
    offered = gate_tools(tools, PermissionGate("read-only"))
    assert [tool.name for tool in offered] == ["read", "grep", "find", "ls"]
    assert [tool.name for tool in gate_tools(tools, PermissionGate("ask"))] == [
        t.name for t in tools
    ]


async def test_an_abort_ends_an_open_question() -> None:
    asked = asyncio.Event()

    async def never_answers(request: ApprovalRequest) -> Approval:
        asked.set()
        await asyncio.Event().wait()
        return YES

    runs: list[str] = []
    [tool] = gate_tools([make_tool("bash", runs)], PermissionGate("ask", approver=never_answers))
    controller = AbortController()
    running = asyncio.create_task(tool.execute("c1", {"command": "ls"}, controller.signal))
    await asked.wait()
    controller.abort()
    result = await asyncio.wait_for(running, timeout=10)
    assert isinstance(result, ToolResult) and runs == []
    assert refusal_text(result) == "Operation aborted"


async def test_mcp_and_other_tools_ask_in_ask_mode_and_can_be_granted() -> None:
    approver = Scripted("grant:0", NO)
    gate = PermissionGate("ask", approver=approver)
    assert not (await run_gated(gate, "mcp__tracker__create", {"title": "x"})).is_error
    assert not (await run_gated(gate, "mcp__tracker__create", {"title": "y"})).is_error
    refused = await run_gated(gate, "mcp__tracker__delete", {"id": 1})
    assert "declined" in refusal_text(refused)
    assert [request.tool_name for request in approver.asked] == [
        "mcp__tracker__create",
        "mcp__tracker__delete",
    ]
    headless = await run_gated(PermissionGate("ask"), "mcp__tracker__create", {})
    assert "needs the user's approval" in refusal_text(headless)


def test_rules_name_an_mcp_server_or_one_of_its_tools() -> None:
    rules = PermissionRules.parse(allow=["mcp__docs"], deny=["mcp__tracker__delete"])
    assert rules.decide("mcp__docs__search", {}) == "allow"
    assert rules.decide("mcp__docsx__search", {}) is None
    assert rules.decide("mcp__tracker__delete", {}) == "deny"
    assert rules.decide("mcp__tracker__create", {}) is None
    assert rules.decide("mcp__docs__find__all", {}) == "allow"  # the tool's own name holds `__`


def test_a_switch_into_auto_with_the_sandbox_off_says_so_once() -> None:
    gate = PermissionGate("ask")
    gate.watchers.append(SandboxChoice("off").note)
    said = [gate.switch(mode) for mode in ("accept-edits", "auto", "ask", "auto")]
    assert said == [
        [],
        ["auto mode runs bash unsandboxed: the sandbox is off (--sandbox off or [sandbox] mode)"],
        [],
        [],
    ]
    assert gate.mode == "auto"
    assert SandboxChoice("off").sandbox("auto") is None
    assert SandboxChoice(None).sandbox("ask") is None


def _readme_bullet(mode: str) -> str:
    """The Permissions section's bullet for `mode`, as one line."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme.split("### Permissions", 1)[1].split("\n\n**", 1)[0]
    bullet = section.split(f"- `{mode}`:", 1)[1].split("\n- ", 1)[0]
    return " ".join(bullet.split())


def _named_tools(text: str) -> set[str]:
    return set(re.findall(r"[a-z]+", text.replace(" and ", ", "))) - {"only"}


def test_the_readme_names_the_tools_ask_mode_runs_unasked() -> None:
    unasked = _readme_bullet("ask").split(" run freely", 1)[0]
    assert _named_tools(unasked) == READ_ONLY_TOOLS


def test_the_readme_names_the_tools_read_only_mode_offers() -> None:
    offered = _readme_bullet("read-only").split("offered only ", 1)[1].split(" (", 1)[0]
    assert _named_tools(offered) == READ_ONLY_MODE_TOOLS


def test_a_rule_reads_back_as_written() -> None:
    assert [str(Rule.parse(text)) for text in ("bash", "bash:git status", "write:a.py")] == [
        "bash",
        "bash:git status",
        "write:a.py",
    ]


def test_a_rule_without_a_prefix_allows_or_denies_every_command() -> None:
    assert PermissionRules.parse(allow=["bash"]).decide("bash", {"command": "ls -la"}) == "allow"
    assert PermissionRules.parse(deny=["bash"]).decide("bash", {"command": "ls -la"}) == "deny"


def test_a_deny_rule_longer_than_the_wrapper_still_matches_what_it_runs() -> None:
    rules = PermissionRules.parse(deny=["bash:git push origin main"])
    assert rules.decide("bash", {"command": 'sh -c "git push origin main"'}) == "deny"


def test_a_deny_rules_refusal_says_no_more_for_a_readable_line() -> None:
    gate = PermissionGate("auto", rules=PermissionRules.parse(deny=["bash:rm"]))
    refusal = asyncio.run(gate.check("bash", {"command": "rm x"}))
    assert refusal == "Permission denied: a deny rule in the settings blocks bash here."


@pytest.mark.parametrize(
    ("mode", "hint"), [("read-only", ""), ("plan", PLAN_HINT)], ids=["read-only", "plan"]
)
def test_read_only_and_plan_modes_refuse_what_changes_and_run_what_reads(
    mode: PermissionMode, hint: str
) -> None:
    gate = PermissionGate(mode, approver=Scripted())
    refusal = asyncio.run(gate.check("write", {"path": "a.py", "content": ""}))
    assert refusal == f"Permission denied: write is not available in {mode} mode.{hint}"
    assert asyncio.run(gate.check("read", {"path": "a.py"})) is None


def test_a_hook_that_asks_is_asked_even_in_auto_mode_or_with_an_allow_rule() -> None:
    approver = Scripted(NO, NO)
    rules = PermissionRules.parse(allow=["bash:ls"])
    for mode in ("auto", "ask"):
        gate = PermissionGate(mode, rules=rules, approver=approver)  # type: ignore[arg-type]
        refusal = asyncio.run(gate.check("bash", {"command": "ls"}, hook="ask"))
        assert refusal is not None and "declined" in refusal
    assert [request.summary for request in approver.asked] == ["bash: ls", "bash: ls"]


def test_a_hook_that_allows_skips_the_question() -> None:
    approver = Scripted()
    gate = PermissionGate("ask", approver=approver)
    assert asyncio.run(gate.check("bash", {"command": "make"}, hook="allow")) is None
    assert approver.asked == []


def test_the_question_carries_the_call_and_its_grant_offers() -> None:
    approver = Scripted(YES)
    gate = PermissionGate("ask", approver=approver)
    arguments = {"url": "https://example.com/a"}
    assert asyncio.run(gate.check("fetch", arguments)) is None
    [request] = approver.asked
    assert (request.tool_name, request.arguments, request.summary, request.why) == (
        "fetch",
        arguments,
        "fetch: https://example.com/a",
        "",
    )
    assert [(offer.label, offer.rules) for offer in request.offers] == [("fetch", (Rule("fetch"),))]


def test_edit_offers_are_this_file_or_every_edit_and_only_for_edits() -> None:
    approver = Scripted(NO, NO)
    gate = PermissionGate("ask", approver=approver)
    asyncio.run(gate.check("edit", {"path": "a.py", "old_text": "a", "new_text": "b"}))
    asyncio.run(gate.check("mcp__docs__search", {"path": "a.py"}))
    edit, other = approver.asked
    assert [(offer.label, offer.rules) for offer in edit.offers] == [
        ("edits to a.py", (Rule("edit", "a.py"), Rule("write", "a.py"))),
        ("all edits", (Rule("edit"), Rule("write"))),
    ]
    assert [(offer.label, offer.rules) for offer in other.offers] == [
        ("mcp__docs__search", (Rule("mcp__docs__search"),))
    ]


def guarded(path: str) -> str | None:
    return f"{path} is guarded" if path.startswith(".git/") else None


def test_a_protected_path_is_asked_about_with_why_and_no_grant_offers() -> None:
    approver = Scripted(YES)
    gate = PermissionGate("accept-edits", approver=approver, protected=guarded)
    arguments = {"path": ".git/config", "content": "x"}
    assert asyncio.run(gate.check("write", arguments)) is None
    [request] = approver.asked
    assert (request.tool_name, request.arguments, request.summary, request.why) == (
        "write",
        arguments,
        "write: .git/config (.git/config is guarded)",
        ".git/config is guarded",
    )
    assert request.offers == ()


def test_only_the_path_a_write_or_edit_names_is_judged_protected() -> None:
    gate = PermissionGate("accept-edits", approver=Scripted(), protected=lambda path: "always")
    assert asyncio.run(gate.check("write", {"content": "no path"})) is None
    allowed = PermissionGate("ask", PermissionRules.parse(allow=["mcp__x"]), protected=guarded)
    assert asyncio.run(allowed.check("mcp__x", {"path": ".git/config"})) is None  # no edit
    nobody = PermissionGate("accept-edits", protected=guarded)
    refusal = asyncio.run(nobody.check("edit", {"path": ".git/config"}))
    assert refusal is not None
    assert refusal.startswith("Permission denied: edit needs the user's approval (.git/config")
    assert asyncio.run(nobody.check("edit", {"path": "src/a.py"})) is None


def test_a_bash_call_without_a_command_is_denied_by_any_deny_rule_and_allowed_by_no_prefix() -> (
    None
):
    assert PermissionRules.parse(allow=["bash:ls"], deny=["bash:rm"]).decide("bash", {}) == "deny"
    assert PermissionRules.parse(allow=["bash:ls"]).decide("bash", {"command": 7}) is None


def same_file(raw: str) -> str:
    """A stand-in for the gate's `place` (the file tools' own reading of a path, wired in by
    the set-up): `@secrets.env` and ` secrets.env` name secrets.env."""
    return raw.strip().removeprefix("@")


@pytest.mark.parametrize("spelled", ["@secrets.env", " secrets.env"])
def test_file_rules_judge_the_file_a_path_names_not_its_spelling(spelled: str) -> None:
    denied = PermissionRules.parse(deny=["write:secrets.env"])
    allowed = PermissionRules.parse(allow=["write:secrets.env"])
    call = {"path": spelled}
    assert (denied.decide("write", call), allowed.decide("write", call)) == (None, None)
    assert denied.decide("write", call, place=same_file) == "deny"
    assert allowed.decide("write", call, place=same_file) == "allow"


async def test_the_gate_judges_file_rules_by_its_place() -> None:
    gate = PermissionGate("auto", PermissionRules.parse(deny=["write:secrets.env"]))
    gate.place = same_file
    refused = await gate.check("write", {"path": "@secrets.env", "content": "x"})
    assert refused is not None and "deny rule" in refused


def test_a_granted_prefix_never_covers_a_line_only_an_exact_grant_may() -> None:
    """ "always" for `git --no-pager log` grants `git`; `git clean -fd` still asks. The user's
    own allow rule for `git` covers it: the user wrote it."""
    grant = (Rule("bash", "git"),)
    assert PermissionRules().decide("bash", {"command": "git --no-pager log"}, grant) == "allow"
    assert PermissionRules().decide("bash", {"command": "git clean -fd"}, grant) is None
    own = PermissionRules.parse(allow=["bash:git"])
    assert own.decide("bash", {"command": "git clean -fd"}) == "allow"


def test_an_exact_grant_allows_its_own_line_and_no_other_command() -> None:
    grant = (Rule("bash", "rm -f notes.txt", exact=True),)
    rules = PermissionRules()
    assert rules.decide("bash", {"command": "rm -f notes.txt"}, grant) == "allow"
    assert rules.decide("bash", {"command": "cat notes.txt"}, grant) is None
