"""The pure parts of the HTTP glue: backoff, retry-after, error lines, lazy httpx import."""

from __future__ import annotations

import subprocess
import sys

import pytest

from di_code.ai.providers.http import error_line, refused_header, service_message
from di_code.ai.providers.openai import OpenAIProvider
from di_code.ai.providers.retry import RetryableError, RetryPolicy, parse_retry_after, with_retries
from di_code.ai.stream import ProviderError
from di_code.ai.types import Context, UserMessage
from tests.support.llm_server import LLMServer
from tests.support.streams import RecordingSleep, collect, model_for

CONTEXT = Context("be brief", [UserMessage.of("hi")])


def test_backoff_doubles_with_jitter_and_is_capped() -> None:
    plain = RetryPolicy(jitter=lambda: 0.0)
    assert [plain.backoff(n) for n in range(6)] == [1.0, 2.0, 4.0, 8.0, 16.0, 30.0]
    jittered = RetryPolicy(jitter=lambda: 1.0)
    assert jittered.backoff(0) == 1.25
    assert jittered.backoff(5) == 30.0


def test_retry_after_forms() -> None:
    assert parse_retry_after({"retry-after": "3"}) == 3.0
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:10 GMT"}, now=1445412480) == 10
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None
    assert parse_retry_after({"retry-after": "-5"}) == 0.0


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('{"error": {"message": "Incorrect API key", "type": "auth"}}', "Incorrect API key"),
        (
            '{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}',
            "Overloaded",
        ),
        ('{"error": "model not found"}', "model not found"),
        ('{"detail": "Not Found"}', "Not Found"),
        ('{"message": "bad\\nrequest"}', "bad request"),
        ("plain\r\ntext", "plain text"),
        ("[1, 2]", "[1, 2]"),
    ],
)
def test_service_message_shapes(body: str, message: str) -> None:
    assert service_message(body) == message


def test_error_line_falls_back_to_the_status_phrase() -> None:
    assert error_line(503, "") == "HTTP 503: Service Unavailable"
    assert error_line(599, "") == "HTTP 599: no details"
    assert len(error_line(500, "y" * 5000)) < 600


async def test_with_retries_stops_at_success() -> None:
    sleep = RecordingSleep()
    outcomes: list[Exception | None] = [RetryableError("x: one", 0.5), RetryableError("x: two")]

    async def attempt() -> None:
        if outcomes:
            raise outcomes.pop(0)  # type: ignore[misc]

    await with_retries(RetryPolicy(sleep=sleep, jitter=lambda: 0.0), attempt)
    assert sleep.delays == [0.5, 2.0]


async def test_with_retries_passes_final_errors_through() -> None:
    async def attempt() -> None:
        raise ProviderError("x: HTTP 400: no")

    with pytest.raises(ProviderError, match=r"^x: HTTP 400: no$"):
        await with_retries(RetryPolicy(sleep=RecordingSleep()), attempt)


def test_importing_the_providers_does_not_import_httpx() -> None:
    code = (
        "import sys, di_code.ai.providers as p, di_code.ai.providers.openai, "
        "di_code.ai.providers.anthropic, di_code.config.models\n"
        "assert 'httpx' not in sys.modules, 'httpx imported'\n"
        "assert set(p.PROVIDER_CLASSES) == {'openai-completions', 'anthropic-messages',"
        " 'openai-responses', 'google-generative-ai'}\n"
        "assert 'httpx' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("key", ["sk-secret\nmore", "sk-secret\r", "sk-secret ", "sk-\x00secret"])
async def test_a_refused_header_is_named_and_its_value_never_shown(
    llm_server: LLMServer, key: str
) -> None:
    """h11's own error quotes the value, and the value of a pasted key is a secret."""
    provider = OpenAIProvider(api_key=key, base_url=llm_server.openai_base_url)
    try:
        _, message = await collect(provider.stream(model_for("openai"), CONTEXT))
    finally:
        await provider.aclose()
    assert message.error_message is not None and "secret" not in message.error_message
    assert "'authorization' header holds characters HTTP does not allow" in message.error_message
    assert llm_server.requests == []  # refused before sending


def test_headers_http_allows_pass() -> None:
    assert refused_header({"authorization": "Bearer sk-a\tb", "x": ""}) is None
    assert refused_header({"ok": "v", "x-api-key": "v\n"}) == "x-api-key"
