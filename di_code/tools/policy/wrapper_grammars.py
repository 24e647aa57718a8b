"""Each wrapper's option grammar (a program that runs a command given in its words: `env`,
`xargs`, `timeout`, `sudo`, ...), which `bash_wrappers` reads a command line by.

A wrong guess about which option takes a value hides the command (`xargs --max-args 1 rm`
would run `1`), so an option not listed here makes the command unreadable: it matches every
deny rule, and no allow rule covers it.
"""

from __future__ import annotations

import msgspec
from msgspec import Struct

from di_code.tools.policy.bash_forms import names


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
