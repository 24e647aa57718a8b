"""The catalogue's second half: programs that run a command or code given in their words
(wrappers like `xargs`, `env`, `flock`, and every shell), each with its option grammar.

A wrong guess about which option takes a value hides the command (`xargs --max-args 1 rm`
would run `1`), so an option not listed here makes the command unreadable: it matches every
deny rule, and no allow rule covers it.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable

import msgspec
from msgspec import Struct

from di_code.tools.policy.bash_forms import SOURCES, Word, names, special_assignment

SHELLS = frozenset(
    {
        # Every shell runs code from `-c STRING`, a script file or stdin.
        "sh",
        "bash",
        "rbash",  # restricted bash still runs `-c` code
        "dash",
        "zsh",
        "ksh",
        "mksh",
        "ash",
        "yash",
        "posh",
        "fish",
        "csh",
        "tcsh",
        "coproc",  # tree-sitter reads `coproc` as a plain command: its body is not seen
    }
)

_SHELL_VALUED = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
"""Shell options whose value is the next word (`bash -o posix -c …`)."""


class Wrapper(Struct, frozen=True):
    """A program that runs another command given in its words, and its option grammar.

    An option not listed here makes the command unreadable: a wrong guess about which
    options take a value would let `xargs --max-args 1 rm` hide `rm` behind `1`."""

    valued: frozenset[str] = frozenset()
    """Options whose value is the next word, or joined (`-n1`, `--max-args=1`)."""
    flags: frozenset[str] = frozenset()
    """Options without a value (or with an optional one, which can only be joined)."""
    optional: frozenset[str] = frozenset()
    """Short flags whose optional value is the rest of their word (`xargs -i{}`, `-l1`)."""
    code: frozenset[str] = frozenset()
    """Options whose value is shell code (`flock -c`, `su -c`, `script -c`)."""
    hiding: frozenset[str] = frozenset()
    """Options that hide the command (`env -S 'rm x'` splits a string into a command)."""
    operands: int = 0
    """Words between the options and the command (timeout's duration, flock's file)."""
    assignments: bool = False
    """NAME=VALUE words may come before the command (env, sudo)."""
    bare: tuple[str, ...] | None = ()
    """What runs without a command: nothing (), a default (xargs: echo), None: a shell
    reading stdin, which cannot be seen."""
    joins: bool = False
    """Runs its words joined by spaces as shell code (watch)."""


SU = Wrapper(
    valued=names("-g --group -G --supp-group -s --shell"),
    flags=names("- -l --login -m -p --preserve-environment -P --pty"),
    code=names("-c --command --session-command"),
    operands=-1,
    bare=None,
)
"""su [options] [-] [USER] -c CODE: without -c it starts the user's shell. runuser has the
same grammar and a few options more."""

WRAPPERS: dict[str, Wrapper] = {
    # env [-i] [-u NAME] [NAME=VALUE]… COMMAND; -S splits a string into a command line.
    "env": Wrapper(
        valued=names("-u --unset -C --chdir"),
        flags=names(
            "- -i --ignore-environment -0 --null -v --debug --block-signal --default-signal "
            "--ignore-signal --list-signal-handling"
        ),
        hiding=names("-S --split-string"),
        assignments=True,
    ),
    # command [-pVv] COMMAND: runs it bypassing functions.
    "command": Wrapper(flags=names("-p -v -V")),
    # builtin NAME: runs a builtin.
    "builtin": Wrapper(),
    # exec [-cl] [-a NAME] COMMAND: replaces the shell with it.
    "exec": Wrapper(valued=names("-a"), flags=names("-c -l")),
    # nice [-n N | -N] COMMAND.
    "nice": Wrapper(valued=names("-n --adjustment")),
    # nohup COMMAND.
    "nohup": Wrapper(),
    # timeout [options] DURATION COMMAND.
    "timeout": Wrapper(
        valued=names("-s --signal -k --kill-after"),
        flags=names("--preserve-status --foreground -v --verbose"),
        operands=1,
    ),
    # time [-p] [NAME=VALUE]… COMMAND (the keyword), or /usr/bin/time with -f/-o.
    "time": Wrapper(
        valued=names("-f --format -o --output"),
        flags=names("-p -a --append -v --verbose -q --quiet --portability"),
        assignments=True,
    ),
    # xargs [options] [COMMAND]: runs COMMAND (echo without one) with words from stdin.
    "xargs": Wrapper(
        valued=names(
            "-a --arg-file -d --delimiter -E -I -L -n --max-args -P --max-procs -s "
            "--max-chars --process-slot-var"
        ),
        flags=names(
            "-0 --null -e --eof -i --replace -l --max-lines -o --open-tty -p --interactive -r "
            "--no-run-if-empty -t --verbose -x --exit --show-limits"
        ),
        optional=names("-e -i -l"),
        bare=("echo",),
    ),
    # sudo [options] [NAME=VALUE]… COMMAND.
    "sudo": Wrapper(
        valued=names(
            "-u --user -g --group -p --prompt -C --close-from -D --chdir -h --host -r --role "
            "-t --type -U --other-user -R --chroot -T --command-timeout"
        ),
        flags=names(
            "-A --askpass -b --background -E --preserve-env -H --set-home -n "
            "--non-interactive -P --preserve-groups -S --stdin -B --bell -N --no-update"
        ),
        assignments=True,
    ),
    # doas [-ns] [-u USER] [-C CONFIG] COMMAND.
    "doas": Wrapper(valued=names("-u -C"), flags=names("-n")),
    # ionice [-c CLASS] [-n LEVEL] [-t] COMMAND.
    "ionice": Wrapper(valued=names("-c --class -n --classdata"), flags=names("-t --ignore")),
    # setsid [-cfw] COMMAND.
    "setsid": Wrapper(flags=names("-c --ctty -f --fork -w --wait")),
    # stdbuf -i/-o/-e MODE COMMAND (`--output L` takes the next word).
    "stdbuf": Wrapper(valued=names("-i --input -o --output -e --error")),
    # chroot [options] DIR [COMMAND]: without one it starts a shell.
    "chroot": Wrapper(
        valued=names("--userspec --groups"), flags=names("--skip-chdir"), operands=1, bare=None
    ),
    # flock [options] FILE COMMAND, or FILE -c CODE (run by sh -c).
    "flock": Wrapper(
        valued=names("-w --timeout --wait -E --conflict-exit-code"),
        flags=names(
            "-s --shared -x -e --exclusive -u --unlock -n --nb --nonblock -o --close -F "
            "--no-fork --verbose"
        ),
        code=names("-c --command"),
        operands=1,
    ),
    # watch [options] COMMAND…: its words joined by spaces are run by `sh -c`.
    "watch": Wrapper(
        valued=names("-n --interval -q --equexit"),
        flags=names(
            "-b --beep -c --color -C --no-color -d --differences -e --errexit -g --chgexit -t "
            "--no-title -w --no-wrap -x --exec -p --precise -r --no-rerun"
        ),
        joins=True,
    ),
    # script -c CODE [FILE]: without -c it starts an interactive shell.
    "script": Wrapper(
        valued=names(
            "-E --echo -I --log-in -O --log-out -B --log-io -T --log-timing -m "
            "--logging-format -o --output-limit"
        ),
        flags=names("-a --append -e --return -f --flush --force -q --quiet"),
        code=names("-c --command"),
        operands=-1,
        bare=None,
    ),
    "su": SU,  # above: runuser starts from it
    # runuser -u USER COMMAND, or like su: USER -c CODE; read like su (no -c: unseen).
    "runuser": msgspec.structs.replace(
        SU, valued=SU.valued | names("-u --user -w"), flags=SU.flags | names("-f")
    ),
    # unbuffer COMMAND (expect's).
    "unbuffer": Wrapper(flags=names("-p")),
    # taskset [-a] [-c] MASK COMMAND.
    "taskset": Wrapper(flags=names("-a --all-tasks -c --cpu-list"), operands=1),
    # unshare [options] [COMMAND]: without one it starts $SHELL.
    "unshare": Wrapper(
        valued=names(
            "--propagation --setgroups -R --root -w --wd -S --setuid -G --setgid --monotonic "
            "--boottime --map-user --map-group --map-users --map-groups"
        ),
        flags=names(
            "-i --ipc -m --mount -n --net -p --pid -u --uts -U --user -C --cgroup -T --time "
            "-f --fork --keep-caps --kill-child --mount-proc --map-auto -r --map-root-user -c "
            "--map-current-user"
        ),
        bare=None,
    ),
    # nsenter [options] [COMMAND]: without one it starts $SHELL.
    "nsenter": Wrapper(
        valued=names("-t --target -S --setuid -G --setgid"),
        flags=names(
            "-a --all -F --no-fork --preserve-credentials -Z --follow-context --mount --uts "
            "--ipc --net --pid --cgroup --user --time --root --wd"
        ),
        optional=names("-m -u -i -n -p -C -U -T -r -w"),
        bare=None,
    ),
    # prlimit [options] [COMMAND]: a resource's limits are joined (`-n100`, `--nofile=100`);
    # without a command it prints them.
    "prlimit": Wrapper(
        valued=names("-p --pid -o --output"),
        flags=names(
            "--noheadings --raw --verbose --core --data --nice --fsize --sigpending --memlock "
            "--rss --nofile --msgqueue --rtprio --stack --cpu --nproc --as --locks --rttime"
        ),
        optional=names("-c -d -e -f -i -l -m -n -q -r -s -t -u -v -x -y"),
    ),
    # strace [options] COMMAND: `-o |CMD` pipes its trace to a command and `-E NAME=VALUE`
    # sets the command's environment (LD_PRELOAD), so both hide what runs.
    "strace": Wrapper(
        valued=names(
            "-e -p --attach -s --string-limit -u --user -a --columns -b --detach-on -I "
            "--interruptible -O --summary-wall-clock -P --trace-path -S --summary-sort-by "
            "-X --const-print-style --trace --signal --status --quiet --decode-fds"
        ),
        flags=names(
            "-f -F -c -C -d -D -i -k -n -q -r -t -T -v -w -x -y -z -Z --follow-forks "
            "--summary-only --summary --instruction-pointer --no-abbrev --relative-timestamps "
            "--absolute-timestamps --syscall-times --successful-only --failed-only"
        ),
        hiding=names("-o --output -E --env"),
    ),
    # fakeroot [options] [--] [COMMAND]: without one it starts $SHELL; `--faked` names the
    # daemon it runs and `-l` a library every command loads, so both hide what runs.
    "fakeroot": Wrapper(
        valued=names("-s -i -b"),
        flags=names("-u --unknown-is-real"),
        hiding=names("-l --lib --faked"),
        bare=None,
    ),
    # chrt [policy options] PRIORITY COMMAND.
    "chrt": Wrapper(
        valued=names("-T --sched-runtime -P --sched-period -D --sched-deadline"),
        flags=names(
            "-a --all-tasks -b --batch -d --deadline -f --fifo -i --idle -o --other -r --rr "
            "-R --reset-on-fork -v --verbose"
        ),
        operands=1,
    ),
}

SETARCH = Wrapper(
    flags=names(
        "-R --addr-no-randomize -F --fdpic-funcptrs -Z --mmap-page-zero -L --addr-compat-layout "
        "-X --read-implies-exec -B --32bit -I --short-inode -S --whole-seconds -T "
        "--sticky-timeouts -3 --3gb --4gb --uname-2.6 -v --verbose"
    ),
    bare=None,
)
"""setarch ARCH [options] [COMMAND] (`_setarch`), and its links named after an architecture
(`linux64 [options] [COMMAND]`): without a command they start /bin/sh."""
WRAPPERS |= dict.fromkeys(("linux32", "linux64", "i386", "x86_64", "uname26"), SETARCH)

Wrapped = tuple[Word, ...] | str | None
"""What a wrapper runs: a command's words, a string of shell code, or None (cannot be seen)."""


