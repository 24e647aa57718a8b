"""One task, start to end: its checkout, a `di-code run` process in it, its result record.

The task runs as its own process (`di-code run --output-format stream-json`) in a session of
its own, so that a timeout or Ctrl-C can end it and everything it started: the process is
asked first (SIGTERM: `run` aborts the agent and stops bash's process groups), then, after a
grace period, every process that descended from it is killed. The process also ends when the
driver dies (di_code.cli.batch_child). Its stream is read from a file while it runs, for the
live tokens and cost; its last line is `run`'s result object.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from di_code.ai.providers.request_slots import SLOTS_VARIABLE
from di_code.ai.redaction import clip, redact
from di_code.batch.check import STOP_GRACE, run_check
from di_code.batch.checkout import (
    CheckoutError,
    CheckoutStopped,
    make_checkout,
    patch_of,
    remove_checkout,
)
from di_code.batch.key_check import ModelFlags, check_key
from di_code.batch.results import STOPPED
from di_code.batch.tasks import Task
from di_code.config.settings import di_code_home
from di_code.session.git_run import GitError
from di_code.system.children import kill_tree
from di_code.system.private_files import private_folder

CHILD_MODULE = "di_code.cli.batch_child"
PARENT_VARIABLE = "DI_CODE_BATCH_PARENT"
ERROR_CHARS = 500
POLL_SECONDS = 0.1
"""How often a running task's stop, timeout and live figures are checked."""


