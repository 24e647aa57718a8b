"""Token usage for the editor: at the end of each prompt, how full the context window is
(`usage_update`, with the session's cost when the model is priced) and the tokens the
prompt used (in its answer). Once per prompt, not per model response: a tool loop of many
turns costs the editor one more message, not one per turn."""

from __future__ import annotations

from dataclasses import dataclass, field

from acp.schema import Cost, Usage, UsageUpdate

from di_code.ai import types


@dataclass
class SessionUsage:
    turn: types.Usage = field(default_factory=types.Usage)
    """This prompt's requests, summed."""
    cost: float = 0.0
    """The session's cost so far (US dollars), as far as this process has seen it."""
    context: int = 0
    """Tokens in the context after the last response."""

    def start_prompt(self) -> None:
        self.turn = types.Usage()

    def add(self, usage: types.Usage) -> None:
        """One model response's usage counted."""
        self.turn = self.turn + usage
        self.cost += usage.cost.total
        self.context = usage.context

    def update(self, context_window: int) -> UsageUpdate:
        """How full the context is after the last response, and the session's cost."""
        spent = Cost(amount=self.cost, currency="USD") if self.cost else None
        return UsageUpdate(
            session_update="usage_update", used=self.context, size=context_window, cost=spent
        )

    def of_prompt(self) -> Usage | None:
        """This prompt's tokens for `session/prompt`'s answer (None: nothing was sent)."""
        used = self.turn
        total = used.input + used.output + used.cache_read + used.cache_write
        if not total:
            return None
        return Usage(
            total_tokens=total,
            input_tokens=used.input,
            output_tokens=used.output,
            cached_read_tokens=used.cache_read or None,
            cached_write_tokens=used.cache_write or None,
        )
