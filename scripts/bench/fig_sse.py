"""Figure 3: SSE throughput, events per second, di-code's provider against the SDK and httpx.

The SDK parses every chunk into pydantic objects (about 40× slower than the rest), so it reads
a quarter of the stream: its rate per event does not depend on the stream's length.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from scripts.bench.context import Bench
from scripts.bench.loopback import LoopbackServer
from scripts.bench.measure import run_worker
from scripts.bench.peers import PeerUnavailable
from scripts.bench.report import Row, Stat, Target, skipped
from scripts.bench.wire import chat_completion_sse

PEERS = ("openai",)
UNIT = "events/s"


def run(bench: Bench) -> list[Row]:
    chunks = bench.scale(200_000, 20_000)
    note = f"{chunks:,} chunks"
    with LoopbackServer(chat_completion_sse(chunks)) as server:
        bare = _rates(bench, bench.python, "httpx_lines", server.base_url)
        rows = [
            Row("3", "SSE: bare httpx aiter_lines + json.loads", UNIT, bare, note=note),
            Row(
                "3",
                "SSE: httpx bytes alone",
                UNIT,
                _rates(bench, bench.python, "httpx_bytes", server.base_url),
                note=note,
            ),
        ]
        if importlib.util.find_spec("di_code.ai.providers.openai") is None:
            return [*rows, skipped("3", "SSE: di-code provider", "provider not written yet")]
        di_code = _rates(bench, bench.python, "di_code", server.base_url)
    rows.insert(
        0,
        Row(
            "3",
            "SSE: di-code vs bare loop",
            UNIT,
            di_code,
            "bare loop",
            bare,
            Target(0.4, "ratio", "min"),
            note,
        ),
    )
    try:
        sdk_python = bench.peer("openai").python
    except PeerUnavailable as exc:
        return [*rows, skipped("3", "SSE: di-code vs openai SDK", str(exc))]
    with LoopbackServer(chat_completion_sse(chunks // 4)) as server:
        sdk = _rates(bench, sdk_python, "openai_sdk", server.base_url, min(bench.repeats, 3))
    rows.insert(
        0,
        Row(
            "3",
            "SSE: di-code vs openai SDK",
            UNIT,
            di_code,
            "openai SDK",
            sdk,
            Target(8, "ratio", "min"),
            f"SDK over {chunks // 4:,} chunks",
        ),
    )
    return rows


def _rates(
    bench: Bench, python: Path, mode: str, base_url: str, repeats: int | None = None
) -> Stat:
    rates = []
    for _ in range(repeats or bench.repeats):
        answer, _run = run_worker(python, "sse_client", {"mode": mode, "base_url": base_url})
        rates.append(answer["events"] / answer["seconds"])
    return Stat.of(rates)