@dataclass(frozen=True, slots=True)
class RunSettings:
    """What every task shares; a task's own fields win over the defaults here."""

    workdir: Path
    """Checkouts under checkouts/, each task's stream and stderr under logs/."""
    keep: bool = False
    model: str | None = None
    provider: str | None = None
    base_url: str | None = None
    permission_mode: str = "auto"
    max_turns: int | None = None
    timeout: float | None = None
    tools: str | None = None
    request_slots: str | None = None
    """`DI_CODE_REQUEST_SLOTS` for the tasks' processes (--max-requests)."""
    env: Mapping[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class Live:
    """A running task's figures so far, read by the progress display."""

    started: float = field(default_factory=time.monotonic)
    turns: int = 0
    tokens: int = 0
    cost: float = 0.0


def run_task(
    task: Task, settings: RunSettings, stop: threading.Event, live: Live | None = None
) -> dict[str, Any]:
    """The task's result record; never raises for the task's own failures (KeyMissing, which
    every such task would meet here, stops the batch)."""
    live = live or Live()
    record = task_record(task, "failed")
    if task.check is not None:
        record["passed"] = None
    timeout = task.timeout or settings.timeout
    try:
        checkout = make_checkout(
            task.repo,
            task.ref,
            settings.workdir / "checkouts" / task.id,
            task.id,
            stopped=lambda: stop.is_set() or _timed_out(live, timeout),
        )
    except CheckoutStopped:  # a clone that hangs: ended as the task's process would be
        record["status"] = "cancelled" if stop.is_set() else "timeout"
        return finish_record(record, live, error=_stopped_error(record["status"], timeout))
    except (CheckoutError, OSError) as exc:
        return finish_record(record, live, error=f"checkout: {exc}")
    record.update(base=checkout.base, checkout=str(checkout.path) if settings.keep else None)
    try:
        check_key(_model_flags(task, settings), checkout.path, _environment(task, settings))
        status, result, error = _run_process(task, settings, checkout.path, stop, live)
        record["status"] = status
        home = di_code_home(_environment(task, settings))
        record.update(_from_result(result, checkout.path, home))
        patch = patch_of(checkout)
        record.update(_patch_fields(patch.data))
        if patch.left_out:
            record["left_out"] = list(patch.left_out)
        if task.check is not None and status != "cancelled":
            record.update(_checked(task, settings, checkout.path, stop))
            if record["passed"] is None:  # stopped: the task runs again, its check with it
                record["status"], error = "cancelled", STOPPED
    except GitError as exc:  # the task ran, but what it changed cannot be read
        record["status"], error = "failed", f"patch: {exc}"
    except OSError as exc:
        record["status"], error = "failed", f"cannot run the task: {exc}"
    finally:
        if not settings.keep:
            remove_checkout(checkout)
    return finish_record(record, live, error=error)


def task_record(task: Task, status: str) -> dict[str, Any]:
    """A record's first fields; its repo as di-code shows any URL, a password in it hidden
    (`https://ci:***@host/org/r.git`): RESULTS.jsonl is read and shared more than tasks."""
    return {"id": task.id, "status": status, "repo": redact(task.repo)}


def finish_record(record: dict[str, Any], live: Live, *, error: str | None) -> dict[str, Any]:
    record.setdefault("answer", None)
    record.setdefault("patch", None)
    record.setdefault("turns", live.turns)
    record.setdefault("requests", None)  # only the run's own result line counts them all
    record.setdefault("tokens", live.tokens or None)
    record.setdefault("cost", live.cost or None)
    record.setdefault("session", None)
    record["duration"] = round(time.monotonic() - live.started, 3)
    record["error"] = None if error is None else _one_line(error)
    return record


def _one_line(error: str) -> str:
    """An error as the results show it: its first line, redacted, at most ERROR_CHARS long."""
    first = (error.strip().splitlines() or ["failed"])[0]
    shown = clip(first, ERROR_CHARS)
    return shown if len(shown) == len(first) else shown + "…"


def _run_process(
    task: Task, settings: RunSettings, cwd: Path, stop: threading.Event, live: Live
) -> tuple[str, dict[str, Any] | None, str | None]:
    logs = private_folder(settings.workdir / "logs")  # prompts and transcripts: the user's only
    stream_path, stderr_path = logs / f"{task.id}.jsonl", logs / f"{task.id}.stderr"
    prompt_path = logs / f"{task.id}.prompt"
    prompt_path.write_text(task.prompt, encoding="utf-8")
    timeout = task.timeout or settings.timeout
    with (
        prompt_path.open("rb") as stdin,
        stream_path.open("wb") as stdout,
        stderr_path.open("wb") as stderr,
    ):
        process = subprocess.Popen(
            _command(task, settings),
            cwd=cwd,
            env=_environment(task, settings),
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,
        )
    with stream_path.open("rb") as stream:
        reader = _StreamReader(stream, live)
        status = _wait(process, reader, stop, live, timeout)
    result = reader.result
    if status in ("timeout", "cancelled"):
        return status, result, _stopped_error(status, timeout)
    if result is None or result.get("is_error") or process.returncode != 0:
        return "failed", result, _failure(result, stderr_path, process.returncode)
    return "done", result, None


def _wait(
    process: subprocess.Popen[bytes],
    reader: _StreamReader,
    stop: threading.Event,
    live: Live,
    timeout: float | None,
) -> str:
    """done (the process ended on its own), cancelled or timeout (it was ended)."""
    exit_fd = _exit_fd(process.pid)
    exited = select.poll()  # poll, not select(): a descriptor number past 1024 is fine
    if exit_fd is not None:
        exited.register(exit_fd, select.POLLIN)
    try:
        while process.poll() is None:
            if stop.is_set() or _timed_out(live, timeout):
                kill_tree(process, STOP_GRACE)
                reader.read()
                return "cancelled" if stop.is_set() else "timeout"
            reader.read()
            if exit_fd is None:
                stop.wait(POLL_SECONDS)
            else:  # wakes the moment the process exits: no polling delay per task
                exited.poll(POLL_SECONDS * 1000)
    except BaseException:  # a Ray cancel raises KeyboardInterrupt here: the task ends too
        kill_tree(process, STOP_GRACE)
        raise
    finally:
        if exit_fd is not None:
            os.close(exit_fd)
    reader.read()
    return "done"


def _checked(task: Task, settings: RunSettings, cwd: Path, stop: threading.Event) -> dict[str, Any]:
    """`passed` and `check_output` of the task's check, run in its checkout."""
    assert task.check is not None
    env = _check_environment(task, settings)
    keeper = [sys.executable, "-m", CHILD_MODULE, "exec"]
    verdict = run_check(task.check, cwd, env, keeper, stop, task.timeout or settings.timeout)
    return {"passed": verdict.passed, "check_output": verdict.output}


def _timed_out(live: Live, timeout: float | None) -> bool:
    return timeout is not None and time.monotonic() - live.started > timeout


def _stopped_error(status: str, timeout: float | None) -> str:
    """The error of a task the batch ended: `cancelled` by a stop, or `timeout`."""
    return f"timed out after {timeout or 0:g} s" if status == "timeout" else STOPPED


def _exit_fd(pid: int) -> int | None:
    """A descriptor readable once `pid` exits (Linux pidfd), else None."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _command(task: Task, settings: RunSettings) -> list[str]:
    command = [sys.executable, "-m", CHILD_MODULE, "run", "--output-format", "stream-json"]
    command += ["--permission-mode", task.permission_mode or settings.permission_mode]
    model, provider, base_url = _model_flags(task, settings)
    for flag, value in (
        ("--model", model),
        ("--provider", provider),
        ("--base-url", base_url),
        ("--max-turns", task.max_turns or settings.max_turns),
        ("--tools", task.tools or settings.tools),
    ):
        if value is not None:
            command += [flag, str(value)]
    return [*command, "-"]


def _model_flags(task: Task, settings: RunSettings) -> ModelFlags:
    """A task's own model wins, and then the command line's provider is not its provider."""
    model = task.model or settings.model
    return model, settings.provider if not task.model else None, settings.base_url


def _environment(task: Task, settings: RunSettings) -> dict[str, str]:
    env = {**os.environ, **settings.env, **task.env, PARENT_VARIABLE: str(os.getpid())}
    if settings.request_slots is not None:
        env[SLOTS_VARIABLE] = settings.request_slots
    return env


def _check_environment(task: Task, settings: RunSettings) -> dict[str, str]:
    """The task's environment without the provider keys (program_env, as bash's commands get
    it): the check runs the task's tests, code the model may have written, unsandboxed."""
    from di_code.ai.redaction import holds_secret
    from di_code.config.key_variables import PRESET_KEYS
    from di_code.tools.process.program_env import KEY_VARIABLES, program_env

    env = _environment(task, settings)
    holding_key = {name for name, value in env.items() if holds_secret(value)}
    return program_env(KEY_VARIABLES | set(PRESET_KEYS.values()) | holding_key, env)


