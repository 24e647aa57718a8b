"""A stop that lands while a child is being made (it runs; its pipes are being connected) must
not hang: asyncio kills only the child then and waits for its pipes, which what the child
started holds open (a hook's `sleep 1000`)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from di_code.ai.children import start_child


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="reads /proc")
async def test_a_stop_while_the_child_is_made_ends_it_and_what_it_started(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "grandchild.pid"
    script = f"sleep 1000 & echo $! > {marker}; wait"
    making = asyncio.ensure_future(
        start_child(
            "bash",
            "-c",
            script,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
    )
    await asyncio.sleep(0)  # forked: the pipes are being connected
    making.cancel()
    done, _ = await asyncio.wait({making}, timeout=10)
    assert done, "the stopped start waited for pipes a grandchild holds"
    assert making.cancelled()
    for _ in range(500):  # bash may be killed before it starts the grandchild: then none
        if marker.exists() and marker.read_text().strip():
            break
        await asyncio.sleep(0.01)
    if marker.exists() and marker.read_text().strip():
        pid = int(marker.read_text())
        for _ in range(500):
            if not _alive(pid):
                break
            await asyncio.sleep(0.01)
        assert not _alive(pid), "the child's group outlived the stop"
