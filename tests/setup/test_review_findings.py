"""The review's line format read back from a model's answer: what it accepts (the ways models
decorate a line), and one-line errors for what it does not."""

from __future__ import annotations

import pytest

from di_code.session.review_diff import ReviewDiff, ReviewTarget, cut
from di_code.setup.review import Finding, ReviewFormatError, read_findings, review_prompt


def test_findings_and_verdict_are_read_whatever_the_decoration() -> None:
    answer = (
        "Some thoughts first. FINDING: inside a sentence is not a finding line.\n"
        "- FINDING: src/a b.py:10 | HIGH | crashes on empty input\n"
        "* **FINDING:** `lib/x.py:3` | medium | off by one: `i <= n`\n"
        "VERDICT: an early guess\n"
        "**VERDICT:** needs a fix first\n"
    )
    report = read_findings(answer)
    assert report.findings == (
        Finding("src/a b.py", 10, "high", "crashes on empty input"),
        Finding("lib/x.py", 3, "medium", "off by one: `i <= n`"),
    )
    assert report.verdict == "needs a fix first"


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        ("All good!", "no VERDICT line"),
        ("VERDICT:   ", "no VERDICT line"),
        ("FINDING: a.py | high | no line number\nVERDICT: x", "line 1"),
        ("FINDING: a.py:1 | urgent | why\nVERDICT: x", "'urgent'"),
        ("FINDING: a.py:1 | " + "w" * 100_000 + "\nVERDICT: x", "line 1"),
        ("", "no VERDICT line"),
    ],
)
def test_an_answer_out_of_the_format_is_one_line(answer: str, said: str) -> None:
    with pytest.raises(ReviewFormatError) as caught:
        read_findings(answer)
    message = str(caught.value)
    assert said in message and "\n" not in message and len(message) < 200


def test_a_cut_diff_names_what_it_left_out() -> None:
    sections = [f"diff --git a/f{n}.py b/f{n}.py\n" + "+x\n" * 50 for n in range(5)]
    shown, note = cut("".join(sections), 300)
    assert shown.endswith("\n") and len(shown) <= 300
    assert "f1.py shown only in part" in note and "f2.py, f3.py, f4.py" in note
    whole, nothing = cut("".join(sections), 10_000)
    assert nothing == "" and whole == "".join(sections)
    prompt = review_prompt(ReviewDiff(ReviewTarget(), shown, ("new.py",), note))
    assert note in prompt and "new.py" in prompt and "FINDING: path:line" in prompt


def test_new_files_are_named_up_to_a_bound() -> None:
    names = tuple(f"gen/{n}.txt" for n in range(10_000))
    prompt = review_prompt(ReviewDiff(ReviewTarget(), "diff --git a/x b/x\n", names))
    assert "gen/199.txt" in prompt and "gen/200.txt" not in prompt
    assert "... and 9800 more" in prompt and len(prompt) < 20_000
