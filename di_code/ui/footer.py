"""The footer lines: model, tokens in/out, cost and how full the context window is; the
permission mode at the bottom of the chat."""

from __future__ import annotations

from dataclasses import dataclass

from di_code.ai.types import Model, Usage


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
    """Summed over a session; `context` is the size of the last request and its answer."""

    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    context: int = 0

    def add(self, usage: Usage) -> None:
        sent = usage.input + usage.cache_read + usage.cache_write
        self.tokens_in += sent
        self.tokens_out += usage.output
        self.cost += usage.cost.total
        if sent or usage.output:
            self.context = sent + usage.output

    def footer(self, model: Model | None) -> str:
        parts = [model.id] if model else []
        parts.append(f"↑{short_count(self.tokens_in)} ↓{short_count(self.tokens_out)}")
        parts.append(format_cost(self.cost))
        if model and model.context_window:
            share = 100 * self.context / model.context_window
            parts.append(
                f"ctx {short_count(self.context)}/{short_count(model.context_window)}"
                f" ({share:.0f}%)"
            )
        return " · ".join(parts)


def mode_line(mode: str | None) -> str:
    """The chat's bottom line: the permission mode, and how to change it."""
    if mode is None:
        return " every tool runs without asking"
    if mode == "read-only":
        return " mode: read-only"
    return f" mode: {mode} · shift+tab to change"
