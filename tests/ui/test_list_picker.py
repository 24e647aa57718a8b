"""The list picker's state: filtering by every typed word, the current item selected first,
moving within the matches and scrolling with the selection, and lines made one visible line."""

from __future__ import annotations

from di_code.ui.list_picker import ListPicker, PickItem, matching, one_line

MODELS = [
    PickItem("openai/gpt-5", "openai/gpt-5"),
    PickItem("openai/gpt-5-mini", "openai/gpt-5-mini", current=True),
    PickItem("anthropic/claude-sonnet-4-5", "sonnet", "(set ANTHROPIC_API_KEY)"),
    PickItem("gemini/gemini-2.5-flash", "flash"),
]


def test_every_word_must_match_label_or_detail_in_any_case_and_order() -> None:
    assert matching(MODELS, "") == [0, 1, 2, 3]
    assert matching(MODELS, "GPT") == [0, 1]
    assert matching(MODELS, "mini gpt") == [1]
    assert matching(MODELS, "anthropic_api") == [2]  # the detail counts
    assert matching(MODELS, "gpt flash") == []


def test_the_current_item_is_selected_first_and_stays_selected_while_it_matches() -> None:
    picker = ListPicker(MODELS)
    assert picker.chosen() == MODELS[1]
    picker.filter("openai")
    assert picker.chosen() == MODELS[1]
    picker.filter("sonnet")
    assert picker.chosen() == MODELS[2]
    picker.filter("nothing like it")
    assert picker.chosen() is None
    assert picker.lines() == []
    picker.move(1)  # nothing to move over: no error
    assert picker.chosen() is None


def test_moving_stops_at_the_ends_and_the_view_follows_the_selection() -> None:
    items = [PickItem(f"item {n}", n) for n in range(25)]
    picker = ListPicker(items, rows=10)
    picker.move(-1)
    assert picker.chosen() == items[0]
    picker.move(12)
    assert picker.chosen() == items[12]
    shown = picker.lines()
    assert len(shown) == 10 and shown[-1] == (True, items[12])
    picker.move(100)
    assert picker.chosen() == items[24]
    picker.filter("item 2")  # any item holding "2": the selection (24) still matches
    assert picker.chosen() == items[24]
    assert [item.value for _, item in picker.lines()] == [2, 12, 20, 21, 22, 23, 24]


def test_a_current_item_far_down_is_in_view() -> None:
    items = [PickItem(f"item {n}", n, current=n == 30) for n in range(40)]
    picker = ListPicker(items, rows=10)
    assert (True, items[30]) in picker.lines()


def test_a_line_is_one_visible_line() -> None:
    assert one_line("fix\nthe\tbug\x1b[2J  now") == "fix the bug␛[2J now"
