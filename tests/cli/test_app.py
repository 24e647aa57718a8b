"""The Typer app itself: help and version without heavy imports, usage errors exit 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from di_code import __version__
from di_code.cli.typer_app import COMMANDS
from tests.cli.conftest import cli_env
from tests.support.imports import CLI_MAIN, loaded_modules, offenders, run_main, when_main_ends
from tests.support.llm_server import LLMServer, Turn

# `--help` needs Typer, and nothing of the network stack, the REPL, the event loop, the agent
# or any provider: each of these cost 10-150 ms of start-up when it crept in. `--version`
# alone does not even need Typer.
NOT_FOR_HELP = (
    "httpx",
    "httpcore",
    "anyio",
    "ssl",
    "jsonschema",
    "prompt_toolkit",
    "rich",
    "pygments",
    "pydantic",
    "mcp",
    "msgspec",
    "asyncio",
    "di_code.ai",
    "di_code.agent",
    "di_code.tools",
    "di_code.session",
    "di_code.ui",
    "di_code.cli.run",
    "di_code.cli.chat",
    "di_code.setup.prepare",
    "di_code.config",
    "tree_sitter",
)
STOP_SIGNALS = {"di_code.ai", "di_code.system.lazy_exports", "di_code.system.stop_signals"}
"""Loaded first of all, for every command: the stop signals are handled from the start."""
NOT_FOR_VERSION = (*NOT_FOR_HELP, "typer", "click", "di_code.cli.typer_app", "di_code.cli.options")


def run_python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize(
    "args",
    [["--help"], ["run", "--help"], ["chat", "--help"], ["mcp", "list", "--help"]],
    ids=" ".join,
)
def test_help_imports_nothing_heavy(args: list[str]) -> None:
    loaded, out = loaded_modules(CLI_MAIN, *args, env=os.environ | {"COLUMNS": "100"})
    assert "Usage: di-code" in out
    assert offenders(loaded - STOP_SIGNALS, NOT_FOR_HELP) == []


# The whole app, parsing the command line as `di-code` did before `run_app` began to parse a
# line that names a top-level command with an app that holds only that command.
WHOLE_APP = """
import sys
sys.argv = ["di-code", *sys.argv[1:]]
from di_code.cli.typer_app import app
app()
"""


@pytest.mark.parametrize(
    "args",
    [
        *([name, "--help"] for name in COMMANDS),
        ["run", "--bogus", "hi"],
        ["batch"],
        ["undo", "--to", "0"],
        ["run", "--version"],
        ["export", "--help", "extra"],
    ],
    ids=" ".join,
)
def test_a_command_alone_parses_as_the_whole_app_does(args: list[str]) -> None:
    env = os.environ | {"COLUMNS": "100"}
    alone = run_main("", *args, env=env, cwd=".")
    whole = subprocess.run(
        [sys.executable, "-c", WHOLE_APP, *args], capture_output=True, text=True, env=env
    )
    assert alone.stdout == whole.stdout
    assert alone.returncode == whole.returncode
    assert _refusal(alone.stderr) == _refusal(whole.stderr)


def _refusal(stderr: str) -> str:
    """click's reason, without the usage block that `run_app` leaves out on purpose."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    return lines[-1].removeprefix("di-code: ").removeprefix("Error: ") if lines else ""


def test_version_alone_is_answered_without_typer() -> None:
    loaded, out = loaded_modules(CLI_MAIN, "--version")
    assert out == f"di-code {__version__}\n"
    assert offenders(loaded - STOP_SIGNALS, NOT_FOR_VERSION) == []


def test_version_with_more_goes_through_typer() -> None:
    loaded, out = loaded_modules(CLI_MAIN, "--version", "run")
    assert out == f"di-code {__version__}\n"
    assert "typer" in loaded


def test_the_import_check_sees_a_heavy_import() -> None:
    loaded, _ = loaded_modules("import di_code.ai.stream")
    assert {"asyncio", "di_code.ai.stream"} <= set(offenders(loaded, NOT_FOR_HELP))


# What `run` must not load on its way to an answer (no terminal, an OpenAI-style server):
# typer >= 0.29's pydantic coercion, the other provider, the REPL and the Markdown renderer;
# nor importlib.metadata, which would read every installed distribution to find plugin tools
# (tens of ms); nor the code of a tool the model did not call (a tenth of the start-up, loaded
# on first call); nor, without a session, the session store and checkpoints; nor local-server
# discovery when a model is configured. (httpx imports its own command line, with click,
# pygments and rich's progress, whenever click is installed: the plain install has no click,
# see test_the_plain_install_brings_no_click; the dev install has it, through the mcp extra.)
# importlib.metadata is loaded, off the loop: it is how the installed plugins are found.
NOT_FOR_RUN = (
    "di_code.session.store",
    "di_code.session.session",
    "di_code.session.format",
    "di_code.session.checkpoints",
    "di_code.config.discovery",
    "di_code.tools.builtin.read",
    "di_code.tools.builtin.write",
    "di_code.tools.builtin.edit",
    "di_code.tools.builtin.bash",
    "di_code.tools.builtin.grep",
    "di_code.tools.builtin.find",
    "di_code.tools.builtin.ls",
    "di_code.tools.builtin.task",  # the subagents' code: loaded when the model first starts one
    "di_code.tools.policy.user_hooks",  # no hooks configured: their code is not loaded
    "di_code.tools.policy.hook_config",
    "di_code.acp",
    "acp",
    "rich.markdown",
    "pydantic",
    "mcp",
    "prompt_toolkit",
    "di_code.ai.providers.anthropic",
    "di_code.ui",
    "di_code.cli.chat",
    "tree_sitter",
    "tree_sitter_bash",
)


