"""Runs a command as an interactive client would: writes one input line,
waits for its answer line before writing the next, then closes the input.
Prints the answers; fails if an answer does not come within --wait seconds
(the command read all its input before answering) or the command fails.

usage: ask-line-by-line.py [--wait S] LINES_FILE -- COMMAND...
"""
import sys

import pipe_client


def main():
    wait, _, lines, process = pipe_client.parse(sys.argv, 1)
    pending = b""
    for number, line in enumerate(lines, 1):
        process.stdin.write(line.encode("utf-8") + b"\n")
        process.stdin.flush()
        pending = pipe_client.read_until(
            process, pending, lambda got: b"\n" in got, wait,
            lambda got: f"no answer to line {number} within {wait} s "
                        "(the input is still open)",
            f"the command ended before answering line {number}")
        answer, pending = pending.split(b"\n", 1)
        sys.stdout.write(answer.decode("utf-8") + "\n")
    process.stdin.close()
    rest = process.stdout.read()
    code = process.wait()
    if pending or rest:
        sys.exit("more output than input lines: " + repr(pending + rest))
    if code != 0:
        sys.exit(f"the command exited {code}")


if __name__ == "__main__":
    main()
