"""`di-code batch` attacked from README's "Batch runs" and the classes of HOSTILE.md: hostile
task files, signals at each state of a batch, a task that ignores TERM or leaves its session,
two batches on one results file, full disks, git config that names programs, special files in
a copied folder, and keys in every channel the batch writes.

Every case runs the real `di-code batch` (real git, real processes, the loopback model)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from di_code.tools.process.sandbox import bubblewrap_works
from tests.batch.conftest import RunBatch, bash_call, make_repo, read_results, write_tasks
from tests.batch.conftest import run_batch as run_batch  # the fixture, for this folder too
from tests.cli.conftest import API_KEY, DI_CODE, cli_env
from tests.support.batch import start_batch
from tests.support.git import git
from tests.support.llm_server import HttpError, LLMServer, Turn
from tests.support.processes import processes_running, wait_until

TRACEBACK = "Traceback"


def ended(
    command: list[str], cwd: Path, env: dict[str, str], timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """`command` run to its end in `cwd`, its output as text."""
    return subprocess.run(
        command,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def task_line(**fields: object) -> str:
    return json.dumps({"repo": ".", "prompt": "go", **fields}) + "\n"


def stderr_lines_of_the_check(done: subprocess.CompletedProcess[str]) -> list[str]:
    """The check's lines (exit 2, no traceback), without the first one's `di-code: `."""
    assert done.returncode == 2, done.stderr
    assert TRACEBACK not in done.stderr
    return done.stderr.removeprefix("di-code: ").splitlines()


def in_small_disk(folder: Path, size: int, *command: str) -> list[str]:
    """`command` with `folder` a fresh file system of `size` bytes (bubblewrap's tmpfs)."""
    return ["bwrap", "--dev-bind", "/", "/", "--size", str(size), "--tmpfs", str(folder), *command]


# --- text from outside: the task file -----------------------------------------------------


def test_a_line_nested_thousands_deep_is_named_with_its_line_and_exit_2(
    run_batch: RunBatch, llm_server: LLMServer, tmp_path: Path
) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    (tmp_path / "t.jsonl").write_text(
        task_line(id="ok") + '{"id": "deep", "repo": ".", "prompt": "go", "env": ' + deep + "}\n"
    )
    lines = stderr_lines_of_the_check(run_batch("t.jsonl", "--out", "r.jsonl"))
    assert lines == ["t.jsonl:2: nested too deep to read"], lines
    assert not (tmp_path / "r.jsonl").exists() and not llm_server.requests


def test_a_lone_surrogate_in_any_text_is_refused_with_its_line(
    run_batch: RunBatch, llm_server: LLMServer, tmp_path: Path
) -> None:
    """JSON can spell a UTF-16 half (`\\ud800`) that no file, argument or variable can hold:
    let through, the task failed later (the prompt's log could not be written), or the whole
    results line could not be encoded. `\\udcff` is how Python spells a byte that is not UTF-8
    in a name: a folder so named exists here, and is still no text a task file can give."""
    (tmp_path / os.fsdecode(b"repo-\xff")).mkdir()
    (tmp_path / "t.jsonl").write_text(
        task_line(id="prompt", prompt="fix \ud800 this")
        + task_line(id="env", env={"NAME": "value \udcff"})
        + task_line(id="model", model="openai/m\udfff")
        + task_line(id="repo", repo="repo-\udcff")
        + task_line(id="fine")
    )
    lines = stderr_lines_of_the_check(run_batch("t.jsonl", "--out", "r.jsonl"))
    assert [line.split(": ")[0] for line in lines] == [f"t.jsonl:{n}" for n in (1, 2, 3, 4)], lines
    assert all("surrogate" in line for line in lines), lines
    assert not llm_server.requests


def test_a_field_given_twice_on_a_line_is_refused_with_its_line(
    run_batch: RunBatch, llm_server: LLMServer, tmp_path: Path
) -> None:
    """Which of two prompts (or ids, or repos) would run is a guess: the line is refused."""
    (tmp_path / "t.jsonl").write_text(
        task_line(id="fine")
        + '{"id": "a", "repo": ".", "prompt": "delete the tests", "prompt": "fix the tests"}\n'
        + '{"id": "b", "repo": ".", "prompt": "go", "env": {"X": "1", "X": "2"}}\n'
    )
    lines = stderr_lines_of_the_check(run_batch("t.jsonl", "--out", "r.jsonl"))
    assert [line.split(": ")[0] for line in lines] == ["t.jsonl:2", "t.jsonl:3"], lines
    assert "'prompt' is given twice" in lines[0] and "'X' is given twice" in lines[1]
    assert not llm_server.requests


def test_a_lone_surrogate_in_the_models_answer_is_recorded_and_the_batch_goes_on(
    run_batch: RunBatch, llm_server: LLMServer, tmp_path: Path
) -> None:
    """The model's stream spells `\\ud800` in its JSON: the answer reaches RESULTS.jsonl as
    valid UTF-8 (the half replaced), and the next task runs."""
    make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    write_tasks(
        tmp_path / "t.jsonl",
        [{"id": name, "repo": "repo", "prompt": "go"} for name in ("half", "next")],
    )
    llm_server.script(Turn(text="broken \ud800 half"), Turn(text="fine"))
    done = run_batch("t.jsonl", "--out", "r.jsonl", "--jobs", "1")
    assert TRACEBACK not in done.stderr
    results = read_results(tmp_path / "r.jsonl")  # the file is UTF-8 JSON lines
    assert results["half"]["status"] in ("done", "failed"), results["half"]
    assert results["half"]["answer"] in (None, "broken \ufffd half"), results["half"]
    assert results["next"]["answer"] == "fine"


def test_huge_numbers_either_run_or_are_refused_at_the_check(
    run_batch: RunBatch, llm_server: LLMServer, tmp_path: Path
) -> None:
    """A timeout of 1e308 s and a turn limit of 10**30 are no limits at all: the task runs."""
    make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    write_tasks(
        tmp_path / "t.jsonl",
        [{"id": "big", "repo": "repo", "prompt": "go", "timeout": 1e308, "max_turns": 10**30}],
    )
    llm_server.script(Turn(text="fine"))
    done = run_batch("t.jsonl", "--out", "r.jsonl")
    assert done.returncode == 0, done.stderr
    assert read_results(tmp_path / "r.jsonl")["big"]["answer"] == "fine"


# --- special files in a folder that is copied ----------------------------------------------


def test_a_copied_folder_with_special_files_a_link_loop_and_a_sparse_tib_runs(
    di_code_home: Path, llm_server: LLMServer, tmp_path: Path
) -> None:
    """A project folder outside git may hold a dev server's socket, a FIFO, a link loop and a
    sparse 1 TiB disk image. The copy opens no FIFO, copies no socket, keeps the loop a link,
    and writes no TiB (the workdir here has 16 MiB): the task runs on the rest, and what was
    not copied is named in `left_out`."""
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "code.py").write_text("print(1)\n")
    os.mkfifo(plain / "pipe")
    (plain / "loop").symlink_to("loop")
    with (plain / "disk.img").open("wb") as image:
        image.truncate(1 << 40)
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(plain / "dev.sock"))
    write_tasks(tmp_path / "t.jsonl", [{"id": "p", "repo": "plain", "prompt": "go"}])
    work = tmp_path / "work"
    work.mkdir()
    llm_server.script(Turn(text="read it"))
    command = [DI_CODE, "batch", "t.jsonl", "--out", "r.jsonl", "--workdir", str(work)]
    try:
        done = ended(
            in_small_disk(work, 16 << 20, *command),
            tmp_path,
            cli_env(di_code_home, llm_server),
            timeout=120,
        )
    finally:
        server.close()
    record = read_results(tmp_path / "r.jsonl")["p"]
    assert (done.returncode, record["status"]) == (0, "done"), record["error"]
    assert record["patch"] == ""
    named = sorted(name.split(":")[0] for name in record.get("left_out", []))
    assert named == ["dev.sock", "disk.img", "pipe"], record


