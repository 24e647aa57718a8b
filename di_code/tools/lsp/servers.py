"""Which language servers there are: `[lsp.NAME]` tables in config.toml and built-in presets.

    [lsp.pyright]                      # a preset's name: override its keys, or enabled = false
    command = ["basedpyright-langserver", "--stdio"]
    extensions = [".py", ".pyi"]       # and/or globs = ["*.py"] (matched on the file name)
    root_markers = ["pyproject.toml", ".git"]
    initialization_options = { }
    startup_timeout = 10               # seconds for initialize; then di-code goes on without it

A preset is used when its program is on PATH. A server is a program that runs here, so a
project's own config file may not add or change one until the user trusts the project (the
`lsp` key is not on di_code.config.trust's allow-list). Nothing here imports pygls.
"""

from __future__ import annotations

import fnmatch
import re
import shutil
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

import msgspec
from msgspec import Struct, field

DEFAULT_STARTUP_TIMEOUT = 10.0
Untrusted = Literal["runs", "pinned", "waits"]
UNTRUSTED: dict[str, str] = {
    "runs": "runs (it runs no program the project names)",
    "pinned": "runs, told to use di-code's own Python",
    "waits": "starts once you trust the project",
}
"""What a server does in an untrusted project (README's table; `di-code lsp` says it); every
server runs in the sandbox anyway where bubblewrap works."""
_NAME = re.compile(r"[A-Za-z0-9_-]{1,40}")


class ServerSpec(Struct, frozen=True):
    name: str
    command: tuple[str, ...]
    extensions: tuple[str, ...] = ()
    globs: tuple[str, ...] = ()
    root_markers: tuple[str, ...] = (".git",)
    initialization_options: Mapping[str, Any] = field(default_factory=dict)
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT
    install: str = ""
    """How to install the program (for `di-code lsp` when it is missing)."""
    enabled: bool = True
    untrusted: Untrusted = "runs"
    """What the server does in a project the user has not trusted (UNTRUSTED)."""

    def serves(self, path: Path) -> bool:
        name = path.name
        return name.endswith(self.extensions) or any(
            fnmatch.fnmatchcase(name, glob) for glob in self.globs
        )

    def language_id(self, path: Path) -> str:
        return LANGUAGE_IDS.get(path.suffix, path.suffix.lstrip(".") or "plaintext")


LANGUAGE_IDS = {
    ".py": "python", ".pyi": "python", ".ts": "typescript", ".tsx": "typescriptreact",
    ".js": "javascript", ".jsx": "javascriptreact", ".mjs": "javascript", ".cjs": "javascript",
    ".go": "go", ".rs": "rust", ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp",
    ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp",
}  # fmt: skip

