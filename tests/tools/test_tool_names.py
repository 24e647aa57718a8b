"""Tool names every wire API accepts, one tool per name, the same from one start to the next."""

from __future__ import annotations

import re

from di_code.tools.extensions.tool_names import distinct_names

ACCEPTED_BY_ALL = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")
"""OpenAI Chat Completions and Responses, Anthropic: [A-Za-z0-9_-]{1,64}; Gemini: a letter or
_ first."""


def named(*names: str, taken: tuple[str, ...] = ()) -> list[str]:
    return distinct_names([(name, f"id:{name}") for name in names], taken)


def test_a_name_that_fits_and_is_alone_is_kept() -> None:
    assert named("mcp__fx__add", "read-file", "_x") == ["mcp__fx__add", "read-file", "_x"]


def test_names_that_become_alike_when_made_to_fit_stay_distinct() -> None:
    long = "mcp__fx__" + "a" * 60
    names = named("mcp__fx__notes.read", "mcp__fx__notes_read", long + "first", long + "second")
    assert len(set(names)) == 4
    assert names[1] == "mcp__fx__notes_read"
    assert names[0].startswith("mcp__fx__notes_read_") and names[0] != names[1]
    assert names[2][:40] == names[3][:40] == long[:40]
    assert all(ACCEPTED_BY_ALL.fullmatch(name) for name in names)


def test_names_wanted_twice_both_get_a_suffix_whatever_the_order() -> None:
    # server `a__b` with tool `c`, server `a` with tool `b__c`: the same text
    twins = [("mcp__a__b__c", '["a__b", "c"]'), ("mcp__a__b__c", '["a", "b__c"]')]
    forward, backward = distinct_names(twins), distinct_names(twins[::-1])
    assert len(set(forward)) == 2 and "mcp__a__b__c" not in forward
    assert forward == backward[::-1]


def test_a_taken_name_is_never_given() -> None:
    assert named("read", taken=("read",)) != ["read"]
    assert named("read", taken=("read",))[0].startswith("read_")


def test_a_name_providers_refuse_at_its_start_is_made_to_fit() -> None:
    names = named("9lives", "-dash", "", "ünïcode")
    assert all(ACCEPTED_BY_ALL.fullmatch(name) for name in names)
    assert len(set(names)) == 4


def test_a_name_is_the_same_at_every_start() -> None:
    assert named("mcp__x__a.b", "mcp__x__c") == named("mcp__x__a.b", "mcp__x__c")
    assert named("mcp__x__a.b")[0] == named("mcp__x__z", "mcp__x__a.b")[1]
