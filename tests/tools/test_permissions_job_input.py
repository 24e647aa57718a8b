"""job_input under the permission rules: asked about in ask and accept-edits modes (with the
text it would type), run unasked in auto, refused by a deny rule on `job_input` in every
mode. What it types is input to the job's program: a job that would read commands from it,
a shell, cannot start while any bash deny rule is set (bash's deny rules cannot read a
shell's input in advance, so they refuse it), and what is typed into another program (a
Python REPL) is that program's input, which bash's deny rules do not read."""

from __future__ import annotations

import pytest

from di_code.tools.policy.modes import PermissionMode
from di_code.tools.policy.permissions import (
    ApprovalRequest,
)
from tests.support.permission_gates import gate_of

TYPED = {"job_id": 1, "text": "rm -rf build\n"}


@pytest.mark.parametrize("mode", ["ask", "accept-edits", "auto"])
async def test_a_deny_rule_on_job_input_refuses_it_in_every_mode(mode: PermissionMode) -> None:
    asked: list[ApprovalRequest] = []
    refused = await gate_of(mode, ["job_input"], asked).check("job_input", TYPED)
    assert refused is not None and "deny rule" in refused and "job_input" in refused
    assert asked == []


@pytest.mark.parametrize(("mode", "asks"), [("ask", True), ("accept-edits", True), ("auto", False)])
async def test_job_input_is_asked_about_with_its_text_as_bash_is(
    mode: PermissionMode, asks: bool
) -> None:
    asked: list[ApprovalRequest] = []
    assert await gate_of(mode, [], asked).check("job_input", TYPED) is None
    assert [(r.tool_name, r.arguments["text"]) for r in asked] == (
        [("job_input", "rm -rf build\n")] if asks else []
    )


async def test_job_input_is_asked_about_with_no_grant_to_offer() -> None:
    """An "always" for job_input would type anything into any job unasked: no rule reads it."""
    asked: list[ApprovalRequest] = []
    await gate_of("ask", [], asked).check("job_input", TYPED)
    assert [(r.tool_name, r.offers) for r in asked] == [("job_input", ())]


@pytest.mark.parametrize(
    "shell", ["bash", "exec sh -i", "env FOO=1 zsh", "cd sub && bash --norc", "script -q /dev/null"]
)
async def test_a_shell_that_would_read_typed_commands_cannot_start_under_a_deny_rule(
    shell: str,
) -> None:
    asked: list[ApprovalRequest] = []
    gate = gate_of("auto", ["bash:rm"], asked)
    refused = await gate.check("bash", {"command": shell, "background": True})
    assert refused is not None and "deny rule" in refused, shell


async def test_what_a_repl_is_typed_is_its_own_input_which_bash_rules_do_not_read() -> None:
    asked: list[ApprovalRequest] = []
    gate = gate_of("auto", ["bash:rm"], asked)
    assert await gate.check("bash", {"command": "python3 -i", "background": True}) is None
    assert await gate.check("job_input", TYPED) is None
    denied_program = gate_of("auto", ["bash:python3"], asked)
    started = await denied_program.check("bash", {"command": "python3 -i", "background": True})
    assert started is not None and "deny rule" in started
