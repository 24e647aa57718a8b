"""A background job's output file on a full disk (a real EFBIG: RLIMIT_FSIZE in the di-code
process, which needs no root, SIGXFSZ ignored as Python does): the job's last lines are still
read from memory, and the read says the file is short and how short, whether the disk
refused a write while the job ran or only the last flush when it ended."""

from __future__ import annotations

import resource
import subprocess
from pathlib import Path

from tests.cli.conftest import DI_CODE, cli_env
from tests.support.llm_server import LLMServer, ToolCallSpec, Turn

LIMIT = 1024 * 1024


def run_limited(home: Path, server: LLMServer, workspace: Path) -> subprocess.CompletedProcess[str]:
    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))

    return subprocess.run(
        [DI_CODE, "run", "--yes", "--sandbox", "off", "--no-session", "go"],
        cwd=workspace,
        env=cli_env(home, server),
        input="",
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=limited,
    )


def tool_results(server: LLMServer) -> list[str]:
    messages = server.requests[-1].body["messages"]
    return [m["content"] for m in messages if m["role"] == "tool"]


def test_a_job_whose_last_flush_the_disk_refuses_keeps_its_last_lines_and_says_so(
    llm_server: LLMServer, di_code_home: Path, workspace: Path
) -> None:
    """The file fills up to just under the limit; the job's last lines come later, few
    enough to wait in the file's buffer, and the disk refuses them only when the job ends
    and the file is closed (that refusal used to go unsaid: the read claimed a whole file)."""
    script = "head -c 1048000 /dev/zero | tr '\\0' a; echo; sleep 1; seq 1 200"
    llm_server.script(
        Turn(tool_calls=(ToolCallSpec("bash", {"command": script, "background": True}),)),
        Turn(tool_calls=(ToolCallSpec("job_output", {"job_id": 1, "wait": 60}),)),
        Turn(text="done"),
    )
    done = run_limited(di_code_home, llm_server, workspace)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    read = tool_results(llm_server)[-1]
    assert "exited with code 0" in read, read[-800:]
    assert read.split("\n\n")[1].endswith("\n199\n200"), read[-800:]
    said = read.split("[The output file keeps only the first ")[1]
    kept = int(said.split(" bytes")[0])
    started = tool_results(llm_server)[0]
    path = started.split("The whole output: ")[1].split("]")[0]  # its 1 MB line was cut
    assert Path(path).stat().st_size == kept <= LIMIT
