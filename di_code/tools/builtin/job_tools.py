"""The tools that read, feed, stop and list the background jobs bash started: job_output,
job_input, job_kill, job_list (their cards are in `cards.py`). Each reads the session's
`JobTable`; a job id that names no job is a one-line error the model can act on."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, ClassVar

from di_code.agent.tool import ToolOutput, ToolResult, ToolUpdate
from di_code.ai.types import TextContent
from di_code.system.abort import AbortSignal
from di_code.tools.builtin.job_cards import JOB_INPUT, JOB_KILL, JOB_LIST, JOB_OUTPUT
from di_code.tools.builtin.support.job_base import LOOK_AGAIN, Job
from di_code.tools.builtin.support.job_table import JobTable
from di_code.tools.common.base import CheckedTool
from di_code.tools.common.errors import ToolError

INPUT_WAIT = 1.0
QUIET = 0.2


@dataclass(frozen=True, slots=True)
class _JobTool(CheckedTool):
    jobs: JobTable

    def job(self, params: dict[str, Any]) -> Job:
        job_id = params["job_id"]
        job = self.jobs.jobs.get(job_id) if isinstance(job_id, int) else None
        if not isinstance(job, Job):
            known = ", ".join(map(str, self.jobs.jobs)) or "none yet"
            raise ToolError(f"No background job {job_id!r} (jobs: {known}); job_list lists them.")
        return job


async def _result(job: Job, waited: str) -> ToolResult:
    text = await job.take_output()
    if waited:
        text = f"{text}\n\n{waited}"
    details = {"job_id": job.id, "running": job.running, "exit_code": job.code,
               "full_output_path": job.log.path}  # fmt: skip
    return ToolResult([TextContent(text)], details)


@dataclass(frozen=True, slots=True)
class JobOutputTool(_JobTool):
    name: ClassVar[str] = JOB_OUTPUT.name
    description: ClassVar[str] = JOB_OUTPUT.description
    parameters: ClassVar[dict[str, Any]] = JOB_OUTPUT.parameters

    async def run(
        self, params: dict[str, Any], signal: AbortSignal, on_update: ToolUpdate | None
    ) -> ToolOutput:
        job = self.job(params)
        waited = await job.wait_for(float(params.get("wait", 0)), params.get("pattern"), signal)
        return await _result(job, waited)


@dataclass(frozen=True, slots=True)
class JobInputTool(_JobTool):
    name: ClassVar[str] = JOB_INPUT.name
    description: ClassVar[str] = JOB_INPUT.description
    parameters: ClassVar[dict[str, Any]] = JOB_INPUT.parameters

    async def run(
        self, params: dict[str, Any], signal: AbortSignal, on_update: ToolUpdate | None
    ) -> ToolOutput:
        job = self.job(params)
        if not job.running:
            raise ToolError(f"{job.title()}: it reads no more input.")
        pattern = params.get("pattern")
        wait = float(params.get("wait", INPUT_WAIT))
        typed_at = job.log.total
        refused = await job.type(params["text"], bool(params.get("eof")), signal)
        if refused is not None:
            raise ToolError(f"{job.title()}: {refused}.")
        if pattern is None:
            await settled(job, wait, signal)
            return await _result(job, "")
        return await _result(job, await job.wait_for(wait, pattern, signal, typed_at))


async def settled(job: Job, wait: float, signal: AbortSignal) -> None:
    """Until the job's output has come and settled (QUIET seconds without more), it ends, or
    `wait` seconds pass: the answer to what was typed, or a program's first lines."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait
    seen = job.log.total
    while job.log.total == seen and job.running and not signal.aborted:
        if deadline <= loop.time():
            return
        await job.changed(min(LOOK_AGAIN, deadline - loop.time()), signal)
    while job.log.total != seen and job.running and not signal.aborted:
        seen = job.log.total
        await job.changed(min(QUIET, deadline - loop.time()), signal)


@dataclass(frozen=True, slots=True)
class JobKillTool(_JobTool):
    name: ClassVar[str] = JOB_KILL.name
    description: ClassVar[str] = JOB_KILL.description
    parameters: ClassVar[dict[str, Any]] = JOB_KILL.parameters

    async def run(
        self, params: dict[str, Any], signal: AbortSignal, on_update: ToolUpdate | None
    ) -> ToolOutput:
        job = self.job(params)
        await job.kill()
        return await _result(job, "")


@dataclass(frozen=True, slots=True)
class JobListTool(_JobTool):
    name: ClassVar[str] = JOB_LIST.name
    description: ClassVar[str] = JOB_LIST.description
    parameters: ClassVar[dict[str, Any]] = JOB_LIST.parameters

    async def run(
        self, params: dict[str, Any], signal: AbortSignal, on_update: ToolUpdate | None
    ) -> ToolOutput:
        jobs = [job for job in self.jobs.jobs.values() if isinstance(job, Job)]
        await asyncio.gather(*(job.refresh() for job in jobs))
        rows = [f"{job.title()}; {job.log.total - job.cursor} bytes unread" for job in jobs]
        return [TextContent("\n".join(rows) or "No background jobs.")]
