"""The fetch tool against a real HTTP server on loopback: HTML as Markdown, same-host redirects
followed and others named, the size cap, binary refused, private addresses refused unless a
rule names the host. (The permission rules for hosts: tests/cli/test_run_fetch.py.)"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from di_code.tools.builtin.cards import FETCH_MAX_BYTES
from di_code.tools.builtin.fetch import FetchTool
from tests.support.web_site import BIG, Site, serve_site
from tests.tools.conftest import error_of, run, text_of


@pytest.fixture
def site() -> Iterator[str]:
    yield from serve_site()


ALLOWED = FetchTool(frozenset({"127.0.0.1", "localhost"}))


async def test_html_comes_back_as_markdown_without_its_scripts(site: str) -> None:
    text = text_of(await run(ALLOWED, {"url": f"{site}/page"}))
    assert text.startswith(f"[200 {site}/page]")
    assert "# Install" in text and "`pip install x`" in text and "**relax**" in text
    assert "steal()" not in text


async def test_text_is_kept_as_it_is(site: str) -> None:
    assert text_of(await run(ALLOWED, {"url": f"{site}/notes"})).endswith("line one\nline two")


async def test_a_redirect_on_the_same_host_is_followed(site: str) -> None:
    result = await run(ALLOWED, {"url": f"{site}/hop"})
    assert "# Install" in text_of(result) and result.details["url"] == f"{site}/page"


async def test_a_redirect_to_another_host_is_named_not_followed(site: str) -> None:
    message = await error_of(ALLOWED, {"url": f"{site}/away"})
    assert "redirects to another host" in message and "http://localhost:" in message


async def test_endless_redirects_stop(site: str) -> None:
    assert "Too many redirects" in await error_of(ALLOWED, {"url": f"{site}/loop"})


async def test_binary_content_is_refused(site: str) -> None:
    assert "image/png" in await error_of(ALLOWED, {"url": f"{site}/image"})


async def test_a_large_body_stops_at_the_cap_without_reading_the_rest(site: str) -> None:
    Site.sent.clear()
    result = await run(ALLOWED, {"url": f"{site}/big"})
    assert result.details["cut"] is True and result.details["bytes"] == FETCH_MAX_BYTES
    assert f"Only the first {FETCH_MAX_BYTES} bytes were read" in text_of(result)
    for _ in range(100):
        if Site.sent:
            break
        threading.Event().wait(0.05)
    assert Site.sent and Site.sent[0] < BIG  # the server could not send it all


async def test_a_private_address_is_refused_unless_a_rule_names_the_host(site: str) -> None:
    message = await error_of(FetchTool(), {"url": f"{site}/page"})
    assert "private or local address" in message and '"fetch:127.0.0.1"' in message


async def test_only_http_urls(site: str) -> None:
    assert "Only http://" in await error_of(ALLOWED, {"url": "file:///etc/passwd"})


async def test_a_url_holding_a_key_di_code_holds_is_not_fetched(site: str) -> None:
    """Issue 40.6: a key goes only to its provider, not in a URL the model fetches (nor in a
    piece of one)."""
    from di_code.ai.redaction import register

    key = "sk-proj-the-key-in-a-url-0123456789"
    register(key)
    for url in (f"{site}/notes?k={key}", f"{site}/{key[3:20]}/notes"):
        message = await error_of(ALLOWED, {"url": url})
        assert message.startswith("Not fetched: the URL holds a key"), message
    assert text_of(await run(ALLOWED, {"url": f"{site}/notes"})).endswith("line two")