# --- signals at each state, and work that does not end ---------------------------------------


def hanging_ssh(tmp_path: Path, marker: str) -> Path:
    """A GIT_SSH_COMMAND that never answers, ignores TERM and leaves a child in a session of
    its own: a clone from a server that hangs."""
    ssh = tmp_path / "hanging-ssh"
    ssh.write_text(
        "#!/bin/bash\ntrap '' TERM\n"
        f"setsid bash -c \"trap '' TERM; exec -a '{marker}-escaped' sleep 86400\" &\n"
        f"exec -a '{marker}' sleep 86400\n"
    )
    ssh.chmod(0o755)
    return ssh


@contextlib.contextmanager
def ended_after(driver: subprocess.Popen[str], marker: str = "") -> Iterator[None]:
    """Within: a test drives a batch; after it, whatever is left of the batch, and of the
    processes whose command line carries `marker`, is killed."""
    try:
        yield
    finally:
        driver.kill()
        for pid in processes_running(marker) if marker else ():
            with contextlib.suppress(ProcessLookupError):  # it ended meanwhile
                os.kill(pid, signal.SIGKILL)


def test_sigterm_while_a_clone_hangs_ends_the_batch_and_the_clones_programs(
    di_code_home: Path, llm_server: LLMServer, tmp_path: Path
) -> None:
    marker = "hostile-clone-8641"
    ssh = hanging_ssh(tmp_path, marker)
    write_tasks(tmp_path / "t.jsonl", [{"id": "c", "repo": "ssh://server/x.git", "prompt": "go"}])
    driver = start_batch(
        di_code_home, llm_server, tmp_path, "t.jsonl", "--out", "r.jsonl",
        GIT_SSH_COMMAND=str(ssh), GIT_SSH_VARIANT="simple",
    )  # fmt: skip
    with ended_after(driver, marker):
        wait_until(lambda: len(processes_running(marker)) >= 2, "the clone's ssh to hang")
        driver.terminate()
        _, err = driver.communicate(timeout=30)
        assert driver.returncode == 143, err
        wait_until(lambda: not processes_running(marker), "the clone's programs to end")
        assert read_results(tmp_path / "r.jsonl")["c"]["status"] == "cancelled"