def test_run_imports_only_what_it_needs(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    llm_server.script(Turn(text="hello there"))
    # as in the benchmarks: a proxy set for everything, the loopback server exempted
    proxies = {"HTTP_PROXY": "http://127.0.0.1:9", "NO_PROXY": "127.0.0.1,localhost"}
    env = cli_env(di_code_home, llm_server, **proxies)
    args = ("run", "--no-session", "hi")
    loaded, out = loaded_modules(CLI_MAIN, *args, env=env, cwd=str(workspace))
    assert out.strip() == "hello there"
    assert {"httpx", "di_code.ai.providers.openai"} <= loaded
    assert offenders(loaded, NOT_FOR_RUN) == []


PLUGIN_DATACLASSES = {
    "di_code.agent.tool.ToolResult",
    "di_code.agent.tool.BoundTool",
    "di_code.agent.tool.FunctionTool",
}
"""Plugins build these and may change them with dataclasses.replace: they stay dataclasses."""

_DATACLASS_REPORT = "import dataclasses, inspect, json, sys\n" + when_main_ends(
    "print('DATACLASSES:' + json.dumps(sorted("
    "f'{name}.{key}' for name, module in list(sys.modules.items())"
    " if module and name.startswith('di_code') for key, value in vars(module).items()"
    " if inspect.isclass(value) and value.__module__ == name"
    " and dataclasses.is_dataclass(value))))"
)


def test_run_defines_no_dataclass_on_its_way_to_an_answer_and_its_session(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    """A frozen slots dataclass generates and compiles its methods when it is defined (~0.6 ms
    each on a quiet machine; `run` defined 54 before its first request); a msgspec Struct is
    built in C (~0.04 ms)."""
    llm_server.script(Turn(text="hello there"))
    env = cli_env(di_code_home, llm_server)
    done = run_main(_DATACLASS_REPORT, "run", "hi", env=env, cwd=str(workspace))
    head, marker, tail = done.stdout.rpartition("DATACLASSES:")
    assert marker and head == "hello there\n", done.stderr
    assert set(json.loads(tail)) - PLUGIN_DATACLASSES == set()


def test_a_plain_http_server_costs_no_ca_bundle(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    llm_server.script(Turn(text="hello there"))
    report = "import sys\n" + when_main_ends(
        "print('CA bundles:', int(True in sys.modules['di_code.system.http_client']._contexts))"
    )
    env = cli_env(di_code_home, llm_server)
    done = run_main(report, "run", "--no-session", "hi", env=env, cwd=str(workspace))
    assert done.stdout == "hello there\nCA bundles: 0\n", done.stderr


def test_version() -> None:
    done = run_python("from di_code.cli.app import main; main()", "--version")
    assert done.stdout == f"di-code {__version__}\n" and done.returncode == 0


def test_unknown_flag_is_exit_2() -> None:
    done = run_python("from di_code.cli.app import main; main()", "run", "--bogus", "hi")
    assert done.returncode == 2
    assert "No such option: --bogus" in done.stderr
    assert "Traceback" not in done.stderr


# The probe: an object that says when the interpreter's teardown frees it.
TEARDOWN_PROBE = """
import atexit, sys, threading
from di_code.cli.app import SkipTeardown
last = SkipTeardown()
atexit.register(last)
class Probe:
    def __del__(self):
        print("teardown")
probe = Probe()
atexit.register(print, "exit handler")
print("answer", end=" ")  # still in the buffer
"""


@pytest.mark.parametrize(
    ("ending", "expected"),
    [
        ("sys.exit(3)", "answer exit handler\nteardown\n"),
        ("last.code = 3\nsys.exit(3)", "answer exit handler\n"),
        (  # a thread still working: Python waits for it before the exit handlers
            "threading.Thread(target=lambda: (threading.Event().wait(0.2), print('t'))).start()\n"
            "last.code = 3\nsys.exit(3)",
            "answer t\nexit handler\n",
        ),
    ],
    ids=["ordinary", "skipped", "thread-running"],
)
def test_exit_runs_the_handlers_and_flushes_but_skips_teardown(ending: str, expected: str) -> None:
    done = run_python(TEARDOWN_PROBE + ending)
    assert (done.stdout, done.stderr, done.returncode) == (expected, "", 3)


def test_di_code_exits_with_typers_code_flushed_without_teardown() -> None:
    code = TEARDOWN_PROBE.replace("last = SkipTeardown()\natexit.register(last)\n", "")
    code = code.replace('atexit.register(print, "exit handler")\n', "") + (
        "sys.argv = ['di-code', 'run', '--bogus']\nfrom di_code.cli.app import main\nmain()\n"
    )
    done = run_python(code)
    assert (done.stdout, done.returncode) == ("answer ", 2)  # flushed; no "teardown"
    assert "No such option: --bogus" in done.stderr


def plain_requirements(distribution: str, seen: set[str]) -> set[str]:
    """The installed distributions `pip install distribution` brings, without any extra."""
    for line in metadata.requires(distribution) or []:
        requirement = Requirement(line)
        name = requirement.name.lower().replace("_", "-")
        if name in seen or (requirement.marker and not requirement.marker.evaluate({"extra": ""})):
            continue
        seen.add(name)
        try:
            plain_requirements(name, seen)
        except metadata.PackageNotFoundError:  # not for this platform
            continue
    return seen


def test_the_plain_install_brings_no_click() -> None:
    """With click installed, every `import httpx` loads httpx's command line (click, pygments,
    rich's progress and syntax: ~90 modules, the largest part of `run`'s start-up). The MCP
    SDK, which needs uvicorn and so click, is therefore the `mcp` extra."""
    plain = plain_requirements("di-code", set())
    assert {"httpx", "rich", "typer"} <= plain
    assert "click" not in plain and "mcp" not in plain
