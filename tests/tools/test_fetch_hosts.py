"""Host rules for fetch judge the host, not its spelling: every spelling IDNA maps to one name
is that name, a URL whose host cannot be named (a NUL, a control character, a bad label) is
invalid, and the name the rules judged is the one resolved and connected to. The resolver is
the tool's seam, answered with the loopback address of a real server the test starts."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from di_code.tools.builtin.fetch import FetchTool
from di_code.tools.policy.permissions import PermissionRules
from tests.support.web_site import serve_site
from tests.tools.conftest import error_of, run, text_of

PASTEBIN_SPELLINGS = [
    "https://pastebin.com./raw/x",
    "https://sub.pastebin.com./raw/x",
    "https://pastebin.com.:443/raw/x",
    "https://pastebin\u3002com/raw/x",
    "https://\uff50\uff41\uff53\uff54\uff45\uff42\uff49\uff4e\uff0e\uff43\uff4f\uff4d/raw/x",
    "https://PasteBin.COM/raw/x",
    "https://user@pastebin.com/raw/x",
]


@pytest.fixture
def site() -> Iterator[str]:
    yield from serve_site()


class Lookups:
    """A resolver that answers every name with 127.0.0.1 (where the test's site listens) and
    keeps the names it was asked."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, int]] = []

    async def __call__(self, host: str, port: int) -> list[str]:
        self.asked.append((host, port))
        return ["127.0.0.1"]


@pytest.mark.parametrize("url", PASTEBIN_SPELLINGS)
def test_a_deny_rule_covers_every_spelling_of_its_host(url: str) -> None:
    rules = PermissionRules.parse(deny=["fetch:pastebin.com"])
    assert rules.decide("fetch", {"url": url}) == "deny"


@pytest.mark.parametrize("rule", ["fetch:PASTEBIN.com.", "fetch:pastebin\u3002com"])
def test_a_rules_own_host_is_normalised_the_same_way(rule: str) -> None:
    rules = PermissionRules.parse(deny=[rule])
    assert rules.decide("fetch", {"url": "https://pastebin.com/x"}) == "deny"


@pytest.mark.parametrize(
    "url",
    [
        "http://localhost\0.example.org/",
        "http://localhost\x01.example.org/",
        "http://localhost .example.org/",
        "http://evil%2e.example.org/",
        "http://a..example.org/",
        "http://example.org:0/",
        "http://-a.example.org/",
    ],
)
def test_an_allow_rule_never_covers_a_host_that_cannot_be_named(url: str) -> None:
    rules = PermissionRules.parse(allow=["fetch:example.org"])
    assert rules.decide("fetch", {"url": url}) is None


async def test_a_nul_in_the_host_is_an_invalid_url_and_nothing_is_looked_up() -> None:
    lookups = Lookups()
    tool = FetchTool(frozenset({"example.org"}), resolver=lookups)
    message = await error_of(tool, {"url": "http://localhost\0.example.org/"})
    assert message.startswith("Invalid URL")
    assert lookups.asked == []


async def test_the_name_the_rules_judged_is_the_one_resolved_and_asked_for(site: str) -> None:
    port = int(site.rsplit(":", 1)[1])
    lookups = Lookups()
    tool = FetchTool(frozenset({"localhost"}), resolver=lookups)
    result = await run(tool, {"url": f"http://LocalHost.:{port}/notes"})
    assert text_of(result).endswith("line one\nline two")
    assert lookups.asked == [("localhost", port)]
    assert result.details["url"] == f"http://localhost:{port}/notes"


async def test_a_numeric_host_is_its_address_for_the_rules_and_the_check(site: str) -> None:
    port = int(site.rsplit(":", 1)[1])
    rules = PermissionRules.parse(deny=["fetch:127.0.0.1"])
    assert rules.decide("fetch", {"url": f"http://2130706433:{port}/notes"}) == "deny"
    assert rules.decide("fetch", {"url": f"http://0x7f.1:{port}/notes"}) == "deny"
    message = await error_of(FetchTool(), {"url": f"http://127.1:{port}/notes"})
    assert "private or local address" in message and '"fetch:127.0.0.1"' in message
