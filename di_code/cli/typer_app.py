"""The Typer app: the commands, their options and help.

`di_code.cli.app.main` hands it every command line but a lone `--version`. Heavy modules
(httpx, jsonschema, rich.markdown, prompt_toolkit) are imported inside the commands. How their
errors exit is di_code.cli.guarded's: a user error is one line on stderr and exit code 2; an
unexpected error is one line and exit 1, with the traceback only under `--verbose`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Annotated

import typer
from typer.main import get_command_name

from di_code.cli import version_line
from di_code.cli.guarded import click_module, guarded
from di_code.cli.options import with_common_options
from di_code.setup.flags import CliOptions


def _typer() -> typer.Typer:
    """An empty app with di-code's settings: the whole app below, or one command's."""
    return typer.Typer(
        name="di-code",
        help="di-code: a terminal coding agent.",
        rich_markup_mode=None,
        pretty_exceptions_enable=False,
        no_args_is_help=True,
    )


app = _typer()
COMMANDS: dict[str, Callable[..., None]] = {}
"""The top-level commands by name (`mcp`, a group, is not one): `run_app` parses a command
line that starts with one of them with an app that holds only it."""


def command(body: Callable[..., None]) -> Callable[..., None]:
    """`@app.command()`, the command also kept in COMMANDS under the name Typer gives it."""
    app.command()(body)
    COMMANDS[get_command_name(body.__name__)] = body
    return body


def _version(value: bool) -> None:
    if value:
        print(version_line())
        raise typer.Exit()


@app.callback()
def root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Show the version."),
    ] = False,
) -> None:
    """di-code: a terminal coding agent. The model proposes tool calls; di-code runs them."""


@command
@with_common_options
def run(
    prompt: Annotated[
        str | None,
        typer.Argument(
            metavar="PROMPT", help="The prompt; - reads stdin; piped stdin is appended."
        ),
    ] = None,
    output_format: Annotated[
        str, typer.Option("--output-format", metavar="FORMAT", help="text | json | stream-json.")
    ] = "text",
    image: Annotated[
        list[str] | None,
        typer.Option("--image", metavar="FILE", help="Attach an image (repeatable); or @FILE."),
    ] = None,
    *,
    options: CliOptions,
) -> None:
    """Run one prompt and print the answer."""

    def body() -> int:
        from di_code.cli.run import run_command

        return run_command(prompt, output_format, options, tuple(image or ()))

    raise typer.Exit(guarded(body, options))


@command
@with_common_options
def review(
    base: Annotated[
        str | None,
        typer.Option("--base", metavar="BRANCH", help="Review this branch against BRANCH."),
    ] = None,
    commit: Annotated[
        str | None, typer.Option("--commit", metavar="SHA", help="Review one commit.")
    ] = None,
    output_format: Annotated[
        str, typer.Option("--output-format", metavar="FORMAT", help="text | json (findings).")
    ] = "text",
    *,
    options: CliOptions,
) -> None:
    """Review the uncommitted changes (or a branch, or a commit), reading only."""

    def body() -> int:
        from di_code.cli.review_command import review_command

        return review_command(base, commit, output_format, options)

    raise typer.Exit(guarded(body, options))


@command
@with_common_options
def chat(*, options: CliOptions) -> None:
    """Start the interactive REPL."""

    def body() -> int:
        from di_code.cli.chat import run_chat

        return run_chat(options)

    raise typer.Exit(guarded(body, options))


@command
@with_common_options
def acp(
    log: Annotated[
        str | None, typer.Option("--log", metavar="FILE", help="Write the log to FILE.")
    ] = None,
    *,
    options: CliOptions,
) -> None:
    """Run as an Agent Client Protocol agent for an editor, on stdin and stdout."""

    def body() -> int:
        from di_code.cli.acp_command import acp_command

        return acp_command(options, log)

    raise typer.Exit(guarded(body, options))


@command
def trust(
    folder: Annotated[
        str | None, typer.Argument(metavar="FOLDER", help="The project (default: here).")
    ] = None,
    show: Annotated[bool, typer.Option("--list", help="List the trusted projects.")] = False,
    revoke: Annotated[bool, typer.Option("--revoke", help="Stop trusting the project.")] = False,
) -> None:
    """Trust the project's settings file as it is now.

    From then on its .di-code/config.toml may set providers, key variables, the permission
    mode, allow rules and everything else that needs trust; a change to the file undoes it."""

    def body() -> int:
        from pathlib import Path

        from di_code.config.settings import di_code_home
        from di_code.config.trust import revoke_project, trusted_lines
        from di_code.config.trusting import trust_project
        from di_code.system.safe_text import visible

        home, where = di_code_home(), Path(folder or ".")
        if show:
            lines = trusted_lines(home)
        else:
            lines = [revoke_project(home, where) if revoke else trust_project(home, where)]
        print(visible("\n".join(lines)))
        return 0

    raise typer.Exit(guarded(body, CliOptions()))


@command
def batch(
    tasks: Annotated[str, typer.Argument(metavar="TASKS", help="The task file (JSON lines).")],
    out: Annotated[str, typer.Option("--out", metavar="FILE", help="The results file.")],
    jobs: Annotated[
        int | None, typer.Option(min=1, metavar="N", help="Tasks at a time (default: CPUs).")
    ] = None,
    timeout: Annotated[
        float | None, typer.Option(min=0.001, metavar="SECONDS", help="Each task's time limit.")
    ] = None,
    keep: Annotated[bool, typer.Option("--keep", help="Keep the tasks' checkouts.")] = False,
    retry: Annotated[
        str | None, typer.Option(metavar="failed", help="Run failed tasks again.")
    ] = None,
    events: Annotated[bool, typer.Option("--events", help="JSON events on stdout.")] = False,
    max_requests: Annotated[
        int | None, typer.Option(min=1, metavar="N", help="Model requests at a time, per provider.")
    ] = None,
    ray: Annotated[
        str | None, typer.Option(metavar="auto|ADDRESS", help="Run on a Ray cluster.")
    ] = None,
    ray_timeout: Annotated[
        float | None,
        typer.Option(min=0.001, metavar="SECONDS", help="To join the Ray cluster (default 30)."),
    ] = None,
    ray_env: Annotated[
        list[str] | None,
        typer.Option(metavar="NAME", help="Forward this variable to the Ray tasks (repeatable)."),
    ] = None,
    workdir: Annotated[
        str | None, typer.Option(metavar="DIR", help="Checkouts and logs (default OUT.work).")
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", "-m", metavar="MODEL", help="Unless a task names one.")
    ] = None,
    provider: Annotated[str | None, typer.Option(metavar="NAME", help="Provider name.")] = None,
    base_url: Annotated[
        str | None, typer.Option(metavar="URL", help="Override the provider's URL.")
    ] = None,
    permission_mode: Annotated[
        str, typer.Option(metavar="MODE", help="Unless a task names one (default auto).")
    ] = "auto",
    max_turns: Annotated[
        int | None, typer.Option(min=1, metavar="N", help="Unless a task names one.")
    ] = None,
    tools: Annotated[
        str | None, typer.Option(metavar="LIST", help="Unless a task names them.")
    ] = None,
    verbose: Annotated[bool, typer.Option("--verbose", help="Show tracebacks.")] = False,
) -> None:
    """Run many tasks, each in its own checkout; results to a JSON-lines file (resumable)."""
    from di_code.cli.batch_command import BatchOptions, batch_command

    chosen = BatchOptions(
        tasks, out, jobs, timeout, keep, retry, events, max_requests, ray, ray_timeout,
        tuple(ray_env or ()), workdir, model, provider, base_url, permission_mode, max_turns, tools,
    )  # fmt: skip
    raise typer.Exit(guarded(lambda: batch_command(chosen), CliOptions(verbose=verbose)))


mcp_app = typer.Typer(help="MCP servers: what is configured and whether it starts.")
app.add_typer(mcp_app, name="mcp")


@mcp_app.command("list")
def mcp_list() -> None:
    """Start the configured MCP servers, list them with their state and tools, stop them."""

    def body() -> int:
        import asyncio

        from di_code.cli.output import notify_stderr
        from di_code.setup.mcp import mcp_status_lines
        from di_code.system.safe_text import visible  # a server's name, tools and errors

        print(visible("\n".join(asyncio.run(mcp_status_lines(notify_stderr)))))
        return 0

    raise typer.Exit(guarded(body, CliOptions()))


@command
def lsp() -> None:
    """List the language servers: configured or found on PATH, and those missing (with the
    command that installs each)."""

    def body() -> int:
        from di_code.setup.lsp import lsp_status_lines
        from di_code.system.safe_text import visible  # names and commands from config files

        print(visible("\n".join(lsp_status_lines())))
        return 0

    raise typer.Exit(guarded(body, CliOptions()))


@command
def undo(
    session: Annotated[
        str | None, typer.Option(metavar="ID", help="Undo in this session, not the newest.")
    ] = None,
    list_checkpoints: Annotated[
        bool, typer.Option("--list", help="List the session's checkpoints.")
    ] = False,
    to: Annotated[
        int | None, typer.Option(min=1, metavar="N", help="Go back to before prompt N.")
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Overwrite files changed since the agent did.")
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", help="Undo without asking (for scripts).")] = False,
) -> None:
    """Restore the files the newest prompt changed (bash's changes too, inside git)."""
    from di_code.cli.undo import undo_command

    body = lambda: undo_command(session, list_checkpoints, to, force, yes)  # noqa: E731
    raise typer.Exit(guarded(body, CliOptions()))


@command
def export(
    session: Annotated[
        str | None,
        typer.Argument(metavar="[SESSION]", help="N from /resume, an id or id prefix."),
    ] = None,
    output_format: Annotated[
        str,
        typer.Option("--format", "-f", metavar="html|md|json", help="What to write."),
    ] = "html",
    output: Annotated[
        Path | None, typer.Option("--output", "-o", metavar="FILE", help="Write to FILE.")
    ] = None,
) -> None:
    """Export a session (this folder's newest by default) as HTML, Markdown or JSON."""

    def body() -> int:
        from di_code.cli.export_command import export_command
        from di_code.config.settings import ConfigError
        from di_code.ui.export import FORMATS

        if output_format not in FORMATS:
            raise ConfigError(f"--format must be one of {', '.join(FORMATS)}")
        return export_command(session, output_format, output)

    raise typer.Exit(guarded(body, CliOptions()))


def run_app() -> int:
    """Parse the command line and run its command; the exit code. What click itself refuses
    before a command's body runs (an option out of its range, an unknown option or command)
    ends in `guarded` too: one line and exit 2, not click's usage block. A bare `di-code`
    still shows the help."""
    click = click_module()
    no_args_is_help = getattr(click.exceptions, "NoArgsIsHelpError", ())  # click < 8.2: none
    try:
        code = _parser(sys.argv[1:])(standalone_mode=False)
    except no_args_is_help as help_asked:
        help_asked.show()
        return int(help_asked.exit_code)
    except click.ClickException as refused:
        return guarded(partial(_raise, refused), CliOptions())
    return code if isinstance(code, int) else 0


def _parser(args: Sequence[str]) -> typer.Typer:
    """The app that parses `args`. Typer turns every command an app holds into a click command
    before it parses anything, and in a fresh process that took ~30 times as long for all of
    them as for `run` alone (docs/benchmarks.md), all of it before `run`'s first request: a
    line that starts with a top-level command's name is parsed by an app with the same root
    and that command only, which gives the same help, errors and result; any other line (the
    root's help and options, `mcp`, a mistyped name) by the whole app."""
    body = COMMANDS.get(args[0]) if args else None
    if body is None:
        return app
    one = _typer()
    one.callback()(root)
    one.command()(body)
    return one


def _raise(error: Exception) -> int:
    raise error
