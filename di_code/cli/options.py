"""The options `run` and `chat` share, declared once for Typer and gathered in `CliOptions`.

`with_common_options` adds the shared parameters to a command's signature (Typer reads
signatures), and hands the command one `CliOptions` instead of seventeen arguments.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Annotated, Any

import typer

from di_code.setup.flags import CliOptions, options_from


def _common(
    model: Annotated[
        str | None,
        typer.Option(
            "--model", "-m", metavar="MODEL", help="PROVIDER/ID, or an ID with --provider."
        ),
    ] = None,
    provider: Annotated[
        str | None,
        typer.Option(metavar="NAME", help="Provider name (openai, anthropic, ollama, ...)."),
    ] = None,
    base_url: Annotated[
        str | None, typer.Option(metavar="URL", help="Override the provider's URL.")
    ] = None,
    api_key: Annotated[
        str | None, typer.Option(metavar="KEY", help="API key (else from env).")
    ] = None,
    thinking: Annotated[bool, typer.Option("--thinking", help="Ask for reasoning.")] = False,
    permission_mode: Annotated[
        str | None,
        typer.Option(
            metavar="MODE", help="ask | accept-edits | auto | read-only | plan (default ask)."
        ),
    ] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Same as --permission-mode auto.")] = (
        False
    ),
    sandbox: Annotated[
        str | None,
        typer.Option(
            metavar="MODE",
            help="Run bash in bubblewrap: off | workspace-write | read-only "
            "(default workspace-write in auto mode when bubblewrap works, else off).",
        ),
    ] = None,
    tools: Annotated[
        str | None, typer.Option(metavar="LIST", help="Only these tools, e.g. read,grep.")
    ] = None,
    add_dir: Annotated[
        list[str] | None, typer.Option(metavar="DIR", help="Another folder the tools may use.")
    ] = None,
    max_turns: Annotated[
        int | None, typer.Option(min=1, metavar="N", help="Stop after N requests.")
    ] = None,
    context_window: Annotated[
        int | None,
        typer.Option(
            min=1, metavar="TOKENS", help="The model's context window, if di-code's is wrong."
        ),
    ] = None,
    system_prompt: Annotated[
        str | None, typer.Option(metavar="TEXT", help="Replace the system prompt (text or file).")
    ] = None,
    append_system_prompt: Annotated[
        str | None, typer.Option(metavar="TEXT", help="Add to the system prompt (text or file).")
    ] = None,
    continue_session: Annotated[
        bool, typer.Option("--continue", "-c", help="Resume this folder's newest session.")
    ] = False,
    session: Annotated[
        str | None, typer.Option(metavar="ID", help="Resume the session with this id.")
    ] = None,
    fork: Annotated[
        bool,
        typer.Option(
            "--fork", help="With --continue or --session: go on in a new session (a copy)."
        ),
    ] = False,
    no_session: Annotated[bool, typer.Option("--no-session", help="Do not save a session.")] = (
        False
    ),
    verbose: Annotated[bool, typer.Option("--verbose", help="Show tracebacks.")] = False,
) -> None:
    """Template: its signature is the shared option set."""


_COMMON_PARAMS = list(inspect.signature(_common, eval_str=True).parameters.values())
_NAMES = list(CliOptions._fields)
assert [param.name for param in _COMMON_PARAMS] == _NAMES


def with_common_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Give `command(own args..., options: CliOptions)` the shared Typer options."""
    own = [p for p in inspect.signature(command, eval_str=True).parameters.values()]
    own = [p for p in own if p.name != "options"]

    @functools.wraps(command)
    def wrapper(**kwargs: Any) -> Any:
        common = {name: kwargs.pop(name) for name in _NAMES}
        return command(**kwargs, options=options_from(common))

    wrapper.__signature__ = inspect.Signature([*own, *_COMMON_PARAMS])  # type: ignore[attr-defined]
    wrapper.__annotations__ = {}
    return wrapper
