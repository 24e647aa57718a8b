"""Usage is summed in one place, `Usage.__add__`, which the JSON result, the footer and
compaction all use."""

from __future__ import annotations

from di_code.ai.types import Cost, Usage


def test_usages_add_up_field_by_field_cost_included() -> None:
    a = Usage(10, 2, 3, 4, 19, Cost(0.1, 0.2, 0.3, 0.4, 1.0))
    b = Usage(1, 1, 0, 0, 2, Cost(total=0.5))
    total = sum([a, b], Usage())
    assert total == Usage(11, 3, 3, 4, 21, Cost(0.1, 0.2, 0.3, 0.4, 1.5))
    assert (a.sent, a.context) == (17, 19)
    assert sum([], Usage()) == Usage()
