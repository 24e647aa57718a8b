"""Joining the Ray cluster of `--ray`: within a time bound, stoppable, with what is forwarded.

`ray.init` has no time limit of its own: on an address that does not answer (a closed port, a
listener that says nothing) it retries for minutes, in native code that Ctrl-C does not reach.
So it runs in a daemon thread while this thread waits for it, at most `timeout` seconds, in a
wait a signal interrupts at once; on a timeout or Ctrl-C the attempt is left behind and ends
with the process.

`--ray-env NAME` forwards a variable of the driver to every task through Ray's `runtime_env`.
Its value then sits in Ray's control store (the GCS), where anyone with access to the cluster
can read it: opt-in, named one by one, and never shown.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from typing import Any

from di_code.system.errors import DiCodeError

DEFAULT_TIMEOUT = 30.0


class RayUnavailable(DiCodeError):
    """Ray is not installed, the cluster cannot be reached, or it cannot run the tasks."""


def forwarded(names: Sequence[str], env: dict[str, str] | None = None) -> dict[str, str]:
    """The driver's values of `names` (RayUnavailable naming one that is not set here), each
    a secret from now on: hidden wherever this process writes it."""
    from di_code.ai.redaction import register

    env = dict(os.environ) if env is None else env
    missing = [name for name in names if not env.get(name)]
    if missing:
        raise RayUnavailable(f"--ray-env {missing[0]}: not set here, so there is none to forward")
    values = {name: env[name] for name in names}
    register(*values.values())
    return values


def connect(ray: Any, address: str, timeout: float, env_vars: dict[str, str]) -> None:
    """`ray.init` at `address`, or RayUnavailable when it fails or takes over `timeout` s."""
    failure: list[BaseException] = []
    done = threading.Event()

    def attempt() -> None:
        try:
            ray.init(
                address=address,
                log_to_driver=False,
                logging_level=logging.ERROR,
                runtime_env={"env_vars": env_vars} if env_vars else None,
            )
        except BaseException as exc:  # handed to the waiting thread
            failure.append(exc)
        finally:
            done.set()

    threading.Thread(target=attempt, name="ray-connect", daemon=True).start()
    if not done.wait(timeout):
        raise RayUnavailable(
            f"the Ray cluster at {address} did not answer within {timeout:g} s (--ray-timeout)"
        )
    if failure:
        reason = (str(failure[0]).strip().splitlines() or [type(failure[0]).__name__])[0]
        raise RayUnavailable(f"cannot reach the Ray cluster at {address}: {reason}")
