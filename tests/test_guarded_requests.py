"""Issue 32, requests: every model request a prompt causes counts against one budget
(di_code.ai.budget). Read from the code: outside the ai layer a request is made only on a
provider wrapped with a budget (`budget.wrap(provider).stream(...)`), or on the provider an
Agent holds (always wrapped with its budget); a `.stream(` on any other provider fails here."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "di_code"
AI = PACKAGE / "ai"
REQUEST_MAKERS = {"compact"}
"""Functions that stream on the provider they are given: each caller must give an Agent's."""


def unbudgeted_requests(path: Path) -> list[str]:
    """`.stream(` calls whose provider is not budget-wrapped, and calls of a request maker
    given a provider that is not an Agent's (`agent.provider`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    makers = {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.AsyncFunctionDef | ast.FunctionDef) and node.name in REQUEST_MAKERS
    }
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        if isinstance(func, ast.Attribute) and func.attr == "stream":
            receiver = func.value
            wrapped = (
                isinstance(receiver, ast.Call) and getattr(receiver.func, "attr", "") == "wrap"
            )
            inside_maker = any(_encloses(tree, maker, node) for maker in makers)
            if not wrapped and not inside_maker:
                found.append(f"{path.name}:{node.lineno}: {ast.unparse(func)}")
        elif name in REQUEST_MAKERS and not _an_agents_provider(node):
            found.append(f"{path.name}:{node.lineno}: {ast.unparse(node)[:60]}")
    return found


def _an_agents_provider(call: ast.Call) -> bool:
    first = call.args[0] if call.args else None
    return (
        isinstance(first, ast.Attribute)
        and first.attr == "provider"
        and (isinstance(first.value, ast.Name) and first.value.id.endswith("agent"))
    )


def _encloses(tree: ast.Module, name: str, inner: ast.AST) -> bool:
    return any(
        isinstance(node, ast.AsyncFunctionDef | ast.FunctionDef)
        and node.name == name
        and inner in ast.walk(node)
        for node in ast.walk(tree)
    )


def test_every_request_outside_the_ai_layer_is_counted() -> None:
    offenders = [
        line
        for path in sorted(PACKAGE.rglob("*.py"))
        if not path.is_relative_to(AI)
        for line in unbudgeted_requests(path)
    ]
    assert offenders == []


def test_the_agent_holds_only_a_wrapped_provider() -> None:
    from di_code.agent import Agent
    from di_code.ai.budget import BudgetedProvider
    from di_code.ai.providers.faux import create_faux_provider

    faux = create_faux_provider([])
    agent = Agent(faux.provider, faux.model, max_turns=3)
    assert isinstance(agent.provider, BudgetedProvider) and agent.provider.budget is agent.budget
    agent.provider = faux.provider  # /model
    assert isinstance(agent.provider, BudgetedProvider) and agent.provider.budget is agent.budget


def test_the_check_catches_a_planted_violation(tmp_path: Path) -> None:
    planted = {
        "raw.py": "async def f(provider, model, context):\n"
        "    return provider.stream(model, context)\n",
        "other_agent.py": "async def f(parent, model, context):\n"
        "    return parent.provider_of_mine.stream(model, context)\n",
        "compaction_caller.py": "async def f(raw, model, messages):\n"
        "    return await compact(raw, model, messages)\n",
    }
    for name, source in planted.items():
        path = tmp_path / name
        path.write_text(source)
        assert unbudgeted_requests(path), name
    clean = tmp_path / "clean.py"
    clean.write_text(
        "async def f(budget, agent, provider, model, context):\n"
        "    budget.wrap(provider).stream(model, context)\n"
        "    await compact(agent.provider, agent.model, [])\n"
    )
    assert unbudgeted_requests(clean) == []
