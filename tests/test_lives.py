"""The run's lives and fate (issue 41): the examples docs/status-model.md names, and the rules beside the impact table,
each where it can fail (a cut export, no Pod objects, one attempt, a recovery, a healthy control)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pathways_workload.skill.api import diagnose_replay, parse_ts
from pathways_workload.skill.judging.place import Death, library_of, rule
from pathways_workload.skill.judging.survival import wording

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

# (case, class, status, fate): the examples the status-model doc gives
EXAMPLES = [
    ("case-272", "spot_preemption", "healthy", "recovered"),
    ("case-284", "spot_preemption", "stalled", "waiting"),
    ("case-009", "hbm_oom", "crashing", "crashing"),
    ("case-282", "host_oom", "failed", "failed"),
    ("case-279", "no_failure_detected", "healthy", "completed"),
    ("case-277", "no_failure_detected", "healthy", "running"),
    ("case-076", "host_maintenance", "degraded", "degraded"),
    ("case-087", "workload_stalled", "stalled", "stalled"),
    ("case-278", "no_failure_detected", "healthy", "running"),
    ("case-275", "no_failure_detected", "healthy", "running"),
    ("case-280", "no_failure_detected", "healthy", "completed"),
    ("case-281", "host_oom", "crashing", "crashing"),
    ("case-283", "host_oom", "failed", "failed"),
    ("case-286", "user_code_error", "failed", "failed"),
    ("case-287", "user_code_error", "failed", "failed"),
    ("case-313", "spot_preemption", "healthy", "recovering"),
    ("case-315", "host_oom", "crashing", "recovering"),
    ("case-316", "no_failure_detected", "healthy", "completed"),
    ("case-317", "host_oom", "healthy", "recovered"),
    ("case-318", "host_oom", "stalled", "stalled"),
    ("case-319", "tpu_hardware_failure", "stalled", "waiting"),
    ("case-320", "no_failure_detected", "healthy", "starting"),
    ("case-322", "node_lost", "stalled", "waiting"),
    ("case-323", "tpu_quota_exceeded", "stalled", "stalled"),
    ("case-326", "no_failure_detected", "healthy", "running"),
    ("case-327", "host_oom", "stalled", "stalled"),
    ("case-328", "tpu_hardware_failure", "degraded", "degraded"),
]


@pytest.mark.parametrize("case,cls,status,fate", EXAMPLES)
def test_the_doc_examples(case, cls, status, fate):
    d = diagnose_replay(FIXTURES / case)
    assert (d.failure_class, d.status, d.fate and d.fate.state) == (cls, status, fate)
    assert str(case) in (FIXTURES.parent / "docs" / "status-model.md").read_text()


def test_a_recovery_says_when_and_what_it_lost():
    d = diagnose_replay(FIXTURES / "case-272")
    f = d.fate
    assert f and f.state == "recovered" and f.restarts == 1 and len(f.attempts) == 2
    assert f.recovered_at and f.downtime_seconds and f.downtime_seconds > 0 and f.steps_redone == 100
    assert "The run recovered: after 1 restart" in d.summary and "(healthy, recovered)" in d.summary
    assert set(f.evidence) <= {e.id for e in d.evidence}  # every id the fate cites is an evidence item


def test_waiting_adds_the_fixes_of_what_it_waits_on():
    d = diagnose_replay(FIXTURES / "case-284")
    assert d.fate and d.fate.waiting_since and "not crash-looping" in d.fate.summary
    assert any("reservation" in f.summary.lower() for f in d.fix)


def test_one_attempt_has_no_restart_and_no_recovery():
    d = diagnose_replay(FIXTURES / "case-001")
    assert d.fate and d.fate.state == "failed" and d.fate.restarts == 0 and len(d.fate.attempts) == 1


def test_a_helper_death_is_an_observation():
    d = diagnose_replay(FIXTURES / "case-275")
    assert any("not the run's death" in o.why_not_cause for o in d.observations)


def test_wording_masks_numbers_ids_and_the_glog_prefix():
    a = "E1205 11:09:02.553077    7882 upload.py:80] upload of step 1200 to gs://b/x failed: 403 (req 0x7f3a9c)"
    b = "E1205 11:14:07.100000    7882 upload.py:80] upload of step 1300 to gs://b/x failed: 403 (req 0x7f3b11)"
    assert wording(a) == wording(b)
    assert wording(a) != wording("E1205 11:14:07.100000    7882 upload.py:80] upload of step 1300 crashed")


@pytest.mark.parametrize("death,expected", [
    (Death("server", "stepping", None, None, None, 134), None),  # inside Pathways' own servers: stays unknown
    (Death("sidecar", "stepping", ("/app/dec.py", "decode"), None, None, 139), ("colocated_python_failure", None)),
    (Death("client", "stepping", ("/app/pack.py", "pack"), None, None, 139), ("user_code_error", None)),
    (Death("client", "stepping", ("/usr/local/lib/python3.11/site-packages/orbax/x.py", "save"), "orbax", None, 1),
     ("checkpoint_failure", "user_code_error")),
    (Death("client", "before the first step", ("/site-packages/jax/_src/compiler.py", "compile_or_get_cached"), "jax",
           None, 1), ("xla_compile_error", "user_code_error")),
    (Death("client", "stepping", ("/app/train.py", "train_step"), "jax", None, 1), None),  # JAX's runtime mid-run
    (Death("client", "start-up", None, None, "parse_flags_from_env.cc", 1), ("user_code_error", "libtpu_mismatch")),
    (Death("client", "stepping", None, None, "tpu_program.cc", 134), None),
])
def test_place_and_phase_rules(death, expected):
    assert rule(death) == expected


def test_library_paths():
    assert library_of("/usr/local/lib/python3.11/site-packages/orbax/checkpoint/a.py") == "orbax"
    assert library_of("/usr/lib/python3.11/threading.py") == "threading"
    assert library_of("/app/model/train.py") is None


def test_a_helper_killed_for_memory_that_the_steps_went_past_is_survived_not_recovered_from():
    """case-301: a sidecar's OOM kill (the kernel's report, the container's OOMKilled end, its restart) while the
    trainer's steps keep their pace: the run never broke, so neither the class nor the fate is the kill's."""
    d = diagnose_replay(FIXTURES / "case-301")
    assert (d.failure_class, d.status, d.fate and d.fate.state) == ("no_failure_detected", "healthy", "running")
    survived = {o.failure_class for o in d.observations if "not the run's death" in o.why_not_cause}
    assert "host_oom" in survived


def test_a_kill_that_ended_no_container_is_a_hang_with_or_without_pod_objects(tmp_path):
    """case-302: the kernel killed a child of the client; every pod on that node Running, nothing restarted: the
    client lives and hangs (stalled). Without the Pod objects, the events going on for 20 minutes with no end of a
    container, a Job or the JobSet reported say the same; cut a minute after the kill, nothing does: a death."""
    d = diagnose_replay(FIXTURES / "case-302")
    assert (d.failure_class, d.status, d.fate and d.fate.state) == ("host_oom", "stalled", "stalled")
    cut = tmp_path / "case"
    cut.mkdir()
    for f in (FIXTURES / "case-302").glob("*.json"):
        if f.name in ("logs.json", "events.json"):  # logs and events only: no Pod objects, no series
            (cut / f.name).write_bytes(f.read_bytes())
    bare = diagnose_replay(cut)
    assert bare.failure_class == "host_oom" and bare.status == "stalled"
    kill = next(e for e in d.evidence if "Killed process" in e.excerpt)
    logs = json.loads((cut / "logs.json").read_text())
    entries = logs if isinstance(logs, list) else logs["entries"]
    until = parse_ts(kill.timestamp) + 60 * 10**9  # cut a minute after the kill: nothing yet shows the client alive
    (cut / "logs.json").write_text(json.dumps([e for e in entries if parse_ts(e["timestamp"]) <= until]))
    events = json.loads((cut / "events.json").read_text())
    events["items"] = [e for e in events["items"] if parse_ts(e.get("lastTimestamp") or e["firstTimestamp"]) <= until]
    (cut / "events.json").write_text(json.dumps(events))
    early = diagnose_replay(cut)
    assert (early.failure_class, early.status) == ("host_oom", "failed")


def test_a_kill_is_tied_to_its_pod_by_the_kernels_summary_whatever_the_process_calls_itself():
    """case-303: the global OOM killer took `shard-reader-3` (a name the program set); the kernel's summary line names
    its memory cgroup, the head pod's UID: the workload's kill (host_oom), and the program lives on (stalled)."""
    d = diagnose_replay(FIXTURES / "case-303")
    assert (d.failure_class, d.status) == ("host_oom", "stalled")
    assert "shard-reader-3" in d.summary


@pytest.mark.parametrize("cgroup", [
    "/kubepods/burstable/pod645e4c29-f597-4e90-aec0-8b875c59dea3/cdfd04dd37b8",  # cgroupfs driver
    "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod645e4c29_f597_4e90_aec0_8b875c59dea3.slice/"
    "cri-containerd-cdfd04dd37b8.scope",  # systemd driver
])
def test_the_oom_summary_names_the_pod_in_either_cgroup_driver(cgroup):
    from pathways_workload.skill.reading.records import Record
    from pathways_workload.skill.understanding.death import workload_process
    from pathways_workload.skill.understanding.model import Workload

    m = Workload(jobset="js")
    m.pod("js-head-0-0-abcde").uid = "645e4c29-f597-4e90-aec0-8b875c59dea3"
    m.add_record(Record(id="k", ts=1, source="serial", log="serial", node="n1",
                        text=f"[3497.9] oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,"
                             f"global_oom,task_memcg={cgroup},task=shard-reader-3,pid=9120,uid=0"))
    assert workload_process(m, "shard-reader-3", "n1", "9120")
    assert not workload_process(m, "shard-reader-3", "n1", "9121")  # another process: not named by this summary
    assert not workload_process(m, "shard-reader-3", "n2", "9120")  # the same pid on another node


def test_a_helper_the_kubelet_restarted_is_survived_after_the_back_off_reset():
    """case-304 (logs and events only): the sidecar killed for memory, its BackOff and Started Events, the trainer
    stepping on for 11 min: the helper is back, its death and the node's reports of its kill are survived."""
    d = diagnose_replay(FIXTURES / "case-304")
    assert (d.failure_class, d.status, d.fate and d.fate.state) == ("no_failure_detected", "healthy", "running")
    assert "A helper died and the run went on" in d.summary


