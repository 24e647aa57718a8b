"""`di-code batch --ray auto|ADDRESS`: each task a Ray task on a cluster, same results file.

Ray is imported only here (the `di-code[ray]` extra). A task is one Ray task (one CPU) that
does what a local worker thread does on whichever node it lands: checkout, `di-code run`
process, record. If the worker running it dies, Ray runs it once more (max_retries=1): the
retry removes what the dead attempt left. The driver keeps only the tasks in flight and writes
each record as its task ends (ray.wait), so its memory stays bounded. Ctrl-C cancels the
running tasks (the task's process is ended on its node) and records them as cancelled.

Repositories must be reachable from every node: git URLs, or paths on a shared file system.
The request cap (--max-requests) holds for the whole cluster: a Ray actor keeps the slots
(di_code.batch.ray_slots). Joining the cluster is bounded and stoppable, and what `--ray-env`
forwards goes with it (di_code.batch.ray_connect). A node without the model's key stops the
batch at its first task, naming the node (KeyMissing).
"""

from __future__ import annotations

import dataclasses
import importlib
import socket
import threading
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from di_code.ai.providers.request_slots import SOCKET_PREFIX
from di_code.batch.key_check import KeyMissing
from di_code.batch.ray_connect import DEFAULT_TIMEOUT, RayUnavailable, connect, forwarded
from di_code.batch.ray_slots import SlotRelay, start_keeper
from di_code.batch.results import STOPPED
from di_code.batch.runner import Reporter, Stop, run_batch
from di_code.batch.tasks import Task
from di_code.batch.worker import Live, RunSettings, finish_record, run_task, task_record

RAY_TASK_OPTIONS: dict[str, Any] = {"num_cpus": 1, "max_retries": 1}
IN_FLIGHT_PER_CPU = 2
"""Tasks handed to Ray per CPU: the next is queued there when one ends, so Ray's own dispatch
does not leave a CPU idle between tasks; still bounded, so the driver's memory is."""


@dataclass(frozen=True, slots=True)
class RayOptions:
    address: str
    """`auto` or HOST:PORT."""
    timeout: float = DEFAULT_TIMEOUT
    """Seconds to join the cluster (--ray-timeout)."""
    env: tuple[str, ...] = ()
    """Names of the driver's variables forwarded to the tasks (--ray-env)."""
    max_requests: int | None = None
    jobs: int | None = None


def run_on_node(task: Task, settings: RunSettings, keeper: Any = None) -> dict[str, Any]:
    """The Ray task's body: the task run on this node, as a local worker would run it (its
    model requests through a relay to the batch's slot keeper, with --max-requests)."""
    ray: Any = importlib.import_module("ray")
    try:
        if keeper is None:
            return run_task(task, settings, threading.Event(), Live())
        with SlotRelay(ray, keeper) as relay:
            slots = SOCKET_PREFIX + str(relay.path)
            through_relay = dataclasses.replace(settings, request_slots=slots)
            return run_task(task, through_relay, threading.Event(), Live())
    except KeyMissing as exc:
        node = f"{ray.util.get_node_ip_address()} ({socket.gethostname()})"
        raise KeyMissing(exc.provider, exc.variable, node) from None


def run_ray(
    tasks: Sequence[Task],
    results: Path,
    settings: RunSettings,
    options: RayOptions,
    reporter: Reporter,
    retry_failed: bool = False,
) -> int:
    """The batch on the cluster: `jobs` tasks in flight (default two per CPU)."""
    env_vars = forwarded(options.env)
    try:
        ray: Any = importlib.import_module("ray")  # typed as Any: the extra may be missing
        errors: Any = importlib.import_module("ray.exceptions")
    except ImportError:
        raise RayUnavailable("--ray needs Ray: pip install 'di-code[ray]'") from None
    connect(ray, options.address, options.timeout, env_vars)
    try:
        keeper = start_keeper(ray, options.max_requests) if options.max_requests else None
        remote = ray.remote(**RAY_TASK_OPTIONS)(run_on_node)
        pool = RayPool(ray, errors, remote, settings, keeper)
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        jobs = options.jobs or IN_FLIGHT_PER_CPU * cpus
        return run_batch(tasks, results, pool, jobs, reporter, retry_failed, Stop())
    finally:
        ray.shutdown()


class RayPool:
    """Tasks as Ray tasks; a task that Ray could not finish is a failed (or cancelled) record."""

    def __init__(
        self, ray: Any, errors: Any, remote: Any, settings: RunSettings, keeper: Any
    ) -> None:
        self._ray, self._errors, self._remote = ray, errors, remote
        self._settings, self._keeper = settings, keeper

    def submit(self, task: Task, live: Live) -> Hashable:
        ref: Hashable = self._remote.remote(task, self._settings, self._keeper)
        return ref

    def ready(self, handles: Sequence[Hashable], timeout: float) -> list[Hashable]:
        ready, rest = self._ray.wait(list(handles), num_returns=1, timeout=timeout)
        if ready and rest:  # whatever else has ended meanwhile, without waiting
            more, _ = self._ray.wait(rest, num_returns=len(rest), timeout=0)
            ready += more
        return list(ready)

    def result(self, handle: Hashable, task: Task, live: Live) -> dict[str, Any]:
        try:
            record: dict[str, Any] = self._ray.get(handle)
            return record
        except self._errors.TaskCancelledError:
            return _unfinished(task, live, "cancelled", STOPPED)
        except self._errors.RayError as exc:
            cause = getattr(exc, "cause", None)  # a RayTaskError's: what the task raised
            if isinstance(cause, KeyMissing):
                raise cause from None
            return _unfinished(task, live, "failed", f"ray: {str(exc).splitlines()[0]}")

    def cancel(self, handles: Sequence[Hashable]) -> None:
        for handle in handles:
            self._ray.cancel(handle)


def _unfinished(task: Task, live: Live, status: str, error: str) -> dict[str, Any]:
    """The record of a task whose own record never came back from the cluster."""
    return finish_record(task_record(task, status), live, error=error)
