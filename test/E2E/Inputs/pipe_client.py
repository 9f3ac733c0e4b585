"""What answers-before-partial-line.py and ask-line-by-line.py share: their
command line, and reading a command's answers with a deadline."""
import os
import select
import subprocess
import sys


def parse(argv, positionals):
    """[--wait S] POSITIONAL... -- COMMAND...: (wait, positionals, the lines
    of the first positional (a file), command); the command started with
    its stdin and stdout as pipes."""
    args = argv[1:]
    wait = 60.0
    if args[0] == "--wait":
        wait = float(args[1])
        args = args[2:]
    values, separator, command = args[:positionals], args[positionals], \
        args[positionals + 1:]
    assert separator == "--"
    with open(values[0], encoding="utf-8") as f:
        lines = f.read().splitlines()
    process = subprocess.Popen(command, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE)
    return wait, values, lines, process


def read_until(process, received, done, wait, late, ended):
    """Reads the command's output onto `received` until done(received);
    exits with late(received) when nothing comes within `wait` seconds (the
    command is killed), with `ended` when its output ends first."""
    while not done(received):
        ready, _, _ = select.select([process.stdout], [], [], wait)
        if not ready:
            process.kill()
            sys.exit(late(received))
        block = os.read(process.stdout.fileno(), 65536)
        if not block:
            sys.exit(ended)
        received += block
    return received
