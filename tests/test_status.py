"""The status model: a test per row of skill/understanding/status.py, with and without the object files that usually decide it."""

from __future__ import annotations

import pytest

from pathways_workload.skill import references
from pathways_workload.skill.catalog import HEALTHY, Pattern
from pathways_workload.skill.understanding.model import ContainerInfo, Workload
from pathways_workload.skill.reading.records import Record
from pathways_workload.skill.understanding.signals import Signal
from pathways_workload.skill.understanding.status import ROWS, Run, decide

from conftest import ROOT

NS = 1_000_000_000
T0 = 1_800_000_000 * NS
HEAD, WORKER = "js-pathways-head-0-0-abcde", "js-worker-0-0-fghij"
CAUSE = "tpu_hardware_failure"  # a class with no status of its own


def sym(target: str, minute: int = 1) -> Signal:
    return Signal("symptom", target, Pattern("x"), Record(id=f"{target}{minute}", ts=T0 + minute * 60 * NS,
                                                          source="event", log="events", text=target), {})


def model(**kw) -> Workload:
    m = Workload(jobset="js", now=T0 + 30 * 60 * NS, **kw)
    return m


def pod(m: Workload, name: str, phase: str | None, *, restarts: int = 0, running: bool = False,
        waiting: str | None = None) -> None:
    p = m.pod(name)
    p.phase, p.ran = phase, phase != "Pending"
    p.containers["c"] = ContainerInfo("c", restarts=restarts, running=running, waiting_reason=waiting)


def status(m: Workload, symptoms=(), root: str = CAUSE, activity=(), running_at_end: bool = False) -> tuple[str, str]:
    return decide(Run(m, list(symptoms), root, list(activity), running_at_end))


def test_jobset_failed_by_condition_terminal_state_or_event():
    assert status(model(jobset_conditions=[{"type": "Failed", "status": "True"}])) == ("failed", "JobSet failed")
    assert status(model(terminal_state="Failed"))[0] == "failed"
    assert status(model(), [sym("jobset_failed")])[0] == "failed"  # no jobset.json: the event says it


def test_completed_is_healthy():
    assert status(model(terminal_state="Completed")) == ("healthy", "JobSet completed")


def test_a_failed_pod_with_restarts_and_no_restart_left_is_failed_not_crashing():
    m = model(max_restarts=2, jobset_restarts=2)
    pod(m, HEAD, "Failed", restarts=3)
    assert status(m, [sym("jobset_restarting", 1), sym("container_failed", 5)]) == ("failed", "no restart left")


def test_the_same_without_jobset_json_is_failed_too():
    m = model()  # restarts and maxRestarts unknown; the pod is Failed: it will not run again
    pod(m, HEAD, "Failed", restarts=3)
    assert status(m, [sym("container_failed", 5)])[0] == "failed"


def test_restarts_left_and_the_pod_running_again_is_crashing():
    m = model(max_restarts=5, jobset_restarts=2)
    pod(m, HEAD, "Running", restarts=1, running=True)
    assert status(m, [sym("jobset_restarting"), sym("container_failed", 5)]) == ("crashing", "JobSet restarting")


def test_a_restart_told_only_by_the_heads_new_pod_name_is_crashing():
    """Logs alone: the head's replica under a second pod name is a restart (skill.understanding.lives.recreations)."""
    m = model()
    for suffix, minute in (("abcde", 0), ("vwxyz", 12)):
        p = m.pod(f"js-pathways-head-0-0-{suffix}")
        p.ran, p.first_seen = True, T0 + minute * 60 * NS
    assert status(m, [sym("program_died", 10)]) == ("crashing", "JobSet restarting")


def test_containers_restarting_without_jobset_json_is_crashing():
    m = model()
    pod(m, WORKER, "Running", restarts=4, waiting="CrashLoopBackOff")
    assert status(m, [sym("container_failed", 5)]) == ("crashing", "containers restarting")


def test_a_container_that_restarted_once_and_ran_on_while_nothing_steps_is_a_hang_not_a_crash_loop():
    m = model()
    m.objects_seen.add("Pod")
    pod(m, WORKER, "Running", restarts=1, running=True)
    # died at minute 5, back-off at 5, running since: past the kubelet's 5-minute back-off cap, no step since
    assert status(m, [sym("container_failed", 5), sym("crashloop", 5)]) == ("stalled", "restarted, then hung")
    # the same restart 4 minutes before the end: a crash loop may still restart it
    assert status(m, [sym("container_failed", 26)]) == ("crashing", "containers restarting")
    # a JobSet restart is the run's restart cycle, whatever the container does since
    assert status(m, [sym("jobset_restarting", 4), sym("container_failed", 5)])[0] == "crashing"
    # a container that waits to be restarted, or a program that ended for good, is not a hang
    other = model()
    other.objects_seen.add("Pod")
    pod(other, WORKER, "Running", restarts=1, running=True)
    other.pod(HEAD).phase = "Failed"
    assert status(other, [sym("container_failed", 5)])[0] != "stalled"
    waits = model()
    waits.objects_seen.add("Pod")
    pod(waits, WORKER, "Running", restarts=3, waiting="CrashLoopBackOff")
    assert status(waits, [sym("container_failed", 5)]) == ("crashing", "containers restarting")


