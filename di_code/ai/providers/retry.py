"""Retries for the provider requests (README, Reliability): which failures are worth another
attempt, how long to wait (the server's Retry-After, else exponential back-off with jitter), and
when to give up."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from email.utils import parsedate_to_datetime

import msgspec

from di_code.ai.stream import ProviderError

TRANSIENT_5XX = frozenset({502, 503, 504, 529})
"""Gateway and overload answers: the same body again is normal, so they are always retried.
Any other 5xx that comes back with the same body twice is a server bug that will repeat."""


def is_retryable_status(status: int) -> bool:
    return status in (408, 409, 429) or 500 <= status <= 599


class RetryableError(ProviderError):
    """A failure worth another attempt; `retry_after` is the server's own wait, if it gave one.
    `repeat_key` (status and body) set means: the same key twice is final, not worth a third."""

    def __init__(
        self, message: str, retry_after: float | None = None, repeat_key: str | None = None
    ) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.repeat_key = repeat_key


async def _sleep(seconds: float) -> None:
    await asyncio.sleep(seconds)


class RetryPolicy(msgspec.Struct, frozen=True):
    """The retry limits; `sleep` and `jitter` are injectable so tests wait no real seconds."""

    max_retries: int = 4
    base_delay: float = 1.0
    max_delay: float = 30.0
    max_retry_after: float = 60.0
    sleep: Callable[[float], Awaitable[None]] = _sleep
    jitter: Callable[[], float] = random.random

    def backoff(self, retry: int) -> float:
        """1 s, 2 s, 4 s, ... plus up to 25 % jitter, never above `max_delay`."""
        return min(self.max_delay, self.base_delay * 2.0**retry * (1 + 0.25 * self.jitter()))


OnRetry = Callable[[int, int, float, str], None]
"""Told (retry number, max retries, delay in seconds, reason) before each backoff sleep."""


async def with_retries(
    policy: RetryPolicy, attempt: Callable[[], Awaitable[None]], on_retry: OnRetry | None = None
) -> None:
    """Run `attempt` until it succeeds, fails for good, or the retries are used up.

    An abort cancels the task, and with it the backoff sleep, at once. `on_retry` lets the
    stream report the wait (a `retry` event), so a UI is never blank while it backs off."""
    retries = 0
    previous: str | None = None
    while True:
        try:
            await attempt()
            return
        except RetryableError as exc:
            if exc.repeat_key is not None and exc.repeat_key == previous:
                raise ProviderError(f"{exc} (the same error twice: not retried again)") from exc
            previous = exc.repeat_key
            delay = exc.retry_after if exc.retry_after is not None else policy.backoff(retries)
            if delay > policy.max_retry_after:
                raise ProviderError(
                    f"{exc} (the server asks to wait {delay:.0f} s, "
                    f"over the {policy.max_retry_after:.0f} s limit)"
                ) from exc
            if retries >= policy.max_retries:
                raise ProviderError(f"{exc} (gave up after {retries} retries)") from exc
            retries += 1
            if on_retry is not None:
                on_retry(retries, policy.max_retries, delay, str(exc))
            await policy.sleep(delay)


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds to wait from `retry-after-ms` or `retry-after` (seconds or an HTTP date)."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError):
        return None
    return max(0.0, when - (time.time() if now is None else now))