def test_a_kill_that_stopped_the_stepping_program_on_its_node_is_the_workloads():
    """case-305: a renamed child killed on the head's node (node Events only, no kernel summary), one step in flight,
    then no step for eight of the trainer's intervals: the kill is the workload's and the run is stalled."""
    d = diagnose_replay(FIXTURES / "case-305")
    assert (d.failure_class, d.status) == ("host_oom", "stalled")


def test_the_taint_evictions_proof_of_a_lost_node_outranks_a_replacements_scheduler_words():
    """case-306: NodeNotReady, the worker evicted by the taint eviction controller 5 min later, a restart, the
    replacement Pending to the end with "No preemption victims found": the node was lost, the run waits for a place."""
    d = diagnose_replay(FIXTURES / "case-306")
    assert (d.failure_class, d.status, d.fate and d.fate.state) == ("node_lost", "stalled", "waiting")


def test_a_stall_after_a_thread_died_is_that_threads_exception_read_by_place():
    """case-307: `Exception in thread prefetch-0:` and a KeyError in the user's records.py, then the main loop blocks:
    user_code_error, stalled, citing the exception, the failing frame and its source line."""
    d = diagnose_replay(FIXTURES / "case-307")
    assert (d.failure_class, d.status, d.fate and d.fate.state) == ("user_code_error", "stalled", "stalled")
    assert "prefetch-0" in d.summary and any("caption" in e.excerpt for e in d.evidence)