def wrapped(program: str, args: tuple[Word, ...]) -> Wrapped:
    """What `program args` runs, for a wrapper, busybox, parallel or a shell; None when it
    cannot be seen."""
    read = _READERS.get(program)
    if read is not None:
        return read(args)
    return _by_grammar(WRAPPERS[program], program, args)


def _by_grammar(grammar: Wrapper, program: str, args: tuple[Word, ...]) -> Wrapped:
    index, code = _options(grammar, program, args)
    if index is None or code is not None:
        return code
    rest = args[index:]
    if grammar.operands < 0:  # su, script: options anywhere; without -c a shell reads stdin
        return _code_anywhere(grammar, rest)
    if any(word is None for word in rest[: grammar.operands]):
        return None
    rest = rest[grammar.operands :]
    if rest and rest[0] in grammar.code:  # flock FILE -c CODE
        return rest[1] if len(rest) > 1 and rest[1] is not None else None
    if not rest:
        return None if grammar.bare is None else grammar.bare
    if grammar.joins and "-x" not in args and "--exec" not in args:
        if any(word is None for word in rest):
            return None
        return " ".join(str(word) for word in rest)
    if program == "xargs":
        return unknown_where(rest, _replace_string(args[:index]))
    return rest


def unknown_where(words: tuple[Word, ...], placeholder: str | None) -> tuple[Word, ...]:
    """The words, with each one that holds `placeholder` unknown where it is read as code or
    as a command: `xargs -I % sh -c %` and `find -exec sh -c {} ;` run input and file names
    as code (`find -exec ls {} ;` only passes them on)."""
    program = words[0] if words else None
    if placeholder is None or program is None:
        return words
    name = posixpath.basename(program)
    if placeholder not in program and not is_wrapper(name) and name not in SOURCES:
        return words
    return tuple(None if word is None or placeholder in word else word for word in words)


