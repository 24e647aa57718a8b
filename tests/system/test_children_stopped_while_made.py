"""A stop that lands while a child is being made (it runs; its pipes are being connected) must
not hang: asyncio kills only the child then and waits for its pipes, which what the child
started holds open (a hook's `sleep 1000`)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from di_code.system.children import start_child
from tests.support.processes import MARK, marked, until


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="reads /proc")
async def test_a_stop_while_the_child_is_made_ends_it_and_what_it_started(
    tmp_path: Path,
) -> None:
    mark = f"stopped-while-made-{os.getpid()}-{tmp_path.name}"
    making = asyncio.ensure_future(
        start_child(
            "bash",
            "-c",
            "sleep 1000 & wait",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={**os.environ, MARK: mark},
        )
    )
    await asyncio.sleep(0)  # forked: the pipes are being connected
    making.cancel()
    done, _ = await asyncio.wait({making}, timeout=10)
    assert done, "the stopped start waited for pipes a grandchild holds"
    assert making.cancelled()
    # bash may be stopped before or after it started the sleep: either way nothing the
    # child's environment marks (bash, the sleep) is left
    await until(lambda: not marked(mark), "the child and what it started to end")


async def test_a_stop_while_a_child_that_cannot_start_is_made_is_quiet(tmp_path: Path) -> None:
    """The child is never made (no such program): the stop has nothing to kill, and says
    nothing (no error from a callback on the loop)."""
    heard: list[dict[str, object]] = []
    asyncio.get_running_loop().set_exception_handler(lambda _, context: heard.append(context))
    making = asyncio.ensure_future(start_child(str(tmp_path / "no-such-program")))
    await asyncio.sleep(0)  # the start is under way
    making.cancel()
    done, _ = await asyncio.wait({making}, timeout=10)
    assert done and making.cancelled()
    for _ in range(10):  # the start's own end, and the callback after it
        await asyncio.sleep(0)
    assert heard == []