def test_stepping_again_where_an_earlier_attempt_died_is_not_a_recovery():
    """case-308: three attempts died of the same OOM at step 400; the fourth is stepping toward it: still crashing."""
    d = diagnose_replay(FIXTURES / "case-308")
    assert (d.failure_class, d.status, d.fate and d.fate.state) == ("hbm_oom", "crashing", "crashing")


def test_a_run_whose_program_exited_zero_is_completed_before_the_jobset_says_so():
    """case-311: "Training finished", the client's container terminated with exit 0, the servers still running and the
    JobSet not yet marked Completed: healthy, completed."""
    d = diagnose_replay(FIXTURES / "case-311")
    assert (d.failure_class, d.status, d.fate and d.fate.state) == ("no_failure_detected", "healthy", "completed")


def test_a_machines_fault_then_steps_again_is_back_the_programs_own_cause_is_not_yet(tmp_path):
    """case-313/314: a reclaimed or maintained VM, one restart, minutes of steps: healthy, recovering (nothing in the
    program makes it strike again). case-315: the trainer killed for memory, one restart, minutes of steps: crashing,
    recovering, with the Pod and JobSet objects and without them."""
    for case, cls in (("case-313", "spot_preemption"), ("case-314", "host_maintenance")):
        d = diagnose_replay(FIXTURES / case)
        assert (d.failure_class, d.status, d.fate and d.fate.state) == (cls, "healthy", "recovering")
        assert d.fate and "machine's fault" in d.fate.summary
    bare = tmp_path / "case-315"
    bare.mkdir()
    for f in (FIXTURES / "case-315").glob("*.json"):
        if f.name in ("logs.json", "events.json"):
            (bare / f.name).write_bytes(f.read_bytes())
    for where in (FIXTURES / "case-315", bare):
        d = diagnose_replay(where)
        assert (d.failure_class, d.status, d.fate and d.fate.state) == ("host_oom", "crashing", "recovering")
        assert d.fate and "may strike again" in d.fate.summary


