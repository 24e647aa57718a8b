"""`di-code batch TASKS.jsonl --out RESULTS.jsonl`: the command line made into a batch run.

The task file is checked whole first (a bad line: exit 2, nothing run). Then the sandbox is
said once, the shared request cap set up, and the tasks run locally or on Ray.
"""

from __future__ import annotations

import math
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from di_code.config.settings import ConfigError
from di_code.system.stop_signals import silence_stdout

if TYPE_CHECKING:
    from di_code.batch.runner import Reporter
    from di_code.batch.tasks import Task
    from di_code.batch.worker import RunSettings

RETRY_CHOICES = ("failed",)


@dataclass(frozen=True, slots=True)
class BatchOptions:
    tasks: str
    out: str
    jobs: int | None = None
    timeout: float | None = None
    keep: bool = False
    retry: str | None = None
    events: bool = False
    max_requests: int | None = None
    ray: str | None = None
    ray_timeout: float | None = None
    ray_env: tuple[str, ...] = ()
    workdir: str | None = None
    model: str | None = None
    provider: str | None = None
    base_url: str | None = None
    permission_mode: str = "auto"
    max_turns: int | None = None
    tools: str | None = None


def batch_command(options: BatchOptions) -> int:
    from di_code.batch.tasks import PERMISSION_MODES, read_tasks
    from di_code.batch.workdir import hold_workdir

    if options.retry is not None and options.retry not in RETRY_CHOICES:
        raise ConfigError(f"--retry must be one of {', '.join(RETRY_CHOICES)}")
    if options.permission_mode not in PERMISSION_MODES:
        raise ConfigError(f"--permission-mode must be one of {', '.join(PERMISSION_MODES)}")
    for flag, seconds in (("--timeout", options.timeout), ("--ray-timeout", options.ray_timeout)):
        if seconds is not None and math.isnan(seconds):  # passes any range check: no limit
            raise ConfigError(f"{flag} must be a number of seconds")
    if options.ray is None and (options.ray_timeout is not None or options.ray_env):
        raise ConfigError("--ray-timeout and --ray-env need --ray")
    tasks = read_tasks(Path(options.tasks))
    out = Path(options.out).resolve()
    try:  # a results file that cannot be written is found before any task runs
        if out.exists() and not out.is_file():  # a FIFO blocks, a device is read without end
            raise ConfigError(f"--out {options.out}: not a regular file")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.open("ab").close()
    except OSError as exc:
        raise ConfigError(f"--out {options.out}: {exc.strerror or exc}") from None
    workdir = (
        Path(options.workdir).resolve() if options.workdir else out.with_name(out.name + ".work")
    )
    _workdir_is_no_repo(workdir, tasks)
    try:  # before anything in it is touched: another batch's checkouts are there
        held = hold_workdir(workdir)  # WorkdirBusy when another batch holds it
    except OSError as exc:
        raise ConfigError(f"--workdir {workdir}: {exc.strerror or exc}") from None
    try:
        return _run_in(workdir, tasks, out, options)
    finally:
        os.close(held)


def _workdir_is_no_repo(workdir: Path, tasks: list[Task]) -> None:
    """A workdir that is a task's own folder would hold that task's checkouts and logs: a
    copied folder would copy its copy without end, a work tree would be written into."""
    from di_code.batch.checkout import is_url

    for task in tasks:
        if not is_url(task.repo) and Path(task.repo).resolve() == workdir:
            shown = f"--workdir {workdir} is the repo of task {task.id}"
            raise ConfigError(f"{shown}: give another folder")


def _run_in(workdir: Path, tasks: list[Task], out: Path, options: BatchOptions) -> int:
    from di_code.batch.runner import OutputClosed
    from di_code.batch.worker import RunSettings

    # on Ray the slots are kept by an actor (ray_runner); here by slot files
    slots = None if options.ray else _request_slots(options.max_requests, workdir)
    settings = RunSettings(
        workdir=workdir,
        keep=options.keep,
        model=options.model,
        provider=options.provider,
        base_url=options.base_url,
        permission_mode=options.permission_mode,
        max_turns=options.max_turns,
        timeout=options.timeout,
        tools=options.tools,
        request_slots=slots,
    )
    reporter = _reporter(options.events)
    _say_sandbox(tasks, options.permission_mode, options.ray is not None)
    try:
        return _run(tasks, out, settings, options, reporter)
    except OutputClosed as exc:  # nothing more to stdout: Python's own flush at exit fails too
        silence_stdout()
        raise ConfigError(str(exc)) from None


def _run(
    tasks: list[Task], out: Path, settings: RunSettings, options: BatchOptions, reporter: Reporter
) -> int:
    retry_failed = options.retry == "failed"
    if options.ray is not None:
        from di_code.batch.ray_connect import DEFAULT_TIMEOUT, RayUnavailable
        from di_code.batch.ray_runner import RayOptions, run_ray

        timeout = options.ray_timeout or DEFAULT_TIMEOUT
        chosen = RayOptions(
            options.ray, timeout, options.ray_env, options.max_requests, options.jobs
        )
        try:
            return run_ray(tasks, out, settings, chosen, reporter, retry_failed)
        except RayUnavailable as exc:
            raise ConfigError(str(exc)) from None
    from di_code.batch.runner import run_local

    jobs = options.jobs or os.cpu_count() or 1
    return run_local(tasks, out, settings, jobs, reporter, retry_failed)


def _request_slots(max_requests: int | None, workdir: Path) -> str | None:
    if max_requests is None:
        return None
    from di_code.ai.providers.request_slots import slots_value

    folder = workdir / "request-slots"
    folder.mkdir(parents=True, exist_ok=True)
    return slots_value(max_requests, folder)


def _reporter(events: bool) -> Reporter:
    from di_code.batch.progress import EventsReporter, LineReporter, LiveReporter

    if events:
        return EventsReporter()
    return LiveReporter() if sys.stderr.isatty() else LineReporter()


def _say_sandbox(tasks: list[Task], permission_mode: str, on_ray: bool) -> None:
    """Once for the whole batch: where the tasks' bash runs, as their `run` will choose it."""
    from di_code.batch.sandbox_notice import ON_RAY, sandbox_notices
    from di_code.tools.process.sandbox import SandboxUnavailable

    try:
        notices = [ON_RAY] if on_ray else sandbox_notices(tasks, permission_mode)
    except SandboxUnavailable as exc:
        raise ConfigError(str(exc)) from None
    for notice in notices:
        print(f"di-code batch: {notice}", file=sys.stderr)