def test_a_tasks_timeout_ends_a_clone_that_hangs(
    di_code_home: Path, llm_server: LLMServer, tmp_path: Path
) -> None:
    marker = "hostile-clone-8642"
    ssh = hanging_ssh(tmp_path, marker)
    write_tasks(tmp_path / "t.jsonl", [{"id": "c", "repo": "ssh://server/x.git", "prompt": "go"}])
    env = cli_env(di_code_home, llm_server, GIT_SSH_COMMAND=str(ssh), GIT_SSH_VARIANT="simple")
    try:
        done = ended(
            [DI_CODE, "batch", "t.jsonl", "--out", "r.jsonl", "--timeout", "2"], tmp_path, env
        )
        assert done.returncode == 1, done.stderr
        assert read_results(tmp_path / "r.jsonl")["c"]["status"] == "timeout"
        wait_until(lambda: not processes_running(marker), "the clone's programs to end")
    finally:
        for pid in processes_running(marker):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("stop", ["ctrl-c", "timeout"])
def test_a_task_whose_bash_ignores_term_and_leaves_its_session_is_ended_whole(
    di_code_home: Path, llm_server: LLMServer, tmp_path: Path, stop: str
) -> None:
    """Unsandboxed (no pid namespace to catch them): a sleeper that ignores TERM, a forked
    one, and one in a session of its own. Ctrl-C, or the task's timeout, ends all three."""
    marker = f"hostile-task-8643-{stop}"
    (di_code_home / "config.toml").write_text('[sandbox]\nmode = "off"\n')
    make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    write_tasks(tmp_path / "t.jsonl", [{"id": "t", "repo": "repo", "prompt": "go"}])
    command = (
        "trap '' TERM INT HUP; "
        f"setsid bash -c \"trap '' TERM INT HUP; exec -a {marker}-escaped sleep 86400\" & "
        f"(trap '' TERM INT HUP; exec -a {marker}-forked sleep 86400) & "
        f"exec -a {marker} sleep 86400"
    )
    llm_server.script(bash_call(command))
    limit = ["--timeout", "8"] if stop == "timeout" else []
    driver = start_batch(di_code_home, llm_server, tmp_path, "t.jsonl", "--out", "r.jsonl", *limit)
    with ended_after(driver, marker):
        wait_until(lambda: len(processes_running(marker)) >= 3, "the task's three sleepers")
        if stop == "ctrl-c":
            driver.send_signal(signal.SIGINT)
        _, err = driver.communicate(timeout=60)
        assert driver.returncode == (130 if stop == "ctrl-c" else 1), err
        wait_until(lambda: not processes_running(marker), "every process the task started")
        status = read_results(tmp_path / "r.jsonl")["t"]["status"]
        assert status == ("cancelled" if stop == "ctrl-c" else "timeout")