def _replace_string(options: tuple[Word, ...]) -> str | None:
    """The string xargs replaces with input (`-I R`, `-tIR`, `-i[R]`, `--replace[=R]`)."""
    for index, word in enumerate(options):
        if word is None or not word.startswith("-"):
            continue
        if word.startswith("--replace"):
            return word.partition("=")[2] or "{}"
        for position, char in enumerate(word[1:] if word[1:2] != "-" else "", start=2):
            rest = word[position:]
            if char == "I":
                return rest or (options[index + 1] if index + 1 < len(options) else None)
            if char == "i":
                return rest or "{}"
            if f"-{char}" in WRAPPERS["xargs"].valued:
                break
    return None


def is_wrapper(program: str) -> bool:
    return program in WRAPPERS or program in _READERS


def _options(grammar: Wrapper, program: str, args: tuple[Word, ...]) -> tuple[int | None, Word]:
    """Where the command starts after the options, and the code of a code option (`-c`);
    (None, None) when an option is unknown, hides the command or is an expansion."""
    index = 0
    while index < len(args):
        word = args[index]
        if word is None:
            return None, None
        if word == "--":
            return _after_assignments(grammar, args, index + 1), None
        if grammar.assignments and "=" in word and not word.startswith("-"):
            if special_assignment(word):
                return None, None
            index += 1
            continue
        if not word.startswith("-") or (word == "-" and "-" not in grammar.flags):
            return index, None
        if program == "nice" and re.fullmatch(r"-\d+", word):  # nice -10 COMMAND
            index += 1
            continue
        option = _one_option(grammar, word)
        if option is None:
            return None, None
        name, joined = option
        value = joined if joined is not None else (args[index + 1 : index + 2] or (None,))[0]
        if name in grammar.code:
            return (None, None) if value is None else (index, value)
        index += 1 if joined is not None or name not in grammar.valued else 2
    return index, None


