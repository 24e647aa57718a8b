"""One limit for every model request a prompt causes: the main agent's, its subagents' and
compaction's alike (`--max-turns`, `[limits] max_turns`).

A `RequestBudget` is counted where requests are made: `budget.wrap(provider)` gives a provider
whose every `stream()` takes one request from the budget, or, once the budget is spent, ends at
once in an error (`Turn limit reached (N)`) without sending anything. The session's providers
are all wrapped (di_code.config.provider_factory makes them, the Agent wraps what it is given), so a
subagent's provider, the parent's one reused, and compaction's request all count against the
same budget, however many run at once. The agent loop reads `exhausted` before a request only
to end the prompt cleanly (or ask the chat's question) instead of getting that error.

A prompt opens a scope (`with budget.prompt():`): the outermost one starts the count afresh, so a
subagent's prompt, nested in its parent's, shares the count instead of resetting it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from di_code.ai.message_builder import MessageBuilder
from di_code.ai.stream import AssistantMessageStream, Provider, StreamOptions, start_stream
from di_code.ai.types import Context, Model


def limit_message(limit: int) -> str:
    return f"Turn limit reached ({limit})"


class RequestBudget:
    """The model requests one prompt may still make; `limit` None: no limit."""

    def __init__(self, limit: int | None = None) -> None:
        self.limit = limit
        self.used = 0
        """Requests counted against the limit (the chat's "go on" starts it again)."""
        self.made = 0
        """Every request of the prompt (or since the budget was made, outside a prompt)."""
        self._open = 0

    @contextmanager
    def prompt(self) -> Iterator[RequestBudget]:
        """The scope of one prompt; nested scopes (a subagent's prompt) share its count."""
        if self._open == 0:
            self.used = self.made = 0
        self._open += 1
        try:
            yield self
        finally:
            self._open -= 1

    @property
    def exhausted(self) -> bool:
        return self.limit is not None and self.used >= self.limit

    def take(self) -> bool:
        """Count one request; False (nothing counted) when the limit is reached."""
        if self.exhausted:
            return False
        self.used += 1
        self.made += 1
        return True

    def grant_again(self) -> None:
        """As many requests again (the chat's question at the limit was answered yes)."""
        self.used = 0

    def wrap(self, provider: Provider) -> Provider:
        """`provider`, its every request counted against this budget."""
        if isinstance(provider, BudgetedProvider) and provider.budget is self:
            return provider
        return BudgetedProvider(provider, self)


class BudgetedProvider:
    """A provider whose requests are counted; a request past the limit is not sent."""

    def __init__(self, inner: Provider, budget: RequestBudget) -> None:
        self.inner = inner
        self.budget = budget

    def stream(
        self, model: Model, context: Context, options: StreamOptions | None = None
    ) -> AssistantMessageStream:
        if self.budget.take():
            return self.inner.stream(model, context, options)
        message = limit_message(self.budget.limit or 0)

        async def refuse(builder: MessageBuilder) -> None:
            builder.fail("error", message)

        return start_stream(model, refuse, options.signal if options else None)

    async def aclose(self) -> None:
        aclose = getattr(self.inner, "aclose", None)
        if aclose is not None:
            await aclose()
