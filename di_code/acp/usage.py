"""Token usage for the editor: after each model response, how full the context window is
(`usage_update`, with the session's cost when the model is priced), and with each prompt's
answer the tokens that prompt used."""

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

    def start_prompt(self) -> None:
        self.turn = types.Usage()

    def add(self, usage: types.Usage, context_window: int) -> UsageUpdate:
        """One response's usage counted; the update that says how full the context is."""
        self.turn = self.turn + usage
        self.cost += usage.cost.total
        spent = Cost(amount=self.cost, currency="USD") if self.cost else None
        return UsageUpdate(
            session_update="usage_update",
            used=usage.context,
            size=context_window,
            cost=spent,
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
