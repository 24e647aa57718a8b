"""Files of many lines for the tests that an edit or an approval of a big file stays bounded."""

from __future__ import annotations

import random

LIVENESS = 30.0
"""Generous: the machine is shared; the quadratic hint took minutes here."""


def code_lines(count: int, seed: int) -> list[str]:
    """Lines that look like code and differ from each other."""
    words = ["alpha", "beta", "gamma", "delta", "value", "self", "item", "total", "index"]
    rng = random.Random(seed)
    return [
        f"    {rng.choice(words)}_{i} = {rng.choice(words)}({rng.randint(0, 999)}, {i * 7})"
        for i in range(count)
    ]