def _after_assignments(grammar: Wrapper, args: tuple[Word, ...], index: int) -> int | None:
    """Where the command starts after `--`: env and sudo still take NAME=VALUE words."""
    while grammar.assignments and index < len(args):
        word = args[index]
        if word is None or "=" not in word:
            break
        if special_assignment(word):
            return None
        index += 1
    return index


def _one_option(grammar: Wrapper, word: str) -> tuple[str, str | None] | None:
    """The option `word` sets (the one that matters in a cluster like `-tn1`) and its value
    when joined to it; None when it is unknown or hides the command."""
    if word.startswith("--") or word == "-":
        name, equals, value = word.partition("=")
        if name in grammar.hiding:
            return None
        if name in grammar.valued or name in grammar.code:
            return name, value if equals else None
        return (name, "") if name in grammar.flags else None
    for position, char in enumerate(word[1:], start=1):
        name = f"-{char}"
        if name in grammar.hiding:
            return None
        if name in grammar.valued or name in grammar.code:
            return name, word[position + 1 :] or None
        if name in grammar.optional:
            return name, word[position + 1 :]
        if name not in grammar.flags:
            return None
    return word, ""


def _code_anywhere(grammar: Wrapper, args: tuple[Word, ...]) -> Wrapped:
    """su and script take their options anywhere (`su root -c CODE`); without a code option
    they start a shell, which reads what cannot be seen."""
    for index, word in enumerate(args):
        if word is None:
            return None
        name = word.partition("=")[0]
        if name in grammar.code:
            value = word.partition("=")[2] if "=" in word else None
            if value is None and index + 1 < len(args):
                value = args[index + 1]
            return value
    return None