def test_an_exception_in_a_program_that_exited_zero_is_no_death():
    """case-316: an optional upload's 403 traceback after the final checkpoint, then exit 0 and the JobSet Completed:
    the exception was handled (an uncaught one exits 1), so neither it nor the 403 is a failure."""
    d = diagnose_replay(FIXTURES / "case-316")
    assert (d.failure_class, d.status) == ("no_failure_detected", "healthy")
    assert not any(h.failure_class == "gcs_permission_denied" for h in d.hypotheses)


def test_a_restart_seen_only_as_the_heads_new_pod_is_a_new_life():
    """case-317: logs only; the JobSet restart shows as the head's second pod name: two attempts, one restart."""
    d = diagnose_replay(FIXTURES / "case-317")
    assert d.fate and d.fate.restarts == 1 and len(d.fate.attempts) == 2 and d.fate.state == "recovered"


def test_a_dead_threads_header_and_failing_line_are_cited_never_the_column_markers():
    """case-321: `Exception in thread prefetch:`, the failing source line and the exception are cited; CPython 3.11's
    `^^^^` markers under a source line are not a statement of the program's."""
    d = diagnose_replay(FIXTURES / "case-321")
    excerpts = [e.excerpt for e in d.evidence]
    assert any(x.startswith("Exception in thread") for x in excerpts)
    assert not any(set(x.strip()) <= {"^", "~"} for x in excerpts)


