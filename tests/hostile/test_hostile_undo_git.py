"""Undo and di-code's own git attacked from README's "Undo" section and the Threat model's
"git" and "Undo" rows, with HOSTILE.md's classes: names and paths (control characters,
invalid UTF-8, twins, links, hard links, special files), programs a repository can name (config
includes, a `.git` file, a foreign owner, FIFOs where git reads its config) and concurrency and
failure (a signal during an undo or a checkpoint, a full disk during a restore).

Every case drives the real `di-code run` against the loopback model, in a real git repository,
then `di-code undo --yes`; after each the user's files are whole and undo put the right bytes
in the right file, or kept them and said why."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.cli.conftest import DI_CODE, RunDiCode, cli_env
from tests.cli.conftest import workspace as workspace  # the fixture, for this folder too
from tests.support.git import git
from tests.support.llm_server import LLMServer, Turn, call
from tests.support.processes import MARK, marked, wait_until
from tests.support.undo_cli import planted

TRACEBACK = "Traceback"


def bash(command: str) -> tuple[Turn, ...]:
    """The model's one bash call, then its answer."""
    return call("bash", {"command": command}, "c1"), Turn(text="done")


def committed(folder: Path, files: dict[bytes, bytes]) -> Path:
    """A repository in `folder` whose first commit holds `files` (names as bytes)."""
    git(folder, "init", "-q", "-b", "main")
    for name, data in files.items():
        path = os.path.join(os.fsencode(folder), name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    git(folder, "add", "-A")
    git(folder, "commit", "-qm", "first")
    return folder


def undo(run_di_code: RunDiCode) -> subprocess.CompletedProcess[str]:
    """`di-code undo --yes`, its output as text (a byte that is not UTF-8 kept as an escape)."""
    done = run_di_code("undo", "--yes")
    assert TRACEBACK not in done.stderr, done.stderr
    return done


@pytest.fixture
def run_di_code(di_code_home: Path, workspace: Path, llm_server: LLMServer) -> RunDiCode:
    """tests/cli's `run_di_code`, but output that is not UTF-8 is read, not a crash."""

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        env = cli_env(di_code_home, llm_server)
        done = subprocess.run(
            [DI_CODE, *args], cwd=workspace, env=env, input=b"", capture_output=True, timeout=120
        )
        out, err = (raw.decode(errors="surrogateescape") for raw in (done.stdout, done.stderr))
        return subprocess.CompletedProcess(done.args, done.returncode, out, err)

    return run


# Names and paths ---------------------------------------------------------------------------

ODD_NAMES = [
    b"new\nline.txt",
    b"ends-in-cr\r",
    b"tab\tin.txt",
    b"-rf",
    b"--force",
    b" leading and trailing ",
    b"not-utf8-\xff\xfe.txt",
    "caf\u00e9.txt".encode(),  # NFC
    "cafe\u0301.txt".encode(),  # NFD: another file on Linux
    b"Case.txt",
    b"case.txt",
    b"x" * 255,
    b"dir with space/..dots..",
]


def test_names_git_would_split_or_trim_come_back_byte_exact(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    """Each odd name is a tracked file the prompt's bash overwrites, and a new `made-` twin it
    creates: undo gives each tracked name its own bytes back and deletes exactly the twins."""
    originals = {name: b"original of " + name for name in ODD_NAMES}
    committed(workspace, originals)
    root = os.fsencode(workspace)
    script = os.path.join(root, b"..", b"script.py")
    with open(script, "wb") as f:  # bash would need quoting for each name: Python takes bytes
        f.write(
            b"import os\n"
            + b"for name in %r:\n" % (ODD_NAMES,)
            + b"    open(name, 'wb').write(b'model wrote ' + name)\n"
            + b"    made = os.path.join(os.path.dirname(name), b'made-' + os.path.basename(name))\n"
            + b"    open(made[:255], 'wb').write(b'new')\n"
        )
    llm_server.script(*bash(f"python3 {os.fsdecode(script)}"))
    ran = run_di_code("run", "--yes", "--sandbox", "off", "touch every odd name")
    assert ran.returncode == 0, ran.stderr
    assert (
        Path(os.fsdecode(os.path.join(root, ODD_NAMES[0]))).read_bytes()
        == b"model wrote " + ODD_NAMES[0]
    )
    done = undo(run_di_code)
    assert done.returncode == 0, done.stderr
    listed = subprocess.run(["git", "ls-files", "-z", "-o"], cwd=workspace, capture_output=True)
    assert listed.stdout == b"", listed.stdout  # every made- twin deleted, nothing else new
    for name, data in originals.items():
        with open(os.path.join(root, name), "rb") as f:
            assert f.read() == data, name
    assert "restore 13, delete 13, keep 0" in done.stdout


def test_a_file_named_like_undos_own_temp_file_is_never_deleted(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    """Undo wrote `notes.txt` through `.notes.txt.di-code-undo`, deleting whatever had that
    name first: a file of the user's that no tool made. It is the user's and stays."""
    committed(workspace, {b"notes.txt": b"notes\n"})
    mine = workspace / ".notes.txt.di-code-undo"
    mine.write_bytes(b"the user's own file\n")
    llm_server.script(*bash("echo model > notes.txt"))
    assert run_di_code("run", "--yes", "change notes").returncode == 0

    done = undo(run_di_code)
    assert done.returncode == 0, done.stderr
    assert (workspace / "notes.txt").read_bytes() == b"notes\n"
    assert mine.read_bytes() == b"the user's own file\n"
    assert sorted(os.listdir(workspace)) == [".git", ".notes.txt.di-code-undo", "notes.txt"]


def test_a_name_with_a_newline_cannot_forge_a_line_of_the_plan(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    """Undo's plan and report are one line per path, and the user answers y/N on them: a file
    the model names `x\\ndeleted .env` must not print a line `deleted .env`, nor `x\\nundone:`
    an undo that did not happen."""
    committed(workspace, {b"a.txt": b"a\n"})
    llm_server.script(
        *bash("touch \"$(printf 'x\\ndeleted .env')\" \"$(printf 'y\\nundone: prompt 9')\"")
    )
    assert run_di_code("run", "--yes", "make them").returncode == 0

    done = undo(run_di_code)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "deleted .env" not in lines, lines
    assert not any(line.startswith("undone: prompt 9") for line in lines), lines


def test_a_name_holding_terminal_escapes_is_never_printed_raw_by_undo(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    """README: the sanitizer stands between the terminal and every string of `undo`. A file
    the model names `\\x1b]0;pwned\\x07` (a title change) or `\\x1b[2J` (clear screen)."""
    committed(workspace, {b"a.txt": b"a\n"})
    llm_server.script(*bash("touch \"$(printf '\\033]0;pwned\\007')\" \"$(printf 'x\\033[2J')\""))
    assert run_di_code("run", "--yes", "make them").returncode == 0
    assert len(os.listdir(workspace)) == 4  # .git, a.txt and the two names

    done = undo(run_di_code)
    assert done.returncode == 0, done.stderr
    assert sorted(os.listdir(workspace)) == [".git", "a.txt"]
    assert "\x1b" not in done.stdout + done.stderr, repr(done.stdout)
    assert "\x07" not in done.stdout + done.stderr, repr(done.stdout)


def test_a_hard_link_to_an_outside_file_is_never_written_through(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, tmp_path: Path
) -> None:
    """The model's bash replaces a tracked file with a hard link to a file outside the
    workspace (the user's ~/.bashrc): undo puts the tracked bytes back in the workspace and
    never into the outside file through the shared inode."""
    committed(workspace, {b"notes.txt": b"the user's notes\n"})
    bashrc = tmp_path / "bashrc"
    bashrc.write_bytes(b"export SAFE=1\n")
    llm_server.script(*bash(f"rm notes.txt && ln {bashrc} notes.txt"))
    assert run_di_code("run", "--yes", "--sandbox", "off", "link it").returncode == 0
    assert os.stat(workspace / "notes.txt").st_ino == os.stat(bashrc).st_ino

    done = undo(run_di_code)
    assert done.returncode == 0, done.stderr
    assert bashrc.read_bytes() == b"export SAFE=1\n"
    assert (workspace / "notes.txt").read_bytes() == b"the user's notes\n"


def test_a_folder_swapped_for_a_link_before_undo_deletes_nothing_outside(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, tmp_path: Path
) -> None:
    """The prompt made `keys/authorized_keys` and changed `keys/known`; before the undo, `keys`
    becomes a link to ~/.ssh holding files of the same names. Undo never deletes or writes
    through the link: ~/.ssh is as it was, and what could not be undone is said in a line."""
    committed(workspace, {b"keys/known": b"workspace known\n"})
    ssh = tmp_path / "ssh"
    ssh.mkdir()
    (ssh / "authorized_keys").write_bytes(b"ssh-ed25519 AAAA the user's key\n")
    (ssh / "known").write_bytes(b"the user's known hosts\n")
    llm_server.script(*bash("echo model > keys/authorized_keys && echo model > keys/known"))
    assert run_di_code("run", "--yes", "make keys").returncode == 0
    for name in ("authorized_keys", "known"):
        (workspace / "keys" / name).unlink()
    (workspace / "keys").rmdir()
    (workspace / "keys").symlink_to(ssh)

    done = undo(run_di_code)
    assert (ssh / "authorized_keys").read_bytes() == b"ssh-ed25519 AAAA the user's key\n"
    assert (ssh / "known").read_bytes() == b"the user's known hosts\n"
    assert (workspace / "keys").is_symlink()
    assert "undone" not in done.stdout or done.returncode == 0


def test_special_files_never_hold_the_checkpoint_or_the_undo(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    """The prompt's bash makes a FIFO, a socket, a 1 TiB sparse file, a link loop and a link
    to /dev/zero, and swaps a tracked file for a FIFO: the prompt and the undo end, the tracked
    file comes back as a file with its bytes, and what undo cannot know is kept."""
    committed(workspace, {b"a.txt": b"tracked a\n", b"b.txt": b"tracked b\n"})
    command = (
        "mkfifo pipe && rm a.txt && mkfifo a.txt && truncate -s 1T sparse.bin && "
        "ln -s loop loop && ln -s /dev/zero zero && echo changed > b.txt && "
        "python3 -c \"import socket; socket.socket(socket.AF_UNIX).bind('sock')\""
    )
    llm_server.script(*bash(command))
    ran = run_di_code("run", "--yes", "--sandbox", "off", "make special files")
    assert ran.returncode == 0, ran.stderr
    assert (workspace / "sparse.bin").stat().st_size == 1 << 40

    done = undo(run_di_code)
    assert done.returncode == 0, done.stderr
    assert (workspace / "a.txt").read_bytes() == b"tracked a\n"
    assert (workspace / "b.txt").read_bytes() == b"tracked b\n"
    assert (workspace / "sparse.bin").stat().st_size == 1 << 40  # unknown: kept and named
    assert "sparse.bin" in done.stdout


# Programs a repository can name ------------------------------------------------------------


def plant_config(config: Path, program: str, tmp_path: Path, how: str, repo: Path) -> None:
    """Name `program` in every place git would run it, in a config that `config` includes
    (how: `include` or `includeIf`) or holds itself (`direct`)."""
    evil = tmp_path / "evil.cfg"
    evil.write_text(
        f"[core]\n\tfsmonitor = {program}\n\tpager = {program}\n\tsshCommand = {program}\n"
        f'\thooksPath = {tmp_path / "hooks"}\n[filter "x"]\n\tclean = {program}\n'
        f'\tsmudge = {program}\n\tprocess = {program}\n\trequired = true\n[diff "x"]\n'
        f"\ttextconv = {program}\n[diff]\n\texternal = {program}\n[commit]\n\tgpgSign = true\n"
        f"[gpg]\n\tprogram = {program}\n[credential]\n\thelper = !{program}\n"
    )
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for hook in ("reference-transaction", "post-index-change", "pre-auto-gc", "post-checkout"):
        (hooks / hook).write_text(Path(program).read_text())
        (hooks / hook).chmod(0o755)
    (repo / ".gitattributes").write_text("* filter=x diff=x\n")
    with config.open("a") as f:
        if how == "include":
            f.write(f"[include]\n\tpath = {evil}\n")
        elif how == "includeIf":
            f.write(f'[includeIf "gitdir:{repo}/"]\n\tpath = {evil}\n')
            f.write(f'[includeIf "onbranch:main"]\n\tpath = {evil}\n')
        else:
            f.write(evil.read_text())


@pytest.mark.parametrize("how", ["include", "includeIf", "gitfile"])
def test_programs_named_through_an_include_or_a_git_file_never_run(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, tmp_path: Path, how: str
) -> None:
    """The programs are named in a config the repository's config includes (plainly, or on a
    condition that holds), or in the git directory a `.git` file points to (an unpacked
    archive): a prompt is checkpointed and undone, and none of them ever ran."""
    program, marker = planted(tmp_path)
    repo = committed(workspace, {b"a.txt": b"a\n"})
    config = repo / ".git" / "config"
    if how == "gitfile":
        gitdir = tmp_path / "elsewhere.git"
        (repo / ".git").rename(gitdir)
        (repo / ".git").write_text(f"gitdir: {gitdir}\n")
        config = gitdir / "config"
    plant_config(config, program, tmp_path, "direct" if how == "gitfile" else how, repo)
    llm_server.script(
        call("edit", {"path": "a.txt", "old_text": "a", "new_text": "b"}, "c1"),
        call("bash", {"command": "echo new > new.txt"}, "c2"),
        Turn(text="done"),
    )
    ran = run_di_code("run", "--yes", "change a")
    assert ran.returncode == 0, ran.stderr
    done = undo(run_di_code)
    assert done.returncode == 0, done.stderr
    assert (repo / "a.txt").read_text() == "a\n" and not (repo / "new.txt").exists()
    assert not marker.exists()


@pytest.mark.parametrize("where", ["include", "alternates"])
def test_a_fifo_where_git_reads_its_config_or_objects_never_holds_the_prompt(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, where: str
) -> None:
    """`.git/config` includes a named pipe, or `objects/info/alternates` is one: every git di-code
    starts would wait on it for ever. The prompt and the undo end, with no traceback, and
    a.txt is whole: as undo restored it or as the model left it, never a mix."""
    repo = committed(workspace, {b"a.txt": b"a\n"})
    if where == "include":
        os.mkfifo(repo / ".git" / "evil.cfg")
        with (repo / ".git" / "config").open("a") as config:
            config.write("[include]\n\tpath = evil.cfg\n")
    else:
        os.mkfifo(repo / ".git" / "objects" / "info" / "alternates")
    llm_server.script(
        call("edit", {"path": "a.txt", "old_text": "a", "new_text": "b"}, "c1"), Turn(text="done")
    )
    ran = run_di_code("run", "--yes", "change a")
    assert ran.returncode == 0 and TRACEBACK not in ran.stderr, ran.stderr
    done = undo(run_di_code)
    assert done.returncode in (0, 1), done.stderr
    assert (repo / "a.txt").read_bytes() in (b"a\n", b"b\n")
    if done.returncode == 0:
        assert (repo / "a.txt").read_bytes() == b"a\n"


def test_a_repository_of_another_owner_runs_nothing_and_undo_still_works(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, tmp_path: Path
) -> None:
    """A repository owned by someone else (an unpacked archive, a shared folder) names an
    fsmonitor and a filter: git's `safe.directory` check refuses it, nothing it names runs,
    and the write tool's change is still undone (outside git, from its copy)."""
    if os.geteuid() != 0:
        pytest.skip("giving the repository to another owner needs root")
    program, marker = planted(tmp_path)
    repo = committed(workspace, {b"a.txt": b"a\n"})
    plant_config(repo / ".git" / "config", program, tmp_path, "direct", repo)
    for folder, _, names in os.walk(repo):
        for name in [".", *names]:
            os.chown(os.path.join(folder, name), 65534, 65534, follow_symlinks=False)
    llm_server.script(
        call("edit", {"path": "a.txt", "old_text": "a", "new_text": "b"}, "c1"), Turn(text="done")
    )
    assert run_di_code("run", "--yes", "change a").returncode == 0
    done = undo(run_di_code)
    assert done.returncode == 0, done.stderr
    assert (repo / "a.txt").read_bytes() == b"a\n"
    assert not marker.exists()


# Concurrency and failure -------------------------------------------------------------------

MANY = 600
OLD, NEW = b"o" * 16_384, b"n" * 16_384


def test_undo_killed_midway_leaves_every_file_whole_and_a_second_undo_finishes(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, di_code_home: Path
) -> None:
    """SIGKILL while undo writes 600 files back: each file holds its old bytes or its new,
    never a mix nor nothing, no temp file is left where the user sees it, and the next
    `undo --yes` puts back the rest."""
    committed(workspace, {f"f{i:04}".encode(): OLD for i in range(MANY)})
    rewrite = "import glob; [open(f, 'wb').write(b'n' * 16384) for f in glob.glob('f*')]"
    llm_server.script(*bash(f'python3 -c "{rewrite}"'))
    assert run_di_code("run", "--yes", "rewrite all").returncode == 0
    assert all((workspace / f"f{i:04}").read_bytes() == NEW for i in range(MANY))

    undoing = subprocess.Popen(
        [DI_CODE, "undo", "--yes"],
        cwd=workspace,
        env=cli_env(di_code_home, llm_server),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        wait_until(
            lambda: (
                any((workspace / f"f{i:04}").read_bytes() == OLD for i in range(0, MANY, 50))
                or undoing.poll() is not None
            ),
            "the undo to write a file",
        )
    finally:
        undoing.kill()
        undoing.communicate()
    states = {(workspace / f"f{i:04}").read_bytes() for i in range(MANY)}
    assert states <= {OLD, NEW}
    left = subprocess.run(["git", "ls-files", "-z", "-o"], cwd=workspace, capture_output=True)
    assert all(name.endswith(b".tmp") for name in left.stdout.split(b"\0") if name)  # SIGKILL

    done = undo(run_di_code)
    assert done.returncode in (0, 1), done.stderr
    assert all((workspace / f"f{i:04}").read_bytes() == OLD for i in range(MANY)), done.stdout


def test_sigterm_during_a_checkpoint_leaves_no_git_and_no_lock(
    llm_server: LLMServer, workspace: Path, di_code_home: Path, run_di_code: RunDiCode
) -> None:
    """SIGTERM while a checkpoint hashes 3,000 changed files: di-code ends (143), every git it
    started ends with it, no `.lock` is left in the repository and the user's index is as it
    was; the next prompt is checkpointed and undone as usual."""
    committed(workspace, {f"d/f{i:04}".encode(): b"%d\n" % i for i in range(3000)})
    index = (workspace / ".git" / "index").read_bytes()
    llm_server.script(*bash("for f in d/*; do echo changed >> $f; done"))
    env = {**cli_env(di_code_home, llm_server), MARK: "checkpoint-term"}
    running = subprocess.Popen(
        [DI_CODE, "run", "--yes", "rewrite"],
        cwd=workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )

    def git_running() -> bool:
        return any(_name(pid) == "git" for pid in marked("checkpoint-term")) or (
            running.poll() is not None
        )

    try:
        deadline = time.monotonic() + 180  # the first snapshot reads every file: on a busy box
        while (workspace / "d" / "f2999").read_bytes() != b"2999\nchanged\n":
            assert running.poll() is None and time.monotonic() < deadline
            time.sleep(0.02)
        wait_until(git_running, "the checkpoint's git")
        running.send_signal(signal.SIGTERM)
        _, err = running.communicate(timeout=30)
    finally:
        running.kill()
    assert TRACEBACK not in err.decode(errors="replace"), err
    wait_until(lambda: not marked("checkpoint-term"), "every git to end with di-code")
    assert not list((workspace / ".git").rglob("*.lock"))
    assert (workspace / ".git" / "index").read_bytes() == index

    if llm_server.pending():  # the killed run's answer, never asked for: asked now
        chat = run_di_code("run", "hi")
        assert chat.returncode == 0, chat.stderr
    llm_server.script(
        call("edit", {"path": "d/f0000", "old_text": "0", "new_text": "zero"}, "c1"),
        Turn(text="done"),
    )
    ran = run_di_code("run", "--yes", "edit one")
    assert ran.returncode == 0, ran.stderr
    done = run_di_code("undo", "--yes")
    assert done.returncode == 0, done.stderr
    assert (workspace / "d" / "f0000").read_bytes() == b"0\nchanged\n"


def _name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def test_a_full_disk_during_a_restore_leaves_the_file_whole_and_no_temp_file(
    llm_server: LLMServer, workspace: Path, di_code_home: Path, run_di_code: RunDiCode
) -> None:
    """The file size limit (a real EFBIG) stops undo's write of a 2 MB file back over the
    model's short one: the file is the model's whole; no temp file is left beside it; undo
    says it failed (exit 1)."""
    committed(workspace, {b"big.bin": b"u" * 2_000_000})
    llm_server.script(*bash("echo model > big.bin"))
    ran = run_di_code("run", "--yes", "rewrite")
    assert ran.returncode == 0, ran.stderr

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (1_000_000, 1_000_000))

    done = subprocess.run(
        [DI_CODE, "undo", "--yes"],
        cwd=workspace,
        env=cli_env(di_code_home, llm_server),
        input=b"",
        capture_output=True,
        timeout=120,
        preexec_fn=limited,
    )
    assert done.returncode == 1 and b"could not restore big.bin" in done.stderr, done.stdout
    assert TRACEBACK.encode() not in done.stderr
    assert (workspace / "big.bin").read_bytes() == b"model\n"
    assert sorted(os.listdir(workspace)) == [".git", "big.bin"]


def test_a_case_twin_git_hid_is_never_deleted_as_the_tools(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    """A repository copied from a Mac keeps `core.ignoreCase = true`: git on Linux then hides
    the user's untracked `Data.csv` behind the tracked `data.csv`. The model's `git rm
    data.csv` brings it into view; undo must not take it for a file the tool made."""
    committed(workspace, {b"data.csv": b"tracked\n"})
    git(workspace, "config", "core.ignoreCase", "true")
    (workspace / "Data.csv").write_bytes(b"the user's own table\n")
    llm_server.script(*bash("git rm -q data.csv"))
    assert run_di_code("run", "--yes", "--sandbox", "off", "remove data").returncode == 0
    assert not (workspace / "data.csv").exists()

    done = undo(run_di_code)
    assert (workspace / "Data.csv").read_bytes() == b"the user's own table\n", done.stdout
    assert (workspace / "data.csv").read_bytes() == b"tracked\n", done.stdout


def test_an_excludes_file_a_tool_names_hides_nothing_from_undo(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path, tmp_path: Path
) -> None:
    """The model's bash points `core.excludesFile` at a file that ignores everything and
    makes new.txt: the user's untracked mine.txt (known before) and new.txt are hidden now,
    so both are unknown: undo deletes neither and says why."""
    committed(workspace, {b"a.txt": b"a\n"})
    (workspace / "mine.txt").write_bytes(b"mine\n")
    everything = tmp_path / "ignore-all"
    everything.write_text("*\n")
    llm_server.script(
        *bash(f"git config core.excludesFile {everything} && echo new > new.txt && echo b > a.txt")
    )
    assert run_di_code("run", "--yes", "--sandbox", "off", "hide them").returncode == 0

    done = undo(run_di_code)
    assert done.returncode == 0, done.stderr
    assert (workspace / "mine.txt").read_bytes() == b"mine\n"
    assert (workspace / "new.txt").exists() and "new.txt" in done.stdout
    assert (workspace / "a.txt").read_bytes() == b"a\n"


def test_files_of_a_nested_repository_whose_git_a_tool_removed_are_never_deleted(
    run_di_code: RunDiCode, llm_server: LLMServer, workspace: Path
) -> None:
    """The user's untracked clone `vendor/lib` (its files never in a snapshot: a nested
    repository) loses its `.git` to the model's `rm -rf`: its files come into view, but they
    were there all along; undo deletes none of them and names the folder."""
    committed(workspace, {b"a.txt": b"a\n"})
    (workspace / "vendor" / "lib").mkdir(parents=True)
    committed(workspace / "vendor" / "lib", {b"lib.c": b"int the_users_code;\n"})
    llm_server.script(*bash("rm -rf vendor/lib/.git"))
    assert run_di_code("run", "--yes", "--sandbox", "off", "flatten vendor").returncode == 0

    done = undo(run_di_code)
    assert (workspace / "vendor" / "lib" / "lib.c").read_bytes() == b"int the_users_code;\n"
    assert "vendor/lib" in done.stdout + done.stderr
