"""grep's order: ripgrep searches unsorted on all cores, and its hits are put back in the walk's
order (by name within each folder) before the limit applies; a search with very many matches
restarts in rg's sorted order, with the same result."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from di_code.agent import AgentTool
from di_code.tools.builtin.grep import GrepTool
from di_code.tools.builtin.support import grep_search
from di_code.tools.builtin.support.grep_search import Hit, InPathOrder
from di_code.tools.common.workspace import Workspace
from tests.tools.conftest import run, text_of

# In the walk's order. As plain strings "a-b.txt" < "a.txt" < "a/x.txt" and "B/y.txt" < "_.txt",
# so sorting whole paths instead of names within each folder would show.
NAMES = ["B/y.txt", "_.txt", "a/x.txt", "a/z/deep.txt", "a-b.txt", "a.txt", "ab/q.txt"]


@pytest.fixture(params=["gathered", "restarted sorted"])
def grep(
    workspace: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> AgentTool:
    for index, name in enumerate(NAMES):
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(f"needle {index}\nhay\nneedle again\n")
    for folder in range(40):  # enough files for ripgrep's threads to finish out of order
        for file in range(5):
            path = workspace / f"many/{folder:02}/{file}.txt"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("hay\nneedle\n" if file % 2 else "hay\n")
    # 0: the first match seen is enough to restart sorted; 1000: never restarts
    monkeypatch.setattr(grep_search, "SORTED_AFTER", 0 if "restarted" in request.param else 1000)
    return GrepTool(Workspace.create(workspace))


async def test_hits_come_in_the_walks_order(grep: AgentTool) -> None:
    text = text_of(await run(grep, {"pattern": "needle", "limit": 1000}))
    expected = []
    for index, name in enumerate(NAMES):
        expected += [f"{name}:1: needle {index}", f"{name}:3: needle again"]
        if name == "ab/q.txt":
            expected += [
                f"many/{folder:02}/{file}.txt:2: needle" for folder in range(40) for file in (1, 3)
            ]
    assert text.split("\n") == expected


async def test_the_limit_takes_the_first_matches_in_that_order(grep: AgentTool) -> None:
    result = await run(grep, {"pattern": "needle", "limit": 3, "context": 1})
    assert text_of(result) == (
        "B/y.txt:1: needle 0\nB/y.txt-2- hay\nB/y.txt:3: needle again\n"
        "_.txt:1: needle 1\n_.txt-2- hay\n\n"
        "[Match limit 3 reached. Use limit=6 for more, or narrow the pattern, path or glob.]"
    )
    assert result.details == {"limit_reached": 3}


FILES = st.lists(
    st.tuples(
        st.lists(st.sampled_from(["a", "a-", "B", "_", "a.b"]), min_size=1, max_size=3),
        st.lists(st.booleans(), min_size=1, max_size=6),
    ),
    max_size=30,
    unique_by=lambda file: tuple(file[0]),
)


@given(FILES, st.integers(1, 8), st.randoms(use_true_random=False))
def test_in_path_order_keeps_exactly_the_first_matches(
    files: list[tuple[list[str], list[bool]]], limit: int, shuffle: random.Random
) -> None:
    """Fed file by file in any order, with pruning, it hands on what a sorted feed would, up
    to the match after the limit (which tells the collector the limit was reached)."""
    per_file = [
        [Hit(Path(*parts, "f"), n + 1, "t", is_match) for n, is_match in enumerate(kinds)]
        for parts, kinds in files
        if any(kinds)
    ]

    def first_matches(hits: list[Hit]) -> list[Hit]:
        taken: list[Hit] = []
        for hit in hits:
            taken.append(hit)
            if sum(h.is_match for h in taken) > limit:
                break
        return taken

    in_order = sorted(per_file, key=lambda hits: hits[0].path.parts)
    expected = first_matches([hit for hits in in_order for hit in hits])
    shuffle.shuffle(per_file)
    ordered = InPathOrder(limit)
    for hits in per_file:
        for hit in hits:
            ordered.add(hit)
    drained: list[Hit] = []

    def sink(hit: Hit) -> bool:
        drained.append(hit)
        return sum(h.is_match for h in drained) <= limit

    ordered.drain(sink)
    assert drained == expected
