"""Hosts: only di_code.system.web_address reads a URL's host, resolves a name or opens a
connection by name. Any other module that takes `.hostname` or `.netloc` from a parsed URL,
calls a resolver (`getaddrinfo`, `gethostbyname`...) or a connect-by-name, or encodes IDNA
itself would match or reach a host by a spelling the rules never judged; this test reads every
module of the package and fails on it."""

from __future__ import annotations

import ast
from pathlib import Path

import di_code

PACKAGE = Path(di_code.__file__).parent
GUARDED = PACKAGE / "system" / "web_address.py"
HOST_ATTRIBUTES = {"hostname", "netloc"}
BY_NAME = {
    "getaddrinfo",
    "gethostbyname",
    "gethostbyname_ex",
    "getnameinfo",
    "create_connection",
    "open_connection",
    "inet_aton",
}


def breaches(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in HOST_ATTRIBUTES | BY_NAME:
            found.append(f"line {node.lineno}: .{node.attr}")
        elif isinstance(node, ast.Name) and node.id in BY_NAME:
            found.append(f"line {node.lineno}: {node.id}")
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names = [alias.name for alias in node.names]
            module = getattr(node, "module", None) or ""
            if "idna" in [module.split(".")[-1], *(name.split(".")[-1] for name in names)]:
                found.append(f"line {node.lineno}: imports idna")
        elif isinstance(node, ast.Constant) and node.value == "idna":
            found.append(f"line {node.lineno}: the idna codec")
    return found


def test_only_the_guarded_place_reads_resolves_or_connects_to_a_host() -> None:
    outside = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path != GUARDED:
            found = breaches(ast.parse(path.read_text(encoding="utf-8")))
            if found:
                outside[str(path.relative_to(PACKAGE))] = found
    assert outside == {}, "host handled outside di_code.system.web_address: " + repr(outside)


def test_the_guarded_place_test_sees_a_breach() -> None:
    sample = "import socket\nfrom urllib.parse import urlsplit\nh = urlsplit(u).hostname\n"
    sample += "socket.getaddrinfo(h, 80)\n"
    assert len(breaches(ast.parse(sample))) == 2
    assert breaches(ast.parse(GUARDED.read_text(encoding="utf-8")))  # the guarded place does it all