class _StreamReader:
    """Reads the task's stream-json file as it grows: each answer's usage into `live` (a turn
    ends only after its tools ran), the result kept."""

    def __init__(self, handle: BinaryIO, live: Live) -> None:
        self._handle = handle
        self._partial = b""
        self._live = live
        self.result: dict[str, Any] | None = None

    def read(self) -> None:
        data = self._partial + self._handle.read()
        *lines, self._partial = data.split(b"\n")
        for line in lines:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            message = event.get("message") or {}
            if event.get("type") == "message_end" and _is_reply(message):
                usage = message.get("usage") or {}
                self._live.turns += 1
                self._live.tokens += usage.get("total_tokens") or 0
                self._live.cost += (usage.get("cost") or {}).get("total") or 0.0
            elif event.get("type") == "result":
                self.result = event


def _is_reply(message: dict[str, Any]) -> bool:
    """A model's answer (not the user's prompt, nor a message made without a request)."""
    return message.get("role") == "assistant" and message.get("stop_reason") not in (
        "error",
        "aborted",
    )


def _from_result(result: dict[str, Any] | None, cwd: Path, home: Path) -> dict[str, Any]:
    if result is None:
        return {}
    usage = result.get("usage") or {}
    return {
        "answer": None if result.get("is_error") else result.get("result"),
        "turns": result.get("num_turns"),
        "requests": result.get("num_requests"),
        "tokens": usage.get("total_tokens"),
        "cost": (usage.get("cost") or {}).get("total"),
        "session": _session_file(result.get("session_id"), cwd, home),
    }


def _session_file(session_id: Any, cwd: Path, home: Path) -> str | None:
    """The session file in the task's own DI_CODE_HOME (its `env` may name another)."""
    if not isinstance(session_id, str) or not session_id:
        return None
    from di_code.session import SessionError, SessionStore

    try:
        return str(SessionStore(home).find(session_id, cwd, write=False).path)
    except (SessionError, OSError):
        return None


def _patch_fields(patch: bytes) -> dict[str, str]:
    """The patch as text; one that is not UTF-8 (a text file in another encoding changed) as
    base64 in `patch_base64` instead, so that it still applies byte for byte."""
    try:
        return {"patch": patch.decode("utf-8")}
    except UnicodeDecodeError:
        import base64

        return {"patch_base64": base64.b64encode(patch).decode("ascii")}


def _failure(result: dict[str, Any] | None, stderr_path: Path, code: int | None) -> str:
    if result is not None and result.get("is_error"):
        return str(result.get("result") or result.get("stop_reason"))
    lines = stderr_path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    return lines[-1] if lines else f"the task's process exited with {code}"
