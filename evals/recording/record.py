"""Runs one group of recording scenarios on a TPU machine and appends each one's tagged output to a group log.

Standard library only (the TPU machine has JAX but not this project's dependencies). Run from the repository root:
    python3 evals/recording/record.py A --log "$OUT/group-A.log" --deadline EPOCH_SECONDS

Each scenario runs as its own process in its own session, under a SIGKILL timeout, with stdout, stderr and a third
pipe for harness notes read together, so the log keeps their interleaving. Every captured line is written as
`TAG<TAB>SECONDS<TAB>TEXT`: TAG is O (stdout), E (stderr) or N (a note from the harness, never program output);
SECONDS is the time since the process started. Before each scenario the driver waits until no process holds the chip.
"""

from __future__ import annotations

import argparse
import json
import os
import selectors
import signal
import subprocess
import sys
import time
import tomllib
from datetime import datetime, UTC
from pathlib import Path

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "scenarios.toml"
MAX_LINES = 2000  # a scenario's output beyond this keeps its first and last half
CHIP_WAIT_S = 30
MIN_SLOT_S = 15  # a scenario that would get less than this before the deadline is skipped
DEVICE_PREFIXES = ("/dev/vfio/", "/dev/accel")
LOCKFILE = "/tmp/libtpu_lockfile"
CURRENT = "/tmp/rec-current.pgid"


def utc() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def scenarios(group: str) -> list[dict]:
    """The manifest's scenarios of a group, in manifest order (ids starting with _ are probes, not fixtures)."""
    rows = tomllib.loads(MANIFEST.read_text())["scenario"]
    return [r for r in rows if group in r["groups"]]


def chip_holders() -> list[str]:
    """'pid:target' for every readable process with the TPU device or libtpu's lockfile open."""
    found = []
    me = os.getpid()
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == me:
            continue
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith(DEVICE_PREFIXES) and target != "/dev/vfio/vfio" or target == LOCKFILE:
                found.append(f"{pid}:{target}")
                break
    return found


def wait_chip_free(limit_s: float) -> tuple[float, list[str]]:
    """Polls until no process holds the chip or limit_s passes; returns the wait and the holders left."""
    t0 = time.monotonic()
    while True:
        holders = chip_holders()
        if not holders or time.monotonic() - t0 >= limit_s:
            return time.monotonic() - t0, holders
        time.sleep(0.5)


