"""The cross-process cap on model requests (`di-code batch --max-requests`): real flocks."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import pytest

from di_code.ai.providers.request_slots import SLOTS_VARIABLE, request_slot, slots_value

SLOT_FILE = "e3b0c44298fc-0"
"""The first slot file of the endpoint "" (its name: the start of the SHA-256 of "")."""
HOLD = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(600)
"""


async def test_a_second_request_waits_for_the_first_slot(tmp_path: Path) -> None:
    spec = slots_value(1, tmp_path)
    order: list[str] = []
    release = asyncio.Event()

    async def request(name: str) -> None:
        async with request_slot("u", spec):
            order.append(f"{name} in")
            if name == "first":
                await release.wait()
            order.append(f"{name} out")

    first = asyncio.create_task(request("first"))
    while not order:
        await asyncio.sleep(0.01)
    second = asyncio.create_task(request("second"))
    for _ in range(10):  # the second polls for a slot several times meanwhile
        await asyncio.sleep(0.02)
    assert order == ["first in"]
    release.set()
    await asyncio.gather(first, second)
    assert order == ["first in", "first out", "second in", "second out"]


async def test_two_slots_let_two_requests_run_together(tmp_path: Path) -> None:
    spec = slots_value(2, tmp_path)
    async with request_slot("u", spec), request_slot("u", spec):
        assert len(list(tmp_path.iterdir())) == 2
        assert not await _entered_within(request_slot("u", spec))


async def test_each_provider_has_its_own_slots(tmp_path: Path) -> None:
    spec = slots_value(1, tmp_path)
    async with request_slot("http://a/v1", spec):
        assert await _entered_within(request_slot("http://b/v1", spec))
        assert not await _entered_within(request_slot("http://a/v1", spec))


async def test_a_killed_holder_frees_its_slot(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(tmp_path / SLOT_FILE)], stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    waiting = asyncio.create_task(_enter(slots_value(1, tmp_path)))  # endpoint ""
    await asyncio.sleep(0.2)
    assert not waiting.done()
    holder.kill()
    holder.wait()
    assert await asyncio.wait_for(waiting, 30) == "entered"


async def _enter(spec: str) -> str:
    async with request_slot("", spec):
        return "entered"


async def test_the_variable_names_the_slots(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SLOTS_VARIABLE, slots_value(1, tmp_path))
    async with request_slot():
        assert [path.name for path in tmp_path.iterdir()] == [SLOT_FILE]
        assert not await _entered_within(request_slot())
    monkeypatch.setenv(SLOTS_VARIABLE, "")
    async with request_slot(), request_slot():  # no cap: nothing to wait for
        pass


async def _entered_within(slot: AbstractAsyncContextManager[None]) -> bool:
    try:
        async with asyncio.timeout(0.2):
            async with slot:
                return True
    except TimeoutError:
        return False
