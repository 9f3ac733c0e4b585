"""Writes the lines of LINES_FILE at once, then the start of one more line
without its end, and waits for the answers to the whole lines: they must
come although the last line is unfinished (the command waited for its end
first: a client that waits for its answers before it writes the rest hung).
Then ends the line and the input, and prints every answer.

usage: answers-before-partial-line.py [--wait S] LINES_FILE LAST -- COMMAND...
"""
import os
import select
import subprocess
import sys


def main():
    args = sys.argv[1:]
    wait = 60.0
    if args[0] == "--wait":
        wait = float(args[1])
        args = args[2:]
    lines_file, last, separator, command = args[0], args[1], args[2], args[3:]
    assert separator == "--"
    with open(lines_file, encoding="utf-8") as f:
        lines = f.read().splitlines()
    process = subprocess.Popen(command, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE)
    head, tail = last[: len(last) // 2], last[len(last) // 2:]
    # Two writes: the whole lines (more than a pipe holds, so the command
    # has read them when the second write gets through), then the start of
    # the last line, which is waiting when the command looks for more.
    process.stdin.write("".join(line + "\n" for line in lines).encode())
    process.stdin.flush()
    process.stdin.write(head.encode())
    process.stdin.flush()
    received = b""
    while received.count(b"\n") < len(lines):
        ready, _, _ = select.select([process.stdout], [], [], wait)
        if not ready:
            process.kill()
            answered = received.count(b"\n")
            sys.exit(f"{answered} of {len(lines)} answers "
                     f"within {wait} s while the next line is unfinished")
        block = os.read(process.stdout.fileno(), 65536)
        if not block:
            sys.exit("the command ended early")
        received += block
    process.stdin.write(tail.encode() + b"\n")
    process.stdin.close()
    received += process.stdout.read()
    code = process.wait()
    sys.stdout.write(received.decode("utf-8"))
    if code != 0:
        sys.exit(f"the command exited {code}")


if __name__ == "__main__":
    main()
