"""A program's death as its own logs tell it (issue 36): the uncaught exception that ended a Python program.

The fatal lines a process prints as it aborts (a glog F line, absl's check-failure trace, CPython's "Fatal Python
error", a signal page) are the catalog's `program_died` symptom, matched line by line. An exception line needs its
stream: CPython prints the same "<type>: <value>" line for an exception a handler printed and went on from. It is the
program's death when the program printed no progress after it, its output ends with it (nothing of that stream
was logged more than a minute later), and the run was not seen running long after it (a client that prints no steps
is alive while the workers go on launching the programs it dispatches). Read from the logs alone, so a diagnosis live without the Kubernetes API and a
replay with the Pod objects agree that the program died. Pure: no I/O."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..catalog import SYMPTOMS
from .model import Workload
from .signals import Signal

NS = 1_000_000_000
OUTPUT_ENDS_NS = 60 * NS  # the program's output ends with the line: nothing of its stream this long after it
RAN_ON_NS = 120 * NS  # ... and the run (steps, program launches) was not seen running this long after it
IGNORED = re.compile(r"^Exception ignored (?:in|on|while)\b")  # Python/errors.c, the unraisable hook's header
IGNORED_NS = 5 * NS  # the report is written at once: its exception line follows the header within this

_DIED = next(s for s in SYMPTOMS if s.id == "program_died")
UNCAUGHT = next(p for p in _DIED.patterns if p.id == "uncaught")
KILLED = next(p for p in _DIED.patterns if p.id == "killed")
_KILL = re.compile(KILLED.regex)
# the process a kernel kill names, in whichever form it is reported (the kernel's line, node-problem-detector's
# OOMKilling message, which may hold only "Killed process <pid> (<comm>) total-vm:...")
KILL_COMM = re.compile(r"Kill(?:ed)? process \d+ \(([^)]+)\)")
# A Pathways server's process anywhere (the images' binaries, kernel comm names); python only on a node of the JobSet
PATHWAYS_PROCESS = re.compile(r"^(?:pathways[\w.-]*|proxy_server)$")
JOBSET_NODE_PROCESS = re.compile(r"^(?:server|python[\d.]*)$")
_EXCEPTION = re.compile("(?m)" + UNCAUGHT.regex)


def ignored_reports(symptoms: list[Signal]) -> dict[tuple, list[int]]:
    """Per container stream, when CPython began a report of an exception it ignored (sys.unraisablehook's default
    output, Python/errors.c: "Exception ignored in: <object>"; in a __del__ or at interpreter shutdown). Its exception
    line reads like any other, but the exception was never raised into the program."""
    out: dict[tuple, list[int]] = {}
    for s in symptoms:
        if s.record.source == "container" and IGNORED.match(s.record.text):
            out.setdefault((s.record.pod, s.record.container), []).append(s.ts)
    return out


def in_ignored_report(s: Signal, reports: dict[tuple, list[int]]) -> bool:
    """The line is part of such a report: its header, or printed by the same stream right after one."""
    if IGNORED.match(s.record.text):
        return True
    return any(0 <= s.ts - t <= IGNORED_NS for t in reports.get((s.record.pod, s.record.container), ()))


def killed_process(text: str) -> str | None:
    """The process a kernel kill line or OOMKilling message names (its comm), if any."""
    m = KILL_COMM.search(text)
    return m.group(1) if m else None


def uncaught(model: Workload, symptoms: list[Signal]) -> list[Signal]:
    """Per container stream, the last exception line that ended the program: no progress of that stream after it, and
    the stream ends within a minute of it. One per stream (a traceback chain's lines are one death)."""
    stepped: dict[tuple[str | None, str | None], int] = {}
    for p in model.progress:
        key = (p.record.pod, p.record.container)
        stepped[key] = max(stepped.get(key, 0), p.ts)
    ignored = ignored_reports(symptoms)
    last: dict[tuple[str, str], Signal] = {}
    for s in symptoms:
        r = s.record
        if s.target != "error_line" or r.source != "container" or not r.pod or not r.container:
            continue
        key = (r.pod, r.container)
        if key in last and last[key].ts >= s.ts:
            continue
        if _EXCEPTION.search(r.text) is None:
            continue
        if in_ignored_report(s, ignored):
            continue  # never raised: not what ended the program
        last[key] = s
    running = model.running_times()
    out = []
    for key, s in last.items():
        if stepped.get(key, 0) > s.ts or model.stream_last.get(key, s.ts) - s.ts > OUTPUT_ENDS_NS:
            continue
        if running and running[-1] - s.ts > RAN_ON_NS:
            continue
        if exited_zero(model, *key) or _completed_after(model, s.ts, symptoms):
            continue  # CPython exits 1 after an uncaught exception (Modules/main.c): exit 0 says it was handled
        m = _EXCEPTION.search(s.record.text)
        out.append(Signal("symptom", _DIED.id, UNCAUGHT, s.record, {"exception": m.group(0) if m else ""}))
    return sorted(out, key=lambda s: s.ts)


def exited_zero(model: Workload, pod_name: str | None, container: str | None) -> bool:
    """The container ended with exit code 0 and is not running again (its Pod status)."""
    pod = model.pods.get(pod_name or "")
    c = pod.containers.get(container or "") if pod else None
    return bool(c and c.last_exit_code == 0 and not c.running and not c.waiting_reason)


def _completed_after(model: Workload, ts: int, symptoms: list[Signal]) -> bool:
    """The JobSet completed after `ts` with no restart between: every Job succeeded, so every pod's containers exited
    0 (a Job succeeds when its pods do: Kubernetes' Pod phase Succeeded), the one that printed the line too."""
    done = model.completed_at()
    return bool(done) and ts <= (done or 0) and not any(
        ts < t <= (done or 0) for x in symptoms if x.target == "jobset_restarting" for t in (x.times or [x.ts]))


def workload_process(model: Workload, comm: str, node: str | None, pid: str | None = None) -> bool:
    """The kernel killed a process of this workload: a Pathways server's by its binary's name, anywhere in the data;
    the JAX client's or a server's on a node the JobSet's pods ran on; any process, whatever its name (a renamed
    data-loader worker), whose memory cgroup the kernel's summary line names as one of the JobSet's pods."""
    comm = comm.strip()
    if PATHWAYS_PROCESS.match(comm) or (JOBSET_NODE_PROCESS.match(comm) and node in model.nodes):
        return True
    uid = model.oom_tasks.get((node, pid)) if node and pid else None
    return uid is not None and model.pod_by_uid(uid) is not None


def killed_pid(text: str) -> str | None:
    """The pid a kernel kill names ("Killed process <pid> (<comm>)"), or None."""
    m = re.search(r"Kill(?:ed)? process (\d+)", text)
    return m.group(1) if m else None


def killed(model: Workload, lines: list[Signal], symptoms: Sequence[Signal] = ()) -> list[Signal]:
    """The kernel's OOM kills of the workload's processes, each a program's death (its pid once): the kill as the
    serial console, the kernel log or node-problem-detector's OOMKilling Event tells it. A kill that ended no program
    (`outlived`) is left out: it took a child of a program that lives on."""
    out: dict[tuple, Signal] = {}
    for s in sorted(lines, key=lambda s: (s.ts, s.record.id)):  # the earliest report of each kill, whatever the order read
        m = _KILL.search(s.record.text)
        if m is None:
            continue
        node = s.record.node or (s.record.obj if s.record.kind == "Node" else None)
        pid = killed_pid(m.group(0))
        if not workload_process(model, m.group("comm"), node, pid):
            continue
        if outlived(model, node, s.ts, symptoms, pid):
            continue  # a child of a program that lives on (a data-loader worker): no container ended
        out.setdefault((node, pid or m.group(0)),
                       Signal("symptom", _DIED.id, KILLED, s.record, {"comm": m.group("comm")}))
    return sorted(out.values(), key=lambda s: s.ts)


# The data goes on this long after a kill with no end reported: it ended no container. A container's end is seen by
# the kubelet at its next pod lifecycle relist (every second) and the Job and JobSet controllers act on it within
# seconds (a failed Job, a restart, a back-off Event); three minutes leave room for an export's lag.
OUTLIVED_NS = 3 * 60 * NS
_ENDS = frozenset({"container_failed", "crashloop", "job_failed", "program_died", "jobset_restarting", "jobset_failed"})


def outlived(model: Workload, node: str | None, at: int, symptoms: Sequence[Signal] = (), pid: str | None = None
             ) -> bool:
    """A kernel kill on `node` at `at` ended no program of the JobSet. The kernel kills a process, not a container; a
    container whose main process it killed ends, and Kubernetes says so within moments: the Pod's status (its
    container terminated, its restarts rise), and Events (the kubelet's back-off before a restart, the Job's failure,
    the JobSet's restart or failure). So a kill that left them all as they were took a child (a data loader's worker,
    a subprocess). From the Pod objects: every pod on that node Running, every container in it running and never
    restarted. Without them, for the pods on that node (or the pod the kernel's summary names): the data goes on
    OUTLIVED_NS or more after the kill, the events were read, and no end was reported since (a container's failure or
    back-off, a failed Job, a program's own fatal lines, the JobSet restarting or failing)."""
    if not node:
        return False
    pods = [p for p in model.pods.values() if p.node == node]
    if "Pod" in model.objects_seen:
        return bool(pods) and all(p.phase == "Running" and p.containers and all(
            c.running and not c.restarts for c in p.containers.values()) for p in pods)
    uid = model.oom_tasks.get((node, pid)) if pid else None
    names = {p.name for p in pods} | ({pod} if uid and (pod := model.pod_by_uid(uid)) else set())
    if not names or "events" not in model.logs_seen or model.now - at < OUTLIVED_NS:
        return False
    return not any(s.target in _ENDS and s.ts >= at and (s.record.pod in names or s.record.pod is None)
                   for s in symptoms)