def test_the_same_hang_from_logs_and_events_alone_needs_the_kubelets_restart_and_output_after_it():
    def at(target: str, minute: int) -> Signal:
        s = sym(target, minute)
        s.record.pod, s.record.container = WORKER, "sidecar"
        return s

    m = model()  # no Pod objects: the program's own death, the kubelet's BackOff, then its output again
    m.stream_last[(WORKER, "sidecar")] = T0 + 6 * 60 * NS
    assert status(m, [at("program_died", 5), at("crashloop", 5)]) == ("stalled", "restarted, then hung")
    # no BackOff and output only a minute after the death: that may be its own last words
    assert status(m, [at("program_died", 5)])[1] != "restarted, then hung"
    # a first restart has no back-off: its output minutes after the death is the restarted program's
    later = model()
    later.stream_last[(WORKER, "sidecar")] = T0 + 29 * 60 * NS
    assert status(later, [at("program_died", 5)]) == ("stalled", "restarted, then hung")
    # restarted but silent since the back-off: not seen running again
    quiet = model()
    quiet.stream_last[(WORKER, "sidecar")] = T0 + 5 * 60 * NS
    assert status(quiet, [at("program_died", 5), at("crashloop", 5)])[1] != "restarted, then hung"


def test_suspended_is_stalled():
    assert status(model(suspended=True)) == ("stalled", "suspended")


def test_healthy_needs_progress_seen():
    assert status(model(), root=HEALTHY, activity=[T0], running_at_end=True)[0] == "healthy"
    assert status(model(), root=HEALTHY, activity=[T0]) == ("healthy", "no failure, progress seen")
    assert status(model(), root=HEALTHY) == ("stalled", "no failure, no progress seen")


def _ready(m: Workload, minutes_before_end: int) -> Workload:
    m.add_milestone(Signal("milestone", "slices_ready", Pattern("x"),
                           Record(id="r", ts=m.now - minutes_before_end * 60 * NS, source="container", log="stderr",
                                  text="*** 2/2 Pathways Slices Now Ready ***"), {"ready": "2", "total": "2"}))
    return m


def test_slices_just_ready_without_steps_is_starting_not_stalled():
    """Every slice ready 3 min before the data ends, no step yet: the first compile may still run (h122's export)."""
    assert status(_ready(model(), 3), root=HEALTHY) == ("healthy", "starting, on track so far")
    # ... but long after the slices became ready, no step at all is not "starting" any more
    assert status(_ready(model(), 25), root=HEALTHY) == ("stalled", "no failure, no progress seen")
    # ... and a failure verdict is never "starting"
    assert status(_ready(model(), 3))[1] != "starting, on track so far"


def test_pending_with_a_failure_verdict_and_absence_classes_are_stalled():
    m = model()
    pod(m, WORKER, "Pending")
    assert status(m)[0] == "stalled"
    assert status(model(), root="slices_not_ready") == ("stalled", "pending, or decided by absence")


def test_unschedulable_since_the_last_restart_is_stalled():
    m = model()
    pod(m, WORKER, "Pending")
    assert status(m, [sym("jobset_restarting", 1), sym("unschedulable", 2)]) == ("stalled", "unschedulable since the last restart")


def test_a_replacement_that_waits_is_stalled_with_or_without_pod_objects():
    cls = "hot_swap_failure"  # a class that waits for a replacement
    m = model()
    pod(m, WORKER, "Pending")
    m.objects_seen.add("Pod")
    assert status(m, [sym("jobset_restarting")], root=cls) == ("stalled", "replacement waits")
    bare = model()  # no Pod object read: the events name a new pod that was never placed on a node and never ran
    bare.pod(WORKER)
    assert status(bare, [sym("jobset_restarting")], root=cls) == ("stalled", "replacement waits")
    bare.pod(WORKER).node = "gke-n-1"  # placed (a Scheduled event): not waiting for a replacement
    assert status(bare, [sym("jobset_restarting")], root=cls)[0] == "crashing"


def test_data_loss_then_progress_is_degraded():
    m = model()
    m.progress = [sym("progress", 10)]
    assert status(m, [sym("data_loss", 5)]) == ("degraded", "lost a slice, ran on")


def test_a_cause_with_nothing_exited_is_stalled_and_with_an_exit_failed():
    assert status(model()) == ("stalled", "nothing exited")
    assert status(model(), [sym("container_failed")]) == ("failed", "otherwise")


def test_a_program_dying_in_its_own_logs_is_an_exit_without_the_pod_objects():
    # live without the Kubernetes API, or an export made before the Pod's terminated status: the program's own last
    # words (a glog F line, an uncaught exception that ended its output) say it exited
    assert status(model(), [sym("program_died")]) == ("failed", "otherwise")


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.name)
def test_every_row_is_described(row):
    assert row.status in ("failed", "crashing", "stalled", "degraded", "healthy") and len(row.when) > 20


def test_the_status_doc_is_generated_from_the_table():
    assert (ROOT / "docs" / "status-model.md").read_text() == references.render_status_model()
