"""The figures of docs/benchmarks.md § Batch runs (issue 27), standalone:

    python -m scripts.bench.batch_bench [--tasks 20] [--sim-tasks 10000]

1. Scheduling overhead per task, local: the mean task duration inside `di-code batch` (checkout,
   the `di-code run` process, patch, clean-up) against plain `di-code run` processes doing the
   same one-request task in a repository; and the checkout + patch + removal alone, in-process.
2. Throughput against --jobs on the loopback model, each request answered after a fixed
   latency (the model's time, during which a task waits).
3. The simulated 10,000-task batch (scripts/bench/batch_sim.py, faux provider): the driver's
   resident memory as results accumulate, and a SIGKILL half-way then a resume: the results
   file must end with every id exactly once.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from di_code.batch.checkout import make_checkout, patch_of, remove_checkout
from scripts.bench.loopback import LoopbackServer
from scripts.bench.wire import Reply, chat_sse, words_of

DI_CODE = str(Path(sys.executable).parent / "di-code")


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=b", "-c", "user.email=b@b", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


def make_repo(folder: Path, files: int = 50) -> Path:
    folder.mkdir(parents=True)
    git(folder, "init", "--quiet")
    for number in range(files):
        (folder / f"file{number}.py").write_text(f"value = {number}\n" * 20)
    git(folder, "add", "-A")
    git(folder, "commit", "--quiet", "-m", "first")
    return folder


def environment(home: Path, server: LoopbackServer) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL"))}
    env.update(
        DI_CODE_HOME=str(home),
        DI_CODE_DISCOVERY="",
        OPENAI_API_KEY="bench-key",
        OPENAI_BASE_URL=server.base_url,
        DI_CODE_MODEL="openai/bench-model",
    )
    return env


def write_tasks(path: Path, repo: Path, count: int) -> Path:
    lines = (json.dumps({"id": f"t{n}", "repo": str(repo), "prompt": "hi"}) for n in range(count))
    path.write_text("\n".join(lines) + "\n")
    return path


def run_batch(work: Path, env: dict[str, str], tasks: Path, jobs: int) -> float:
    out = work / f"results-{time.monotonic_ns()}.jsonl"
    started = time.monotonic()
    done = subprocess.run(
        [DI_CODE, "batch", str(tasks), "--out", str(out), "--jobs", str(jobs)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"batch failed: {done.stderr.strip()}")
    return wall


def timed_batch(env: dict[str, str], tasks: Path, out: Path, *extra: str) -> float:
    started = time.monotonic()
    subprocess.run(
        [DI_CODE, "batch", str(tasks), "--out", str(out), *extra],
        env=env,
        capture_output=True,
        check=True,
    )
    return time.monotonic() - started


def dispatch_ms(env: dict[str, str], tasks: Path, out: Path, *extra: str) -> tuple[float, float]:
    """(the median task duration, the driver's time per task between tasks): the batch's wall
    less its start and end (a rerun that skips every task) less the tasks' own durations. On
    Ray this includes the batch's one worker start (its imports), spread over the tasks."""
    wall = timed_batch(env, tasks, out, *extra)
    empty = timed_batch(env, tasks, out, *extra)
    durations = [json.loads(line)["duration"] for line in out.read_text().splitlines()]
    between = (wall - empty - sum(durations)) / len(durations)
    return statistics.median(durations) * 1000, between * 1000


def overhead(work: Path, count: int) -> None:
    repo = make_repo(work / "repo")
    with LoopbackServer(chat_sse(Reply(words_of(5)))) as server:
        env = environment(work / "home", server)
        plain = []
        for _ in range(count):
            started = time.monotonic()
            subprocess.run(
                [DI_CODE, "run", "--output-format", "json", "--yes", "hi"],
                cwd=repo,
                env=env,
                capture_output=True,
                check=True,
            )
            plain.append(time.monotonic() - started)
        tasks = write_tasks(work / "tasks.jsonl", repo, count)
        duration, between = dispatch_ms(env, tasks, work / "overhead.jsonl", "--jobs", "1")
        git_parts = []
        for number in range(count):
            started = time.monotonic()
            checkout = make_checkout(str(repo), None, work / "direct" / str(number), f"d{number}")
            patch_of(checkout)
            remove_checkout(checkout)
            git_parts.append(time.monotonic() - started)
        plain_ms = statistics.median(plain) * 1000
        print(f"plain `di-code run`, median            {plain_ms:7.1f} ms")
        print(f"task inside batch, median duration     {duration:7.1f} ms")
        print(
            f"checkout + patch + removal, median     {statistics.median(git_parts) * 1000:7.1f} ms"
        )
        print(f"driver time between tasks              {between:7.1f} ms")
        extra = duration - plain_ms + between
        print(f"overhead per task (duration - plain + between) {extra:6.1f} ms")
        ray_overhead(work, env, tasks, duration - plain_ms)


def ray_overhead(work: Path, env: dict[str, str], tasks: Path, local_extra: float) -> None:
    """The same tasks on a one-CPU Ray head on 127.0.0.1 (started here, stopped by its process
    group), when Ray is installed."""
    if importlib.util.find_spec("ray") is None:
        print("ray: not installed (pip install 'di-code[ray]'): skipped")
        return
    temp = tempfile.mkdtemp(prefix="ray-", dir="/tmp")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [str(Path(sys.executable).parent / "ray"), "start", "--head", "--block"]
    command += [f"--port={port}", f"--temp-dir={temp}", "--node-ip-address=127.0.0.1"]
    command += ["--num-cpus=1", "--include-dashboard=false", "--disable-usage-stats"]
    head = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)  # fmt: skip
    try:
        while socket.socket().connect_ex(("127.0.0.1", port)) != 0:
            time.sleep(0.1)
        address = f"127.0.0.1:{port}"
        duration, between = dispatch_ms(env, tasks, work / "ray.jsonl", "--ray", address)
        print(f"ray: task duration on the worker, median {duration:7.1f} ms")
        print(f"ray: driver time between tasks           {between:7.1f} ms")
        print(f"ray: overhead per task (local extra + between) {local_extra + between:6.1f} ms")
    finally:
        os.killpg(head.pid, signal.SIGKILL)
        head.wait()
        shutil.rmtree(temp, ignore_errors=True)


