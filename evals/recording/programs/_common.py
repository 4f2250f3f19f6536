"""Helpers the recording programs share: notes that are not program output, and a small training step."""

from __future__ import annotations

import os
import sys


def note(msg: str) -> None:
    """A line from the recording harness, not from the workload: tagged N in the log, never mixed into O/E."""
    fd = os.environ.get("REC_NOTE_FD")
    line = f"[recorder] {msg}\n"
    if fd and fd.isdigit():
        try:
            os.write(int(fd), line.encode())
            return
        except OSError:
            pass
    sys.stderr.write(line)


def note_env() -> dict[str, str]:
    """The environment a child process of the program should get: REC_NOTE_FD is not passed on."""
    return {k: v for k, v in os.environ.items() if k != "REC_NOTE_FD"}


def child_kwargs() -> dict:
    """subprocess keyword arguments for a child whose notes must stay notes: the note pipe is passed on."""
    fd = os.environ.get("REC_NOTE_FD", "")
    if fd.isdigit():
        try:
            os.fstat(int(fd))
            return {"env": dict(os.environ), "pass_fds": (int(fd),)}
        except OSError:
            pass
    return {"env": note_env()}


def exit_code(returncode: int) -> int:
    """A Popen return code as a shell reports it (a signal N becomes 128+N)."""
    return 128 - returncode if returncode < 0 else returncode
