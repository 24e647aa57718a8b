"""The footer lines: model, tokens in/out, cost and how full the context window is; the
permission mode, the MCP servers ready and the background jobs running at the bottom of the
chat."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from di_code.ai.reply_notes import usage_known
from di_code.ai.types import Model, Usage

if TYPE_CHECKING:
    from di_code.setup.prepared import Prepared


def short_count(count: int) -> str:
    if count < 1000:
        return str(count)
    if count < 1_000_000:
        return f"{count / 1000:.1f}k".replace(".0k", "k")
    return f"{count / 1_000_000:.1f}M".replace(".0M", "M")


def format_cost(dollars: float) -> str:
    return f"${dollars:.4f}" if dollars < 1 else f"${dollars:.2f}"


@dataclass(slots=True)
class UsageTotals:
    """Summed over a session; `context` is the size of the last request and its answer.
    Replies whose server reported no usage are counted in `unknown`, never as zero tokens:
    the footer then shows `?` (nothing known) or `≥` (a lower bound). A reply cut short (an
    abort, an error) has no usage either, but that says nothing of the server: its figures
    are marked until the next whole reply, then shown plain again."""

    total: Usage = field(default_factory=Usage)
    context: int | None = 0
    unknown: int = 0
    cut_short: bool = False

    def add(self, usage: Usage, *, cut_short: bool = False) -> None:
        if not usage_known(usage):
            if cut_short:
                self.cut_short = True
            else:
                self.unknown += 1
            self.context = None
            return
        self.cut_short = False
        self.total += usage
        self.add_context(usage)

    @property
    def _marked(self) -> bool:
        return bool(self.unknown) or self.cut_short

    def add_elsewhere(self, usage: Usage) -> None:
        """Tokens spent in another context (a subagent's): counted, the context unchanged."""
        self.total += usage

    def add_context(self, usage: Usage) -> None:
        """The context is as big as the last request and its answer (a resumed session's
        size comes from its last answer)."""
        if usage.context:
            self.context = usage.context

    def _count(self, tokens: int) -> str:
        if not self._marked:
            return short_count(tokens)
        return f"≥{short_count(tokens)}" if tokens else "?"

    def _cost(self, model: Model | None) -> str:
        """A free model (a local one) costs $0 whatever the usage; a priced one is unknown."""
        dollars = self.total.cost.total
        priced = model is not None and (model.cost.input or model.cost.output)
        if not (self._marked and priced):
            return format_cost(dollars)
        return f"≥{format_cost(dollars)}" if dollars else "$?"

    def footer(self, model: Model | None) -> str:
        parts = [model.id] if model else []
        parts.append(f"↑{self._count(self.total.sent)} ↓{self._count(self.total.output)}")
        parts.append(self._cost(model))
        if model and model.context_window:
            window = short_count(model.context_window)
            if self.context is None:
                parts.append(f"ctx ?/{window}")
            else:
                share = 100 * self.context / model.context_window
                parts.append(f"ctx {short_count(self.context)}/{window} ({share:.0f}%)")
        return " · ".join(parts)


def mode_line(mode: str | None) -> str:
    """The chat's bottom line: the permission mode, and how to change it."""
    if mode is None:
        return " every tool runs without asking"
    if mode == "read-only":
        return " mode: read-only"
    return f" mode: {mode} · shift+tab to change"


def bottom_line(setup: Prepared) -> str:
    """The chat's bottom line: the mode, the thinking level, then `mcp: 1/2 ready`, then
    `jobs: 2 running`."""
    gate, servers, jobs = setup.gate, setup.mcp, setup.jobs
    line = mode_line(None if gate is None else gate.mode)
    line = f"{line} · thinking: {setup.agent.options.reasoning}"
    if servers is not None and servers.servers:
        line = f"{line} · {servers.progress()}"
    running = None if jobs is None else jobs.status()
    return line if running is None else f"{line} · {running}"
