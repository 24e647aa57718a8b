"""`--ray ADDRESS` that does not answer: exit 2 within `--ray-timeout`, naming the address, and
Ctrl-C while connecting. Real sockets on 127.0.0.2 (a loopback address Ray does not rewrite to
the machine's own, as it does 127.0.0.1)."""

from __future__ import annotations

import signal
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.batch.conftest import make_repo, write_tasks
from tests.cli.conftest import DI_CODE, cli_env
from tests.support.llm_server import LLMServer
from tests.support.processes import processes_running, wait_until

pytest.importorskip("ray", reason="Ray is not installed here: pip install 'di-code[ray]'")
HOST = "127.0.0.2"
BOUND = 60.0
"""Exits within this: far under the minutes a retrying connect took."""


@pytest.fixture
def silent_listener() -> Iterator[str]:
    """An address whose connections are accepted (the kernel completes them in the listen
    backlog) and never hear a word."""
    with socket.socket() as server:
        server.bind((HOST, 0))
        server.listen(64)
        yield f"{HOST}:{server.getsockname()[1]}"


def closed_port() -> str:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return f"{HOST}:{probe.getsockname()[1]}"  # closed when the block ends


def start_batch(
    tmp_path: Path, home: Path, server: LLMServer, *options: str
) -> subprocess.Popen[str]:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    tasks = write_tasks(tmp_path / "t.jsonl", [{"id": "a", "repo": str(repo), "prompt": "p"}])
    return subprocess.Popen(
        [DI_CODE, "batch", str(tasks), "--out", "r.jsonl", *options],
        cwd=tmp_path,
        env=cli_env(home, server),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(driver: subprocess.Popen[str]) -> tuple[int, str]:
    """The driver's exit code and stderr, once it ends: within BOUND (liveness, not speed: the
    message names the timeout that ended the connect)."""
    try:
        _, err = driver.communicate(timeout=BOUND)
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()
    return driver.returncode, err


def test_a_closed_port_exits_2_within_the_timeout_naming_the_address(
    di_code_home: Path, llm_server: LLMServer, tmp_path: Path
) -> None:
    address = closed_port()
    driver = start_batch(tmp_path, di_code_home, llm_server, "--ray", address, "--ray-timeout", "2")
    code, err = finish(driver)
    assert code == 2, err
    assert err.strip().splitlines()[-1] == (
        f"di-code: the Ray cluster at {address} did not answer within 2 s (--ray-timeout)"
    )
    assert not (tmp_path / "r.jsonl").read_text()


def test_a_listener_that_says_nothing_exits_2_within_the_timeout(
    silent_listener: str,
    di_code_home: Path,
    llm_server: LLMServer,
    tmp_path: Path,
) -> None:
    address = silent_listener
    driver = start_batch(tmp_path, di_code_home, llm_server, "--ray", address, "--ray-timeout", "3")
    code, err = finish(driver)
    assert code == 2, err
    assert f"the Ray cluster at {address} did not answer within 3 s" in err
    assert "Traceback" not in err


def test_ctrl_c_while_connecting_exits_130_at_once(
    silent_listener: str,
    di_code_home: Path,
    llm_server: LLMServer,
    tmp_path: Path,
) -> None:
    address = silent_listener
    driver = start_batch(tmp_path, di_code_home, llm_server, "--ray", address)
    port = int(address.rsplit(":", 1)[1])
    wait_until(lambda: connected_to(port), "the driver to connect to the silent address")
    driver.send_signal(signal.SIGINT)
    code, err = finish(driver)
    assert code == 130, err
    assert "Traceback" not in err
    assert processes_running("", tmp_path) == []  # nothing the driver started is left


def connected_to(port: int) -> bool:
    """Whether a client has connected to the listener at `port` on HOST: a connection of
    its in /proc/net/tcp (the listener's side; the client's may be IPv6-mapped)."""
    wanted = f"{socket.inet_aton(HOST)[::-1].hex().upper()}:{port:04X}"
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[1] == wanted and fields[3] != "0A":  # not the listening socket itself
            return True
    return False


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (("--ray", "127.0.0.2:1", "--ray-env", "NOT_SET_HERE"), "--ray-env NOT_SET_HERE: not set"),
        (("--ray-timeout", "5"), "--ray-timeout and --ray-env need --ray"),
        (("--ray-env", "HOME"), "--ray-timeout and --ray-env need --ray"),
    ],
)
def test_ray_options_that_cannot_work_are_exit_2_before_connecting(
    di_code_home: Path,
    llm_server: LLMServer,
    tmp_path: Path,
    options: tuple[str, ...],
    message: str,
) -> None:
    code, err = finish(start_batch(tmp_path, di_code_home, llm_server, *options))
    assert code == 2, err
    assert err.strip().splitlines()[-1].startswith(f"di-code: {message}")
