"""The chat's question at a prompt's turn limit counts every request the prompt has made, not
only those since the last "go on"."""

from __future__ import annotations

from di_code.ui.turn_limit import limit_question


def test_the_question_counts_every_request_of_the_prompt() -> None:
    assert limit_question(1, 1) == (
        "The model has made 1 request for this prompt. Go on for 1 more? y/N"
    )
    assert limit_question(2, 1) == (
        "The model has made 2 requests for this prompt. Go on for 1 more? y/N"
    )
    assert limit_question(4, 2) == (
        "The model has made 4 requests for this prompt. Go on for 2 more? y/N"
    )