def throughput(work: Path, count: int, latency: float, jobs_list: list[int]) -> None:
    repo = make_repo(work / "repo-throughput")

    def slow_model(_arrival: object) -> None:
        time.sleep(latency)

    with LoopbackServer(chat_sse(Reply(words_of(5))), on_arrival=slow_model) as server:
        env = environment(work / "home", server)
        tasks = write_tasks(work / "tasks-throughput.jsonl", repo, count)
        base = None
        for jobs in jobs_list:
            wall = run_batch(work, env, tasks, jobs)
            rate = count / wall
            base = base or rate
            print(f"--jobs {jobs}: {count} tasks in {wall:5.1f} s, {rate:5.2f} tasks/s, "
                  f"x{rate / base:4.2f}")  # fmt: skip


def simulate(work: Path, count: int, jobs: int) -> None:
    tasks = work / "sim-tasks.jsonl"
    lines = (json.dumps({"id": f"task-{n:05d}", "repo": ".", "prompt": "p"}) for n in range(count))
    tasks.write_text("\n".join(lines) + "\n")
    results = work / "sim-results.jsonl"
    command = [sys.executable, "-m", "scripts.bench.batch_sim", str(tasks), str(results)]
    command.append(str(jobs))
    first = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    while not results.exists() or results.stat().st_size < 40 * count:  # about half the lines
        time.sleep(0.01)
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    assert first.stderr is not None
    first_log = first.stderr.read().split("\n")
    written = len(results.read_bytes().split(b"\n")) - 1
    started = time.monotonic()
    second = subprocess.run(command, stderr=subprocess.PIPE, text=True, check=True)
    resume_wall = time.monotonic() - started
    ids = [record["id"] for record in map(_json_or_none, results.read_text().split("\n")) if record]
    print(f"killed after {written} complete lines; resumed in {resume_wall:.1f} s")
    print(f"results: {len(ids)} lines, {len(set(ids))} distinct ids of {count}")
    print("driver memory (VmRSS, KiB) before the kill:", " | ".join(first_log[:-1][-4:]))
    print("driver memory (VmRSS, KiB) of the resumed run:", " | ".join(second.stderr.split("\n")))


def _json_or_none(line: str) -> dict[str, str] | None:
    """A result line, or None for the line a kill cut short (not a result) and the end."""
    try:
        record: dict[str, str] = json.loads(line)
        return record
    except ValueError:
        return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--jobs", default="1,2,4,8")
    parser.add_argument("--sim-tasks", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="batch-bench-") as folder:
        work = Path(folder)
        print("## scheduling overhead (local, --jobs 1)")
        overhead(work, args.tasks)
        print(f"## throughput against --jobs (model latency {args.latency:g} s)")
        throughput(work, args.tasks, args.latency, [int(n) for n in args.jobs.split(",")])
        print(f"## simulated batch of {args.sim_tasks} tasks (faux provider), kill + resume")
        simulate(work, args.sim_tasks, 8)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