@pytest.mark.parametrize("kind", ["plain", "git"])
def test_a_workdir_that_is_a_tasks_repo_is_refused_before_anything_is_written_there(
    run_batch: RunBatch, llm_server: LLMServer, tmp_path: Path, kind: str
) -> None:
    """`--workdir proj` for a task on `proj`: its checkouts and logs would go into the folder
    the task copies (a copy of itself, without end) or into the user's work tree."""
    if kind == "git":
        make_repo(tmp_path / "proj", {"a.txt": "a\n"})
    else:
        (tmp_path / "proj").mkdir()
        (tmp_path / "proj" / "a.txt").write_text("a\n")
    write_tasks(tmp_path / "t.jsonl", [{"id": "t", "repo": "proj", "prompt": "go"}])
    before = sorted(path.name for path in (tmp_path / "proj").iterdir())
    done = run_batch("t.jsonl", "--out", "r.jsonl", "--workdir", "proj")
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines()[-1] == (
        f"di-code: --workdir {tmp_path / 'proj'} is the repo of task t: give another folder"
    )
    assert sorted(path.name for path in (tmp_path / "proj").iterdir()) == before
    assert not llm_server.requests


@pytest.mark.parametrize(
    ("number", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)]
)
def test_a_stop_while_the_task_file_is_a_fifo_nobody_writes_exits_at_once(
    di_code_home: Path, llm_server: LLMServer, tmp_path: Path, number: int, code: int
) -> None:
    """Start-up: `di-code batch <(make-tasks)` waits on its writer; a stop then ends it with
    the stop's code and no traceback."""
    fifo = tmp_path / "tasks.jsonl"
    os.mkfifo(fifo)
    driver = start_batch(di_code_home, llm_server, tmp_path, "tasks.jsonl", "--out", "r.jsonl")
    with ended_after(driver):
        writer = _write_end_once_read(fifo)
        driver.send_signal(number)
        _, err = driver.communicate(timeout=30)
        os.close(writer)
        assert driver.returncode in (code, -number), err
        assert TRACEBACK not in err


