"""Models: one factory picks every model and makes every provider
(di_code.config.provider_factory). Read from the code: a module other than it that resolves a
model from a spec (`select_model`, the registry's `resolve_model`), builds a `Selection`, or
makes a provider itself (`PROVIDER_CLASSES`, a provider class, `create_faux_provider`) fails
here; so a new feature (a command, an editor's session, a batch task) cannot pick a model
around the guarded place's trust rule."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "di_code"
PROVIDERS = PACKAGE / "ai" / "providers"
GUARDED = PACKAGE / "config" / "provider_factory.py"
RESOLVERS = {"select_model", "resolve_model", "Selection()"}
"""Defined in config/selection.py and config/models.py: only the guarded place calls them (a
`Selection` may be named as a type anywhere; only the guarded place builds one)."""
DEFINED_AT = {PACKAGE / "config" / "selection.py", PACKAGE / "config" / "models.py"}


def provider_makers() -> set[str]:
    """The names that make a provider: the registry, and each provider class and factory
    defined in di_code/ai/providers (read from its modules)."""
    names = {"PROVIDER_CLASSES"}
    for module in PROVIDERS.glob("*.py"):
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and node.name.endswith("Provider"):
                names.add(node.name)
            if isinstance(node, ast.FunctionDef) and node.name.startswith("create_"):
                names.add(node.name)
    return names


def names_used(path: Path) -> set[str]:
    """Every name a module refers to (bare names, attributes and imported names), and
    `NAME()` for each name it calls."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if name is not None:
                found.add(f"{name}()")
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, ast.ImportFrom):
            found.update(alias.name for alias in node.names)
    return found


def around_the_guarded_place(path: Path, makers: set[str]) -> set[str]:
    """What `path` uses that only the guarded place may use."""
    if path == GUARDED:
        return set()
    used = names_used(path)
    found = used & makers if not path.is_relative_to(PROVIDERS) else set()
    if path not in DEFINED_AT:
        found |= used & RESOLVERS
    return found


def test_only_the_guarded_place_picks_a_model_or_makes_a_provider() -> None:
    makers = provider_makers()
    assert {"PROVIDER_CLASSES", "OpenAIProvider", "create_faux_provider"} <= makers
    offenders = {
        str(path.relative_to(PACKAGE)): sorted(names)
        for path in sorted(PACKAGE.rglob("*.py"))
        if (names := around_the_guarded_place(path, makers))
    }
    assert offenders == {}


def test_the_guarded_place_itself_uses_them() -> None:
    """The check would pass vacuously if the names it looks for were renamed away."""
    used = names_used(GUARDED)
    assert {"select_model", "PROVIDER_CLASSES"} <= used


def test_the_check_catches_a_planted_violation(tmp_path: Path) -> None:
    planted = {
        "registry.py": "from di_code.ai.providers import PROVIDER_CLASSES\n"
        "p = PROVIDER_CLASSES['openai-completions'](api_key=None, base_url='x')\n",
        "by_class.py": "from di_code.ai.providers.openai import OpenAIProvider\n"
        "p = OpenAIProvider(api_key=None, base_url='http://localhost:8080/v1')\n",
        "by_attribute.py": "import di_code.ai.providers.google as g\np = g.GoogleProvider()\n",
        "resolver.py": "from di_code.config import selection\n"
        "s = selection.select_model(request, settings, env)\n",
        "registry_model.py": "from di_code.config.models import resolve_model\n",
        "selection.py": "from di_code.config import selection\ns = selection.Selection(m, '')\n",
        "faux.py": "from di_code.ai.providers.faux import create_faux_provider\n",
    }
    makers = provider_makers()
    for name, source in planted.items():
        path = tmp_path / name
        path.write_text(source)
        assert around_the_guarded_place(path, makers), name
    clean = tmp_path / "clean.py"
    clean.write_text(
        "from di_code.config.provider_factory import ProviderFactory\n"
        "from di_code.config.selection import Selection\n"
        "def f(factory: ProviderFactory) -> Selection: return factory.pick(request)\n"
    )
    assert not around_the_guarded_place(clean, makers)