def _shell(args: tuple[Word, ...]) -> Wrapped:
    """`sh [options] -c CODE`, with joined flags (`-ec`), valued options (`-o posix`) and
    `--`; a script file or stdin cannot be seen."""
    runs_code = False
    index = 0
    while index < len(args):
        word = args[index]
        if word is None:
            return None
        if word in ("--", "-"):
            index += 1
            break
        if not word.startswith(("-", "+")) or word == "+":
            break
        if word in _SHELL_VALUED:
            index += 2
            continue
        if not word.startswith("--") and "c" in word[1:]:
            runs_code = True
        index += 1
    code = args[index] if index < len(args) else None
    return code if runs_code and code is not None else None


def _busybox(args: tuple[Word, ...]) -> Wrapped:
    """busybox APPLET ARGS: the applet is the program (`busybox sh -c …`, `busybox rm`)."""
    return args if args and args[0] and not args[0].startswith("-") else None


def _parallel(args: tuple[Word, ...]) -> Wrapped:
    """GNU parallel COMMAND ::: ARGS runs COMMAND (joined, by a shell) with each argument;
    with options or without a command (the arguments are commands) it cannot be seen."""
    command: list[str] = []
    for word in args:
        if word is None or (not command and word.startswith("-")):
            return None
        if word.startswith(":::"):
            break
        command.append(word)
    return " ".join(command) if command else None


def _setarch(args: tuple[Word, ...]) -> Wrapped:
    """setarch ARCH [options] [COMMAND]: the architecture first, then as its links read."""
    if not args or args[0] is None or args[0].startswith("-"):
        return None
    return _by_grammar(SETARCH, "setarch", args[1:])


_READERS: dict[str, Callable[[tuple[Word, ...]], Wrapped]] = {
    "busybox": _busybox,
    "setarch": _setarch,
    "parallel": _parallel,
    **dict.fromkeys(SHELLS, _shell),
}
"""Programs whose words are read by a function of their own rather than by a Wrapper grammar."""
