"""Writes the lines of LINES_FILE at once, then the start of one more line
without its end, and waits for the answers to the whole lines: they must
come although the last line is unfinished (the command waited for its end
first: a client that waits for its answers before it writes the rest hung).
Then ends the line and the input, and prints every answer.

usage: answers-before-partial-line.py [--wait S] LINES_FILE LAST -- COMMAND...
"""
import sys

import pipe_client


def main():
    wait, (_, last), lines, process = pipe_client.parse(sys.argv, 2)
    head, tail = last[: len(last) // 2], last[len(last) // 2:]
    # Two writes: the whole lines (more than a pipe holds, so the command
    # has read them when the second write gets through), then the start of
    # the last line, which is waiting when the command looks for more.
    process.stdin.write("".join(line + "\n" for line in lines).encode())
    process.stdin.flush()
    process.stdin.write(head.encode())
    process.stdin.flush()
    def late(received):
        answered = received.count(b"\n")
        return (f"{answered} of {len(lines)} answers within {wait} s while "
                "the next line is unfinished")

    received = pipe_client.read_until(
        process, b"", lambda got: got.count(b"\n") >= len(lines), wait, late,
        "the command ended early")
    process.stdin.write(tail.encode() + b"\n")
    process.stdin.close()
    received += process.stdout.read()
    code = process.wait()
    sys.stdout.write(received.decode("utf-8"))
    if code != 0:
        sys.exit(f"the command exited {code}")


if __name__ == "__main__":
    main()