def kill_group(pgid: int, wait_s: float = 10.0) -> bool:
    """SIGKILLs a scenario's whole session and waits until it is gone; True when nothing of it is left."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    t0 = time.monotonic()
    while time.monotonic() - t0 < wait_s:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.2)
    return False


def capture(cmd: list[str], env: dict[str, str], timeout_s: float) -> dict:
    """Runs cmd in a new session; returns its tagged lines, exit code, signal and whether the timeout killed it."""
    note_r, note_w = os.pipe()
    env = {**env, "REC_NOTE_FD": str(note_w)}
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            start_new_session=True, pass_fds=(note_w,))
    os.close(note_w)
    Path(CURRENT).write_text(f"{proc.pid}\n")  # run.sh kills this session if record.py itself is killed
    sel = selectors.DefaultSelector()
    assert proc.stdout is not None and proc.stderr is not None  # both are PIPEs
    tags = {proc.stdout.fileno(): "O", proc.stderr.fileno(): "E", note_r: "N"}
    pending = {f: b"" for f in tags}
    for f, tag in tags.items():
        os.set_blocking(f, False)
        sel.register(f, selectors.EVENT_READ, tag)
    lines: list[tuple[str, float, str]] = []
    timed_out = False
    exited_at = None

    def emit(tag: str, raw: bytes) -> None:
        lines.append((tag, time.monotonic() - t0, raw.decode("utf-8", "replace").rstrip("\r")))

    while sel.get_map():
        now = time.monotonic()
        if not timed_out and exited_at is None and now - t0 > timeout_s:
            timed_out = True
            kill_group(proc.pid, wait_s=0)
        if exited_at is None and proc.poll() is not None:
            exited_at = now
        # a grandchild may keep a pipe open after the program exited: give it 3 s, then stop reading
        if exited_at is not None and now - exited_at > 3:
            break
        if timed_out and now - t0 > timeout_s + 5:
            break
        for key, _ in sel.select(timeout=0.2):
            f, tag = key.fd, key.data
            try:
                chunk = os.read(f, 65536)
            except BlockingIOError:
                continue
            if not chunk:
                sel.unregister(f)
                if pending[f]:
                    emit(tag, pending[f])
                    pending[f] = b""
                continue
            buf = pending[f] + chunk
            *complete, pending[f] = buf.split(b"\n")
            for raw in complete:
                emit(tag, raw)
    for f, rest in pending.items():
        if rest:
            emit(tags[f], rest)
    sel.close()
    if not timed_out:
        try:  # reap the program first: an unreaped zombie would keep its process group alive
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
    gone = kill_group(proc.pid)  # whatever the program left behind (a chip holder) ends with it
    Path(CURRENT).unlink(missing_ok=True)
    try:
        rc = proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        rc = None
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
    os.close(note_r)
    sig = ""
    code: int | str = "unknown"
    if rc is not None:
        code = 128 - rc if rc < 0 else rc
        if rc < 0:
            sig = signal.Signals(-rc).name
    return {"lines": lines, "exit_code": code, "signal": sig, "timed_out": timed_out,
            "wall_s": round(time.monotonic() - t0, 1), "session_cleaned": gone}


def truncate(lines: list[tuple[str, float, str]]) -> tuple[list[tuple[str, float | None, str]], int]:
    """The first and last MAX_LINES/2 lines with one N line between saying how many were left out."""
    if len(lines) <= MAX_LINES:
        return list(lines), 0
    half = MAX_LINES // 2
    omitted = len(lines) - MAX_LINES
    marker = ("N", None, f"[recorder] truncated: {omitted} lines omitted here (kept the first {half} and the last {half})")
    return [*lines[:half], marker, *lines[-half:]], omitted


def block(row: dict, cmd: list[str], env_set: dict[str, str], start: str, end: str, result: dict | None,
          chip: str, skipped: str = "") -> str:
    """One scenario's section of the group log."""
    out = [f"===== SCENARIO BEGIN {row['id']} =====",
           f"id: {row['id']}",
           f"program: {row['program']}",
           f"command: {' '.join(cmd)}",
           f"env: {json.dumps(env_set, sort_keys=True)}",
           f"timeout_s: {row['timeout']}",
           f"chip_before: {chip}",
           f"start_utc: {start}"]
    if skipped:
        out += [f"skipped: {skipped}", f"end_utc: {end}", f"===== SCENARIO END {row['id']} =====", ""]
        return "\n".join(out)
    assert result is not None
    kept, omitted = truncate(result["lines"])
    counts = {t: sum(1 for line in result["lines"] if line[0] == t) for t in "OEN"}
    out.append("----- OUTPUT (TAG<TAB>SECONDS<TAB>TEXT; O=stdout E=stderr N=recorder note) -----")
    for tag, t, text in kept:
        out.append(f"{tag}\t{'-' if t is None else f'{t:.3f}'}\t{text}")
    out += ["----- END OUTPUT -----",
            f"end_utc: {end}",
            f"exit_code: {result['exit_code']}",
            f"signal: {result['signal']}",
            f"timed_out: {str(result['timed_out']).lower()}",
            f"wall_s: {result['wall_s']}",
            f"lines: stdout={counts['O']} stderr={counts['E']} notes={counts['N']} omitted={omitted}",
            f"session_cleaned: {str(result['session_cleaned']).lower()}",
            f"===== SCENARIO END {row['id']} =====", ""]
    return "\n".join(out)


def scenario_env(row: dict) -> tuple[dict[str, str], dict[str, str]]:
    """The full environment for a scenario and the variables it sets on top of the group's."""
    env_set = {k: str(v) for k, v in row.get("env", {}).items()}
    if row.get("orbax"):
        env_set["PYTHONPATH"] = os.pathsep.join(p for p in (os.environ.get("PYTHONPATH", ""), "/tmp/ox") if p)
    return {**os.environ, **env_set}, env_set


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("group")
    ap.add_argument("--log", required=True)
    ap.add_argument("--deadline", type=float, required=True, help="epoch seconds by which the last scenario ends")
    ap.add_argument("--only", default="", help="comma-separated scenario ids (default: the whole group)")
    a = ap.parse_args(argv)
    rows = scenarios(a.group)
    if a.only:
        rows = [r for r in rows if r["id"] in a.only.split(",")]
    with open(a.log, "a", encoding="utf-8") as log:
        log.write(f"# record.py group={a.group} scenarios={','.join(r['id'] for r in rows)} started={utc()}\n")
        log.flush()
        for row in rows:
            cmd = [sys.executable, row["program"], *row.get("args", [])]
            env, env_set = scenario_env(row)
            waited, holders = wait_chip_free(CHIP_WAIT_S)
            chip = (f"held by {' '.join(holders)} after waiting {waited:.1f}s" if holders
                    else f"free (waited {waited:.1f}s)")
            left = a.deadline - time.time()
            start = utc()
            if left < MIN_SLOT_S:
                log.write(block(row, cmd, env_set, start, utc(), None, chip,
                                skipped=f"group deadline: {left:.0f}s left"))
                log.flush()
                continue
            timeout_s = min(float(row["timeout"]), left - 5)
            print(f"[record] {row['id']}: start (timeout {timeout_s:.0f}s, chip {chip})", file=sys.stderr, flush=True)
            result = capture(cmd, env, timeout_s)
            if timeout_s < row["timeout"]:
                result["lines"].append(("N", None, f"[recorder] timeout shortened to {timeout_s:.0f}s by the group deadline"))
            log.write(block(row, cmd, env_set, start, utc(), result, chip))
            log.flush()
            print(f"[record] {row['id']}: exit {result['exit_code']} {result['signal']} in {result['wall_s']}s",
                  file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
