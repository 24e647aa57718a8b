"""What fetch makes of a page's bytes, against a real HTTP server on loopback: only the usual
text encodings are honoured (a page cannot pick Python's quadratic punycode decoder), a page
that is one long line is shown up to the limit instead of as nothing, and turning a large
page into text leaves the event loop free."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from di_code.tools.builtin import fetch
from di_code.tools.builtin.fetch import FetchTool
from di_code.tools.builtin.support.truncation import MAX_BYTES
from tests.support.web_site import Site, serve_site
from tests.tools.conftest import run, text_of

TOOL = FetchTool(frozenset({"127.0.0.1"}))


@pytest.fixture
def site() -> Iterator[str]:
    Site.pages.clear()
    yield from serve_site()
    Site.pages.clear()


async def fetched(site: str, kind: str, body: bytes) -> str:
    Site.pages["/p"] = (kind, body)
    return text_of(await run(TOOL, {"url": f"{site}/p"}))


@pytest.mark.parametrize("label", ["punycode", "rot13", "utf-7", "idna", "base64", "zlib"])
async def test_a_charset_outside_the_text_encodings_is_read_as_utf8(site: str, label: str) -> None:
    text = await fetched(site, f"text/plain; charset={label}", "café-x+AGEA-y\n".encode())
    assert "café-x+AGEA-y" in text


@pytest.mark.parametrize(
    ("label", "codec"),
    [("windows-1251", "cp1251"), ("KOI8-R", "koi8-r"), ('"shift_jis"', "shift_jis")],
)
async def test_the_text_encodings_are_honoured(site: str, label: str, codec: str) -> None:
    words = "Привет" if codec != "shift_jis" else "こんにちは"
    text = await fetched(site, f"text/plain; charset={label}", words.encode(codec))
    assert words in text


async def test_a_page_that_is_one_long_json_line_is_shown_up_to_the_limit(site: str) -> None:
    data = json.dumps({f"key{n}": "v" * 60 for n in range(1000)}).encode()
    assert len(data) > 70_000 and b"\n" not in data
    text = await fetched(site, "application/json", data)
    assert "Showing the first 0 lines" not in text
    body = text.split("\n\n", 1)[1]
    assert body.startswith('{"key0": "' + "v" * 60)
    shown = body.rsplit("\n", 1)[0]
    assert MAX_BYTES - 100 < len(shown.encode()) <= MAX_BYTES
    assert text.endswith(
        "[Cut at the 50 KB limit: showing lines 1-1 of 1, the last one cut short.]"
    )


async def test_a_paragraph_after_a_title_fills_the_limit(site: str) -> None:
    page = "<html><body><h1>Title</h1><p>" + "word " * 12_500 + "</p></body></html>"
    text = await fetched(site, "text/html; charset=utf-8", page.encode())
    assert "# Title" in text and "word word" in text
    assert len(text.encode()) > MAX_BYTES - 1000


async def test_a_large_page_is_turned_into_text_off_the_event_loop(
    site: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page's conversion (0.7-1.9 s for this one) runs on a thread that is not the
    loop's: the real conversion, its thread noted (not a clock's verdict on a loaded machine)."""
    rows = "".join(
        f"<tr><td>{n}</td><td><b>cell</b> <a href='/x{n}'>link</a></td></tr>" for n in range(25_000)
    )
    page = f"<html><body><table>{rows}</table></body></html>".encode()
    threads: list[int] = []
    real = fetch.page_result

    def noted(*args: Any, **kwargs: Any) -> Any:
        threads.append(threading.get_ident())
        return real(*args, **kwargs)

    monkeypatch.setattr(fetch, "page_result", noted)
    text = await fetched(site, "text/html; charset=utf-8", page)
    assert "cell" in text
    assert len(threads) == 1 and threads[0] != threading.get_ident()  # not the loop's thread
