"""The notes the chat puts before a prompt come off again, and only they."""

from __future__ import annotations

from di_code.session.prompt_notes import shell_note, split_notes, undo_note, with_notes


def test_the_notes_come_off_and_the_commands_are_kept() -> None:
    notes = [shell_note("ls -a", "a\n```\n\nb"), shell_note("true", ""), undo_note(2, ["x"])]
    prompt = with_notes(notes, "what now?\n\nsecond paragraph")
    assert split_notes(prompt) == (["ls -a", "true"], "what now?\n\nsecond paragraph")


def test_text_the_user_typed_is_never_taken_for_a_note() -> None:
    typed = "[Note from di-code: a quote] with more on the line"
    assert split_notes(typed) == ([], typed)
    inside = "look at this:\n\n" + undo_note(1, ["restored x"])
    assert split_notes(inside) == ([], inside)
    alone = undo_note(1, ["restored x"])  # a note with no prompt after it is what was sent
    assert split_notes(alone) == ([], alone)