_PY = (".py", ".pyi")
_PY_ROOTS = ("pyproject.toml", "setup.py", "setup.cfg", "pyrightconfig.json", ".git")
_C = (".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh")
PRESETS: tuple[tuple[ServerSpec, ...], ...] = (
    (
        ServerSpec("pyright", ("basedpyright-langserver", "--stdio"), _PY, (), _PY_ROOTS,
                   install="pip install basedpyright", untrusted="pinned"),
        ServerSpec("pyright", ("pyright-langserver", "--stdio"), _PY, (), _PY_ROOTS,
                   install="npm install -g pyright", untrusted="pinned"),
    ),
    (ServerSpec("ruff", ("ruff", "server"), _PY, (), ("pyproject.toml", "ruff.toml", ".git"),
                install="pip install ruff"),),
    (ServerSpec("typescript", ("typescript-language-server", "--stdio"),
                (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs"), (),
                ("tsconfig.json", "jsconfig.json", "package.json", ".git"),
                install="npm install -g typescript typescript-language-server",
                untrusted="waits"),),
    (ServerSpec("gopls", ("gopls",), (".go",), (), ("go.work", "go.mod", ".git"),
                install="go install golang.org/x/tools/gopls@latest", untrusted="waits"),),
    (ServerSpec("rust-analyzer", ("rust-analyzer",), (".rs",), (), ("Cargo.toml", ".git"),
                install="rustup component add rust-analyzer", untrusted="waits"),),
    (ServerSpec("clangd", ("clangd",), _C, (), ("compile_commands.json", ".clangd", ".git"),
                install="apt install clangd (or your system's package)", untrusted="waits"),),
)  # fmt: skip
"""Each preset's candidates, the first whose program is on PATH wins."""


class Catalog(Struct, frozen=True):
    """The servers di-code may start, and the presets whose program is missing."""

    servers: tuple[ServerSpec, ...]
    missing: tuple[ServerSpec, ...]
    warnings: tuple[str, ...] = ()

    def for_path(self, path: Path) -> list[ServerSpec]:
        return [spec for spec in self.servers if spec.serves(path)]


def catalog(
    tables: Mapping[str, Any], which: Callable[[str], str | None] = shutil.which
) -> Catalog:
    """The presets found on PATH with the user's `[lsp.NAME]` tables laid over them (a table
    for a new name adds a server); a bad table is one warning and is left out."""
    chosen: dict[str, ServerSpec] = {}
    missing: list[ServerSpec] = []
    for candidates in PRESETS:
        found = next((c for c in candidates if which(c.command[0])), None)
        if found is None:
            missing.append(candidates[0])
        chosen[candidates[0].name] = found or candidates[0]
    warnings, configured = [], set()
    for name, table in tables.items():
        try:
            chosen[name] = _configured(str(name), table, chosen.get(name))
            configured.add(name)
        except ValueError as exc:
            warnings.append(f"lsp.{name} ignored: {exc}")
    missing = [m for m in missing if m.name not in configured]
    names = {m.name for m in missing}
    servers = [s for s in chosen.values() if s.enabled and s.name not in names]
    return Catalog(tuple(servers), tuple(missing), tuple(warnings))


def _configured(name: str, table: Any, preset: ServerSpec | None) -> ServerSpec:
    if not _NAME.fullmatch(name):
        raise ValueError("names may use letters, digits, - and _ (at most 40)")
    if not isinstance(table, dict):
        raise ValueError("expected a table")
    unknown = set(table) - {*_LISTS, "initialization_options", "startup_timeout", "enabled"}
    if unknown:
        raise ValueError(f"unknown key {sorted(unknown)[0]}")
    base = preset or ServerSpec(name, ())
    changes: dict[str, Any] = {key: _strings(table[key], key) for key in _LISTS if key in table}
    if "initialization_options" in table:
        if not isinstance(table["initialization_options"], dict):
            raise ValueError("initialization_options must be a table")
        changes["initialization_options"] = table["initialization_options"]
    timeout = table.get("startup_timeout", base.startup_timeout)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise ValueError("startup_timeout must be a positive number of seconds")
    enabled = table.get("enabled", True)
    if not isinstance(enabled, bool):
        raise ValueError("enabled must be true or false")
    spec = msgspec.structs.replace(base, **changes, startup_timeout=float(timeout), enabled=enabled)
    if spec.enabled and not spec.command:
        raise ValueError("command is required (a list: program and arguments)")
    if spec.enabled and not (spec.extensions or spec.globs):
        raise ValueError("give extensions or globs")
    return spec


_LISTS = ("command", "extensions", "globs", "root_markers")


def _strings(value: Any, key: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"{key} must be a list of strings")
    return tuple(value)


def pinned_settings(spec: ServerSpec) -> dict[str, Any]:
    """The settings that keep a "pinned" server from running the project's programs:
    pyright runs the project's `.venv/bin/python` to find its imports unless told which
    interpreter to use; it is told di-code's own."""
    if spec.untrusted != "pinned":
        return {}
    return {"python": {"pythonPath": sys.executable}}


def workspace_root(path: Path, spec: ServerSpec, top: Path) -> Path:
    """The folder a server for `path` works in: the nearest one up to `top` holding one of
    the spec's root markers, else `top` (the working directory)."""
    folder = path.parent
    while folder.is_relative_to(top):
        if any((folder / marker).exists() for marker in spec.root_markers):
            return folder
        if folder == top:
            break
        folder = folder.parent
    return top