def test_a_refused_replacement_after_an_unread_death_leaves_the_death_the_root(tmp_path):
    """case-319 without its chip lines (the ECC error, the chip marked unhealthy): the worker's check failure is a
    death no signature names; the capacity refusal of its replacement after the restart is the wait, not the cause."""
    cut = tmp_path / "case"
    cut.mkdir()
    for f in (FIXTURES / "case-319").glob("*.json"):
        (cut / f.name).write_bytes(f.read_bytes())
    logs = json.loads((cut / "logs.json").read_text())
    entries = logs if isinstance(logs, list) else logs["entries"]
    kept = [e for e in entries if not any(w in (e.get("textPayload") or "") for w in ("ECC", "unhealthy"))]
    assert len(kept) < len(entries)
    (cut / "logs.json").write_text(json.dumps(kept if isinstance(logs, list) else {**logs, "entries": kept}))
    d = diagnose_replay(cut)
    assert (d.failure_class, d.status, d.fate and d.fate.state) == ("unknown_failure", "stalled", "waiting")
    assert d.hypotheses[1].failure_class == "tpu_capacity_unavailable"


def test_a_failed_scale_up_that_passed_is_no_cause():
    """case-325: one FailedScaleUp, then the pool grew, every pod ran and the slices became ready 2.5 min before the
    export: the autoscaler retried, the failure passed; the run is starting."""
    d = diagnose_replay(FIXTURES / "case-325")
    assert (d.failure_class, d.status, d.fate and d.fate.state) == ("no_failure_detected", "healthy", "starting")


def test_a_sidecar_crash_looping_beside_a_run_that_steps_on_is_survived():
    """case-326: a sidecar nothing uses crash-loops the whole run (17 restarts: one folded BackOff Event, its last
    termination in the Pod object) while the trainer steps for 70 min: its first death was survived, and every later
    report of that container's end repeats it. Healthy, with the sidecar's death as an observation."""
    d = diagnose_replay(FIXTURES / "case-326")
    assert (d.failure_class, d.status) == ("no_failure_detected", "healthy")
    assert any(o.failure_class == "colocated_python_failure" and "not the run's death" in o.why_not_cause
               for o in d.observations)


def _step(minute: int, n: int):
    from pathways_workload.skill.catalog import Pattern
    from pathways_workload.skill.reading.records import Record
    from pathways_workload.skill.understanding.signals import Signal
    return Signal("milestone", "progress", Pattern("x"), Record(id=f"s{minute}", ts=minute * 60 * 10**9,
                                                                source="container", log="c", text=f"step {n}"),
                  {"step": str(n)})


def test_an_earlier_attempt_that_stepped_as_long_and_died_is_a_relapse_whatever_the_step_numbers():
    """h463's kind (a leak that kills by time): attempt 1 (restarted) stepped 30 min from step 1000 to 1600 and died;
    the last attempt resumed at 1500 and has stepped 14 min to 1800: past its highest step, not its span. Still
    crashing; once it has stepped longer, no longer a relapse."""
    from pathways_workload.skill.understanding.lives import Life, Lives, relapsed_past
    first = Life(0, 0, 10 * 60 * 10**9, [_step(1, 0), _step(9, 900)])
    second = Life(1, 10 * 60 * 10**9, 45 * 60 * 10**9, [_step(12, 1000), _step(42, 1600)])
    last = Life(2, 45 * 60 * 10**9, None, [_step(47, 1500), _step(61, 1800)])
    assert relapsed_past(Lives([first, second, last], 2, []))
    longer = Life(2, 45 * 60 * 10**9, None, [_step(47, 1500), _step(80, 2400)])
    assert not relapsed_past(Lives([first, second, longer], 2, []))


def test_e0102_counts_for_the_cache_only_right_after_a_cache_hit():
    """A RuntimeProgramInputMismatch (E0102) reads as a cache fault only within two minutes after JAX reported a
    persistent-cache hit (recording b21-cache-swap); E0102 alone has other causes."""
    from pathways_workload.skill.catalog.types import RuleContext
    from pathways_workload.skill.judging.classify import NEEDS
    from pathways_workload.skill.understanding.model import Workload
    m = Workload(jobset="js")
    hit = _step(10, 0)
    m.milestones["cache_hit"] = [hit]
    assert NEEDS["after_cache_hit"](RuleContext(model=m, signal=_step(11, 0))) is True
    assert NEEDS["after_cache_hit"](RuleContext(model=m, signal=_step(20, 0))) is False