def _write_end_once_read(fifo: Path) -> int:
    """A write end of `fifo`, opened once a reader has it open (before, opening fails); kept
    open, so that the reader waits for data rather than seeing the file end."""
    opened: list[int] = []

    def open_write_end() -> bool:
        try:
            opened.append(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            return False
        return True

    wait_until(open_write_end, "the reader to open the FIFO")
    return opened[0]


def test_a_closed_stdout_stops_the_batch_and_records_what_ran(
    di_code_home: Path, llm_server: LLMServer, tmp_path: Path
) -> None:
    """`di-code batch ... --events | head -3`: once the reader is gone, the next event cannot
    be written. The batch stops as on Ctrl-C (the running task ended and recorded cancelled,
    the finished one recorded), says why in one line, and does not wait for the running task
    to end on its own."""
    marker = "hostile-head-8645"
    make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    write_tasks(
        tmp_path / "t.jsonl",
        [{"id": name, "repo": "repo", "prompt": "go"} for name in ("one", "two")],
    )
    # whichever task asks first sleeps; the other one's answer comes once stdout is closed
    llm_server.script(bash_call(f"exec -a {marker} sleep 86400"), Turn(text="late", first_delay=5))
    driver = start_batch(
        di_code_home, llm_server, tmp_path, "t.jsonl", "--out", "r.jsonl", "--events", "--jobs", "2"
    )
    with ended_after(driver, marker):
        assert driver.stdout is not None
        first = [json.loads(driver.stdout.readline())["event"] for _ in range(3)]
        assert first == ["begin", "start", "start"]
        wait_until(lambda: bool(processes_running(marker)), "the sleeping task")
        driver.stdout.close()  # as `head` exits
        assert driver.stderr is not None
        err = driver.stderr.read()  # the driver's end, within the test's timeout
        driver.wait(timeout=60)
        assert driver.returncode not in (0, 1), err
        assert TRACEBACK not in err
        wait_until(lambda: not processes_running(marker), "the sleeping task's end")
        statuses = {r["id"]: r["status"] for r in read_results(tmp_path / "r.jsonl").values()}
        assert sorted(statuses.values()) == ["cancelled", "done"], statuses


@pytest.mark.parametrize("option", ["--timeout", "--ray-timeout"])
def test_a_timeout_that_is_not_a_number_is_exit_2(
    run_batch: RunBatch, llm_server: LLMServer, tmp_path: Path, option: str
) -> None:
    """`--timeout nan` passed the range check and meant no limit at all."""
    write_tasks(tmp_path / "t.jsonl", [{"id": "t", "repo": ".", "prompt": "go"}])
    ray = ["--ray", "127.0.0.1:9"] if option == "--ray-timeout" else []
    done = run_batch("t.jsonl", "--out", "r.jsonl", option, "nan", *ray)
    assert done.returncode == 2, done.stderr
    assert option in done.stderr and TRACEBACK not in done.stderr
    assert not llm_server.requests and not (tmp_path / "r.jsonl").exists()


# --- two batches, full disks ------------------------------------------------------------------


def test_a_second_batch_on_the_same_results_through_a_link_is_refused(
    di_code_home: Path, llm_server: LLMServer, tmp_path: Path
) -> None:
    """The second batch names the first one's results file by a symlink and has a workdir of
    its own: the lock on the file still refuses it; a third names the first one's workdir by
    a symlink: refused too. The first batch's task runs on and its file stays whole."""
    marker = "hostile-two-8644"
    make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    write_tasks(tmp_path / "t.jsonl", [{"id": "t", "repo": "repo", "prompt": "go"}])
    (tmp_path / "same.jsonl").symlink_to(tmp_path / "r.jsonl")
    llm_server.script(bash_call(f"exec -a {marker} sleep 86400"))
    first = start_batch(di_code_home, llm_server, tmp_path, "t.jsonl", "--out", "r.jsonl")
    try:
        wait_until(lambda: bool(processes_running(marker)), "the first batch's task")
        second = ended(
            [DI_CODE, "batch", "t.jsonl", "--out", "same.jsonl", "--workdir", "elsewhere"],
            tmp_path,
            cli_env(di_code_home, llm_server),
        )
        assert second.returncode == 2, second.stderr
        assert second.stderr.splitlines()[-1].endswith("is being written by another batch")
        (tmp_path / "work-link").symlink_to(tmp_path / "r.jsonl.work")
        third = ended(
            [DI_CODE, "batch", "t.jsonl", "--out", "other.jsonl", "--workdir", "work-link"],
            tmp_path,
            cli_env(di_code_home, llm_server),
        )
        assert third.returncode == 2, third.stderr
        assert third.stderr.splitlines()[-1].endswith("is in use by another batch")
        assert bool(processes_running(marker))  # the first one's task runs on
        first.send_signal(signal.SIGINT)
        first.communicate(timeout=60)
        assert first.returncode == 130
        lines = (tmp_path / "r.jsonl").read_text().splitlines()
        assert [json.loads(line)["status"] for line in lines] == ["cancelled"]
    finally:
        first.kill()


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_results_file_that_is_no_regular_file_is_exit_2_at_once(
    run_batch: RunBatch, llm_server: LLMServer, tmp_path: Path, kind: str
) -> None:
    """`--out` a FIFO (as `--out >(jq ...)` gives) waits forever for a reader, and a device
    such as /dev/full is read without end for the earlier results: neither can be appended
    and resumed. Refused in one line before anything runs."""
    write_tasks(tmp_path / "t.jsonl", [{"id": "t", "repo": ".", "prompt": "go"}])
    if kind == "fifo":
        os.mkfifo(tmp_path / "r.jsonl")
    else:
        (tmp_path / "r.jsonl").symlink_to("/dev/full")
    done = run_batch("t.jsonl", "--out", "r.jsonl", timeout=30)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("di-code: --out r.jsonl: ") and done.stderr.count("\n") == 1
    assert not llm_server.requests


def test_an_earlier_result_line_nested_thousands_deep_is_no_result(
    run_batch: RunBatch, llm_server: LLMServer, tmp_path: Path
) -> None:
    """Resume reads every earlier line: one no JSON parser can take is not a result."""
    make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    write_tasks(tmp_path / "t.jsonl", [{"id": "t", "repo": "repo", "prompt": "go"}])
    deep = '{"id": "t", "status": "done", "x": ' + "[" * 100_000 + "]" * 100_000 + "}\n"
    (tmp_path / "r.jsonl").write_text(deep)
    llm_server.script(Turn(text="ran"))
    done = run_batch("t.jsonl", "--out", "r.jsonl")
    assert done.returncode == 0, done.stderr
    last = json.loads((tmp_path / "r.jsonl").read_text().splitlines()[-1])
    assert last["answer"] == "ran"


def test_results_on_a_disk_that_fills_are_said_in_one_line_and_stay_whole_lines(
    di_code_home: Path, llm_server: LLMServer, tmp_path: Path
) -> None:
    """The results folder has 64 KiB; the task's patch is bigger: the append fails. The batch
    says so in one line (no traceback, not a success), and the file holds whole lines only."""
    (di_code_home / "config.toml").write_text('[sandbox]\nmode = "off"\n')
    make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    write_tasks(tmp_path / "t.jsonl", [{"id": "t", "repo": "repo", "prompt": "go"}])
    small = tmp_path / "small"
    small.mkdir()
    llm_server.script(bash_call("seq 1 40000 > big.txt"), Turn(text="wrote"))
    command = [DI_CODE, "batch", "t.jsonl", "--out", f"{small}/r.jsonl", "--workdir", "work"]
    script = f"{' '.join(command)}; code=$?; cat {small}/r.jsonl > kept.jsonl; exit $code"
    done = ended(
        in_small_disk(small, 1 << 16, "bash", "-c", script),
        tmp_path,
        cli_env(di_code_home, llm_server, DI_CODE_HOME=str(di_code_home)),
        timeout=120,
    )
    assert done.returncode not in (0, 1), done.stderr
    assert TRACEBACK not in done.stderr
    assert "No space left on device" in done.stderr.splitlines()[-1], done.stderr
    kept = (tmp_path / "kept.jsonl").read_text()
    assert kept == "" or (kept.endswith("\n") and all(map(json.loads, kept.splitlines())))


def test_a_workdir_on_a_full_disk_fails_that_task_in_one_line_and_the_next_runs(
    di_code_home: Path, llm_server: LLMServer, tmp_path: Path
) -> None:
    """The workdir is a 1 MiB file system; the repository's checkout needs 3 MiB: the task
    fails with one line (git's own words: "Out of diskspace"), the result is written, and
    the next task, on a small repository, still runs."""
    (di_code_home / "config.toml").write_text('[sandbox]\nmode = "off"\n')
    big = make_repo(tmp_path / "big", {"a.txt": "a\n"})
    (big / "blob.bin").write_bytes(os.urandom(3 << 20))
    git(big, "add", "-A")
    git(big, "commit", "--quiet", "-m", "big")
    small = make_repo(tmp_path / "small", {"a.txt": "a\n"})
    tasks = [{"id": "big", "repo": str(big), "prompt": "go"}]
    tasks.append({"id": "small", "repo": str(small), "prompt": "go"})
    write_tasks(tmp_path / "t.jsonl", tasks)
    work = tmp_path / "work"
    work.mkdir()
    llm_server.script(Turn(text="small done"))
    command = [DI_CODE, "batch", "t.jsonl", "--out", "r.jsonl", "--workdir", str(work)]
    done = ended(
        in_small_disk(work, 1 << 20, *command, "--jobs", "1"),
        tmp_path,
        cli_env(di_code_home, llm_server),
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert TRACEBACK not in done.stderr
    results = read_results(tmp_path / "r.jsonl")
    assert results["big"]["status"] == "failed"
    assert results["big"]["error"].startswith("checkout: ") and "space" in results["big"]["error"]
    assert results["small"]["answer"] == "small done"


# --- programs git config names -----------------------------------------------------------------


def test_the_users_insteadof_to_ext_runs_nothing(
    di_code_home: Path, llm_server: LLMServer, tmp_path: Path
) -> None:
    """~/.gitconfig rewrites an https URL to `ext::` (a command): git refuses the transport,
    so the task fails in one line and no command ran."""
    home = tmp_path / "home"
    home.mkdir()
    marker = tmp_path / "ext-ran"
    (home / ".gitconfig").write_text(
        f'[url "ext::sh -c touch% {marker}% >&2"]\n\tinsteadOf = https://example.invalid/\n'
    )
    write_tasks(
        tmp_path / "t.jsonl",
        [{"id": "u", "repo": "https://example.invalid/org/x.git", "prompt": "go"}],
    )
    done = ended(
        [DI_CODE, "batch", "t.jsonl", "--out", "r.jsonl"],
        tmp_path,
        cli_env(di_code_home, llm_server, HOME=str(home)),
    )
    assert done.returncode == 1, done.stderr
    record = read_results(tmp_path / "r.jsonl")["u"]
    assert record["status"] == "failed" and record["error"].startswith("checkout: ")
    assert not marker.exists() and not llm_server.requests


def test_a_file_url_source_whose_config_includes_programs_runs_nothing(
    run_batch: RunBatch, llm_server: LLMServer, tmp_path: Path
) -> None:
    """The source repository's own config (through an include, and an alternate object store
    whose config names more) names an fsmonitor, a smudge filter, an upload-pack hook, an
    alternate-refs command and a post-checkout hook; a file:// clone and the task's patch run
    none of them."""
    marks = tmp_path / "marks"
    marks.mkdir()
    other = make_repo(tmp_path / "other", {"o.txt": "o\n"})
    source = make_repo(tmp_path / "source", {"a.txt": "a\n", ".gitattributes": "* filter=x\n"})
    programs = {
        "core.fsmonitor": f"touch {marks}/fsmonitor; false",
        "filter.x.smudge": f"touch {marks}/smudge; cat",
        "filter.x.clean": f"touch {marks}/clean; cat",
        "uploadpack.packObjectsHook": f"touch {marks}/pack-hook; false",
        "core.alternateRefsCommand": f"touch {marks}/alternate-refs; false",
        "core.pager": f"touch {marks}/pager; cat",
    }
    included = tmp_path / "included.cfg"
    included.write_text("".join(_config_line(k, v) for k, v in programs.items()))
    with (source / ".git" / "config").open("a") as config:
        config.write(f"[include]\n\tpath = {included}\n")
    with (other / ".git" / "config").open("a") as config:
        config.write(f"[include]\n\tpath = {included}\n")
    (source / ".git" / "objects" / "info" / "alternates").write_text(
        str(other / ".git" / "objects") + "\n"
    )
    hook = source / ".git" / "hooks" / "post-checkout"
    hook.write_text(f"#!/bin/sh\ntouch {marks}/hook\n")
    hook.chmod(0o755)
    write_tasks(
        tmp_path / "t.jsonl",
        [{"id": "f", "repo": f"file://{source}", "ref": "main", "prompt": "go"}],
    )
    llm_server.script(Turn(text="looked"))
    done = run_batch("t.jsonl", "--out", "r.jsonl")
    assert done.returncode == 0, done.stderr
    assert read_results(tmp_path / "r.jsonl")["f"]["patch"] == ""
    assert sorted(path.name for path in marks.iterdir()) == []


def _config_line(key: str, value: str) -> str:
    section, _, name = key.rpartition(".")
    head, _, sub = section.partition(".")
    title = f'{head} "{sub}"' if sub else head
    return f'[{title}]\n\t{name} = "{value}"\n'


# --- keys ----------------------------------------------------------------------------------------


def test_keys_planted_in_answers_errors_and_a_tasks_env_appear_nowhere(
    di_code_home: Path, llm_server: LLMServer, tmp_path: Path
) -> None:
    """The driver's key echoed in an answer, a task's own key (in its `env`) echoed in an
    error body: neither is in RESULTS.jsonl, the events, stderr or the task logs."""
    own_key = "sk-own-task-key-0987654321"
    make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    write_tasks(
        tmp_path / "t.jsonl",
        [
            {"id": "echo", "repo": "repo", "prompt": "go"},
            {"id": "own", "repo": "repo", "prompt": "go", "env": {"OPENAI_API_KEY": own_key}},
        ],
    )
    llm_server.script(
        Turn(text=f"your key is {API_KEY}, part {API_KEY[:14]}"),
        HttpError(400, f"invalid key {own_key}", headers={}),
    )
    done = ended(
        [DI_CODE, "batch", "t.jsonl", "--out", "r.jsonl", "--events", "--jobs", "1", "--keep"],
        tmp_path,
        cli_env(di_code_home, llm_server),
    )
    assert done.returncode == 1, done.stderr
    results = read_results(tmp_path / "r.jsonl")
    assert results["echo"]["status"] == "done" and "***" in results["echo"]["answer"]
    assert results["own"]["status"] == "failed" and "***" in results["own"]["error"]
    written = [done.stdout, done.stderr, (tmp_path / "r.jsonl").read_text()]
    written += [p.read_text() for p in (tmp_path / "r.jsonl.work" / "logs").iterdir()]
    for text in written:
        for key in (API_KEY, own_key):
            assert key[:12] not in text


def test_a_token_in_a_repo_url_is_not_written_to_the_results(
    di_code_home: Path, llm_server: LLMServer, tmp_path: Path
) -> None:
    """CI clones with `https://x-access-token:TOKEN@host/...`: the clone fails here (nothing
    listens), and the token is in none of the batch's outputs."""
    token = "ghs_hostileToken0123456789abcdef"
    write_tasks(
        tmp_path / "t.jsonl",
        [{"id": "u", "repo": f"https://ci:{token}@127.0.0.1:9/o/r.git", "prompt": "go"}],
    )
    done = ended(
        [DI_CODE, "batch", "t.jsonl", "--out", "r.jsonl", "--events"],
        tmp_path,
        cli_env(di_code_home, llm_server),
    )
    assert done.returncode == 1, done.stderr
    for text in (done.stdout, done.stderr, (tmp_path / "r.jsonl").read_text()):
        assert token[:12] not in text


# --- the sandbox notice ------------------------------------------------------------------


@pytest.mark.skipif(not bubblewrap_works(), reason="needs a working bubblewrap")
@pytest.mark.parametrize("name", ["DI_CODE_HOME", "HOME"])
def test_a_relative_home_in_a_tasks_env_cannot_let_the_repository_turn_the_sandbox_off(
    run_batch: RunBatch, llm_server: LLMServer, tmp_path: Path, name: str
) -> None:
    """`env: {"DI_CODE_HOME": "home"}`: the batch read ./home in its own folder (nothing
    there: sandboxed, it said), while the task's run read `home` in its checkout, where the
    repository committed a config that turns the sandbox off. A relative home is refused."""
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    config = repo / "home" / ("config.toml" if name == "DI_CODE_HOME" else ".di-code/config.toml")
    config.parent.mkdir(parents=True)
    config.write_text('[sandbox]\nmode = "off"\n')
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", "the repository's own di-code home")
    write_tasks(
        tmp_path / "t.jsonl",
        [{"id": "t", "repo": "repo", "prompt": "go", "env": {name: "home"}}],
    )
    mark = tmp_path / "written-from-the-task"
    llm_server.script(bash_call(f"touch {mark}; echo tried"), Turn(text="tried"))
    lines = stderr_lines_of_the_check(run_batch("t.jsonl", "--out", "r.jsonl"))
    assert lines == [f"t.jsonl:1: env {name!r} must be an absolute path (the task runs elsewhere)"]
    assert not mark.exists() and not llm_server.requests


@pytest.mark.skipif(not bubblewrap_works(), reason="needs a working bubblewrap")
def test_a_tasks_own_home_folder_gives_the_notice_and_holds_its_session(
    di_code_home: Path, llm_server: LLMServer, tmp_path: Path
) -> None:
    """Without DI_CODE_HOME, a task whose `env` names another HOME runs with
    HOME/.di-code's config (here: sandbox off): the batch says so, and the record's
    `session` is that home's session file."""
    theirs = tmp_path / "their-home"
    (theirs / ".di-code").mkdir(parents=True)
    (theirs / ".di-code" / "config.toml").write_text('[sandbox]\nmode = "off"\n')
    mine = tmp_path / "my-home"
    mine.mkdir()
    make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    write_tasks(
        tmp_path / "t.jsonl",
        [{"id": "t", "repo": "repo", "prompt": "go", "env": {"HOME": str(theirs)}}],
    )
    mark = tmp_path / "written-from-the-task"
    llm_server.script(bash_call(f"touch {mark}; echo tried"), Turn(text="tried"))
    env = cli_env(di_code_home, llm_server, HOME=str(mine))
    del env["DI_CODE_HOME"]
    done = ended([DI_CODE, "batch", "t.jsonl", "--out", "r.jsonl"], tmp_path, env)
    assert done.returncode == 0, done.stderr
    assert mark.exists()  # the task's own config turned the sandbox off
    assert "unsandboxed" in done.stderr.splitlines()[0], done.stderr
    session = read_results(tmp_path / "r.jsonl")["t"]["session"]
    assert session is not None and Path(session).is_relative_to(theirs)
