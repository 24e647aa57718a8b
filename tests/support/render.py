"""The chat's renderers drawn on a Rich console of fixed width, read back as text."""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console, RenderableType

from di_code.agent import (
    Agent,
)
from di_code.ai.providers.faux import create_faux_provider
from di_code.ui.render import Renderer


def make_console() -> Console:
    """Rich's clock stopped at 0, so spinners draw their first frame."""
    return Console(file=io.StringIO(), width=80, color_system=None, get_time=lambda: 0.0)


def lines_of(console: Console) -> list[str]:
    return [line.rstrip() for line in console.file.getvalue().splitlines()]  # type: ignore[attr-defined]


async def render_prompt(
    responses: list[dict[str, Any]], tools: list[Any], *, compact: bool = False
) -> list[str]:
    faux = create_faux_provider(responses)
    console = make_console()
    agent = Agent(faux.provider, faux.model, tools)
    agent.subscribe(Renderer(console, model=faux.model, clock=lambda: 0.0, compact=compact))
    await agent.prompt("list files")
    return lines_of(console)


def render_text(renderable: RenderableType) -> list[str]:
    console = make_console()
    console.print(renderable)
    return lines_of(console)
