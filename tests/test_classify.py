"""The classifier and the explanation on small literal workloads: attempts, entities, wording, data gaps, Spot."""

from __future__ import annotations

from types import SimpleNamespace

import orjson
import pytest

from pathways_workload.skill.catalog import BY_ID, CLASSES
from pathways_workload.skill.judging.classify import ABSENCE_CHECKS, Hypo, absence_context, classify, needs_context
from pathways_workload.skill.judging.engine import Collector, RunStats
from pathways_workload.skill.telling.entities import entities
from pathways_workload.skill.telling.explain import _ENV
from pathways_workload.skill.telling.gaps import data_gaps
from pathways_workload.skill.telling.values import _finished
from pathways_workload.skill.understanding.model import Workload
from pathways_workload.skill.reading.objects import pod_records
from pathways_workload.skill.understanding.queries import Scope, workload_queries
from pathways_workload.skill.reading.evaluate import matches
from pathways_workload.skill.reading.records import Record, record_from_entry
from pathways_workload.skill.understanding.signals import Matcher
from pathways_workload.skill.reading.sources.base import SourceStats

NS = 1_000_000_000
T0 = 1_764_000_000 * NS
JS = "lm-run"
HEAD, WORKER = f"{JS}-pathways-head-0-0-abcde", f"{JS}-pathways-worker-0-0-fghij"
M = Matcher()


def feed(model: Workload, *records: Record) -> tuple[list, list]:
    """Records through the real collector: milestones into the model, causes and symptoms out."""
    col = Collector(model)
    for r in records:
        col.take(r)
    return col.causes, col.symptoms


def line(ts: int, text: str, container: str = "pathways-rm", pod: str = HEAD, rid: str = "") -> Record:
    return Record(id=rid or f"{pod}-{ts}", ts=ts, source="container", log="stderr", text=text, pod=pod, container=container)


def rm_start(ts: int, ready: str | None, pod: str = HEAD) -> list[Record]:
    recs = [line(ts, "Pathways Server serving on [::]:29001", pod=pod)]
    if ready:
        recs.append(line(ts + 60 * NS, f"*** {ready} Pathways Slices Now Ready ***", pod=pod))
    return recs


@pytest.mark.parametrize("attempts, stalled", [
    ([("2/2", 0)], False),
    ([(None, 0)], True),
    ([("2/2", 0), ("1/2", 30)], True),  # attempt 0 was ready; the restarted RM never is
    ([("2/2", 0), (None, 30)], True),
    ([("1/2", 0), ("2/2", 30)], False),
])
def test_slices_ready_is_judged_per_attempt(attempts, stalled):
    model = Workload(jobset=JS)
    for i, (ready, minute) in enumerate(attempts):
        feed(model, *rm_start(T0 + minute * 60 * NS, ready, pod=HEAD[:-5] + f"att{i}x"))
    model.now = T0 + (attempts[-1][1] + 20) * 60 * NS
    assert (_milestone_missing(model) is not None) == stalled


def test_wrong_rm_address_implicates_the_jobset_not_the_head_or_its_node():
    model = Workload(jobset=JS)
    model.pod(HEAD).node = "gke-c-cpu-np-1"
    feed(model, *rm_start(T0, None),
         line(T0 + 30 * NS, "argv[2]: '--resource_manager_address=lm-old-pathways-head-0-0.lm-old:29001'",
              "pathways-worker", WORKER))
    model.now = T0 + 20 * 60 * NS
    hypo = _milestone_missing(model)
    assert hypo is not None and hypo.located[0].record.pod == WORKER
    assert [(e.kind, e.name) for e in entities(model, hypo)] == [("JobSet", JS)]


def _render_healthy(model: Workload, progress_seen: str = "yes") -> str:
    template = BY_ID["no_failure_detected"].explanation
    return _ENV.from_string(template).render(jobset=JS, finished=_finished(model, "jax-tpu"), progress_seen=progress_seen,
                                             slices_ready="yes")


def test_no_failure_without_progress_is_not_worded_as_making_progress():
    text = _render_healthy(Workload(jobset=JS), progress_seen="")
    assert "keeps making progress" not in text and "too early to call the run healthy" in text


def test_a_completed_run_is_worded_as_finished_not_as_making_progress():
    running = Workload(jobset=JS)
    assert "keeps making progress" in _render_healthy(running)
    done = Workload(jobset=JS, jobset_conditions=[{"type": "Completed", "status": "True", "reason": "AllJobsCompleted"}])
    done.pod(HEAD).containers["jax-tpu"] = SimpleNamespace(last_exit_code=0, running=False)
    text = _render_healthy(done)
    assert "finished its run" in text and "exited 0" in text and "Completed" in text
    assert "keeps making progress" not in text


def _gaps(model: Workload) -> list[str]:
    a = SimpleNamespace(model=model, stats=RunStats.of(SourceStats(), []),
                        verdict=SimpleNamespace(failure_class="head_pod_evicted", notes=[]))
    return data_gaps(a)


def test_pods_deleted_with_the_ended_jobset_is_a_precise_gap():
    gone = Workload(jobset=JS, jobset_conditions=[{"type": "Failed", "status": "True"}], objects_seen={"JobSet"})
    gone.pod(HEAD)
    text = " ".join(_gaps(gone))
    assert "pods were gone by export time" in text and "kubectl get pods" not in text
    never = Workload(jobset=JS, objects_seen={"JobSet"})
    assert "no Pod objects (kubectl get pods -o json)" in " ".join(_gaps(never))


SCALE_DOWN = {
    "insertId": "sd1", "timestamp": "2026-11-30T14:08:02Z", "resource": {"type": "k8s_cluster", "labels": {"cluster_name": "c"}},
    "logName": "projects/p/logs/container.googleapis.com%2Fcluster-autoscaler-visibility",
    "jsonPayload": {"decision": {"scaleDown": {"nodesToBeRemoved": [
        {"evictedPods": [{"name": f"other-{JS}-worker-0-0-aaaaa"}], "node": {"mig": {"name": "m1"}, "name": "gke-c-tpu-1"}},
        {"evictedPods": [{"controller": {"name": f"{JS}-pathways-head-0"}, "name": HEAD}], "evictedPodsTotalCount": 1,
         "node": {"cpuRatio": 37, "mig": {"name": "gke-c-cpu-np-0123abcd-grp", "nodepool": "cpu-np"}, "name": "gke-c-cpu-np-9"}},
    ]}}},
}


def test_the_autoscaler_scale_down_decision_is_read():
    # (its signature was removed with the other unsourced wordings, issue 28; the query still reads the decision)
    scope = Scope(jobset=JS, start_ns=T0, end_ns=T0 + 3600 * NS, cluster="c")
    autoscaler = next(q for q in workload_queries(scope) if q.name == "cluster-activity")
    entry = dict(SCALE_DOWN, timestamp="2025-11-24T16:10:00Z")  # inside the window
    assert matches(autoscaler.filter, entry)


def test_a_scale_down_of_worker_nodes_is_not_a_head_eviction():
    entry = orjson.loads(orjson.dumps(SCALE_DOWN))
    del entry["jsonPayload"]["decision"]["scaleDown"]["nodesToBeRemoved"][1]
    assert not [s for s in M.match(record_from_entry(entry)) if s.target == "head_pod_evicted"]


PORT_FORWARD = {
    "insertId": "pf1", "timestamp": "2025-11-24T16:10:00Z", "resource": {"type": "k8s_cluster", "labels": {"cluster_name": "c"}},
    "logName": "projects/p/logs/cloudaudit.googleapis.com%2Factivity",
    "protoPayload": {"methodName": "io.k8s.core.v1.pods.portforward.create", "authenticationInfo": {"principalEmail": "a@x"},
                     "resourceName": f"core/v1/namespaces/default/pods/{HEAD}/portforward"},
}


def test_a_port_forward_is_read_but_alone_is_no_lost_session():
    scope = Scope(jobset=JS, start_ns=T0, end_ns=T0 + 3600 * NS, cluster="c")
    audit = next(q for q in workload_queries(scope) if q.name == "cluster-activity")
    assert matches(audit.filter, PORT_FORWARD)
    model = Workload(jobset=JS, now=T0 + 3600 * NS)
    causes, symptoms = feed(model, record_from_entry(PORT_FORWARD))
    assert classify(model, causes, symptoms).failure_class == "no_failure_detected"


def _worker_pod(spot: bool) -> dict:
    selector = {"cloud.google.com/gke-tpu-topology": "4x4"} | ({"cloud.google.com/gke-spot": "true"} if spot else {})
    return {"kind": "Pod", "metadata": {"name": WORKER, "uid": "u-w", "labels": {"jobset.sigs.k8s.io/jobset-name": JS}},
            "spec": {"nodeName": "gke-c-tpu-3", "nodeSelector": selector}, "status": {"phase": "Running"}}


def _shutdown(spot: bool | None) -> str:
    """A graceful node shutdown of a worker's node, then NotReady: the same lines on Spot, on-demand, or unknown capacity."""
    model = Workload(jobset=JS, now=T0 + 3600 * NS)
    pod = [_worker_pod(spot)] if spot is not None else []
    model.add_objects(pod)
    model.pod(WORKER).node = "gke-c-tpu-3"
    node = dict(source="node", log="kubelet", node="gke-c-tpu-3")
    causes, symptoms = feed(
        model,
        Record(id="k1", ts=T0, text='"Shutdown manager processing shutdown event"', **node),
        Record(id="k2", ts=T0 + NS, text='"Shutdown manager killing pod with gracePeriod" pod="default/x" gracePeriod=15', **node),
        Record(id="e1", ts=T0 + 48 * NS, source="event", log="events", node="gke-c-tpu-3", kind="Node", obj="gke-c-tpu-3",
               text="NodeNotReady: Node gke-c-tpu-3 status is now: NodeNotReady"),
        *(r for p in pod for r in pod_records(p)),
    )
    return classify(model, causes, symptoms).failure_class


@pytest.mark.parametrize("spot, expected", [(True, "spot_preemption"), (None, "spot_preemption"), (False, "node_lost")])
def test_a_graceful_shutdown_is_spot_only_on_spot_capacity(spot, expected):
    assert _shutdown(spot) == expected


def test_a_node_label_says_spot_when_the_pods_do_not():
    model = Workload(jobset=JS)
    model.add_objects([{"kind": "Node", "metadata": {"name": "n1", "labels": {"cloud.google.com/gke-spot": "true"}}},
                       {"kind": "Node", "metadata": {"name": "n2", "labels": {}}}])
    assert model.is_spot("n1") is True and model.is_spot("n2") is False and model.is_spot("n3") is None


def _event(ts: int, text: str, pod: str = WORKER, rid: str = "") -> Record:
    return Record(id=rid or f"ev-{ts}", ts=ts, source="event", log="events", text=text, pod=pod, kind="Pod", obj=pod)


def test_a_refused_scale_up_outranks_the_schedulers_earlier_selector_view():
    model = Workload(jobset=JS)
    causes, symptoms = feed(
        model,
        _event(T0, "FailedScheduling: 0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector."),
        Record(id="ca", ts=T0 + 10 * 60 * NS, source="event", log="container.googleapis.com/cluster-autoscaler-visibility",
               text="scale.up.error.out.of.resources Instance 'gke-c-tpu-np-0-0a1b2c3d-abcd' creation failed: "
                    "reservation r1 has no available capacity"),
    )
    model.now = T0 + 30 * 60 * NS
    v = classify(model, causes, symptoms)
    assert v.failure_class == "tpu_capacity_unavailable" and v.status == "stalled"


def _steady(model: Workload, start: int, minutes: int) -> list[Record]:
    return [line(start + m * 60 * NS, f"step {m * 10} loss 2.1", container="jax-tpu", rid=f"p{m}") for m in range(minutes)]


def _busy_then_steady(extra: list[Record]) -> tuple[str, str]:
    model = Workload(jobset=JS)
    causes, symptoms = feed(
        model,
        line(T0, "TPU initialization failed: FAILED_PRECONDITION: The TPU is already in use by process with pid 4011.",
             container="pathways-worker", pod=WORKER),
        Record(id="cf", ts=T0 + NS, source="object", log="object", pod=WORKER, kind="Pod", obj=WORKER, container="pathways-worker",
               text="container pathways-worker terminated: reason=Error exitCode=1 restartCount=1"),
        *_steady(model, T0 + 60 * NS, 45),
        *extra,
    )
    model.now = T0 + 46 * 60 * NS
    v = classify(model, causes, symptoms)
    return v.failure_class, v.status


def test_a_start_up_blip_followed_by_a_long_steady_run_is_no_failure():
    assert _busy_then_steady([]) == ("no_failure_detected", "healthy")


def test_a_retried_warning_mid_run_is_no_failure():
    warn = line(T0 + 10 * 60 * NS, "WARNING:jax._src.compilation_cache:Error writing persistent compilation cache entry: 429 "
                                   "rate limit on object cache/x", container="jax-tpu", rid="w429")
    assert _busy_then_steady([warn]) == ("no_failure_detected", "healthy")


def test_a_fault_that_interrupted_the_running_program_stays_the_verdict():
    model = Workload(jobset=JS)
    causes, symptoms = feed(
        model,
        *_steady(model, T0, 20),
        Record(id="hm", ts=T0 + 20 * 60 * NS, source="node", log="cloudaudit.googleapis.com/system_event", node="gke-c-tpu-1",
               text="projects/p/zones/z/instances/gke-c-tpu-1 compute.instances.terminateOnHostMaintenance"),
        line(T0 + 20 * 60 * NS + 30 * NS, "jax.errors.JaxRuntimeError: DATA_LOSS: Slice 1 is unavailable: task js-worker-1-0 lost",
             container="jax-tpu", rid="dl"),
        *[line(T0 + (22 + m) * 60 * NS, f"step {300 + m} loss 2.0", container="jax-tpu", rid=f"q{m}") for m in range(25)],
    )
    model.now = T0 + 48 * 60 * NS
    assert classify(model, causes, symptoms).failure_class == "host_maintenance"


def test_a_failed_jobset_is_never_resolved_by_earlier_progress():
    model = Workload(jobset=JS, jobset_conditions=[{"type": "Failed", "status": "True"}])
    causes, symptoms = feed(model, *_steady(model, T0, 30),
                            line(T0 + 31 * 60 * NS, "orbax.checkpoint.checkpoint_manager.StepAlreadyExistsError: Checkpoint for "
                                 "step 500 already exists.", container="jax-tpu", rid="se"))
    model.now = T0 + 32 * 60 * NS
    assert classify(model, causes, symptoms).failure_class == "checkpoint_failure"


def test_tensorstore_bucket_wording_and_gke_vm_names_give_entities():
    model = Workload(jobset=JS, cluster="c")
    rec = line(T0, 'PERMISSION_DENIED: Error writing "k/0" in GCS bucket "ckpt-x": HTTP response code: 403 with body: '
                   "Provided scope(s) are not authorized", container="pathways-worker", pod=WORKER, rid="s1")
    vm = Record(id="v1", ts=T0, source="node", log="cloudaudit.googleapis.com/activity",
                text="v1.compute.instances.insert projects/p/zones/z/instances/gke-c-tpu-np-0-0a1b2c3d-abcd The reservation "
                     "'r1' does not have sufficient capacity for the requested resources.")
    s1 = next(s for s in M.match(rec) if s.target == "gcs_permission_denied")
    v1 = next(s for s in M.match(vm) if s.target == "tpu_capacity_unavailable")
    assert ("Bucket", "gs://ckpt-x") in {(e.kind, e.name) for e in entities(model, Hypo("gcs_permission_denied", 0.95, [s1], T0))}
    assert ("NodePool", "tpu-np-0") in {(e.kind, e.name) for e in entities(model, Hypo("tpu_capacity_unavailable", 0.9, [v1], T0))}


def test_a_one_off_line_saying_step_is_not_progress(replayed):
    """case-098's injected runbook note says '[RB-4471 step 3]': the repeated step lines are progress, it is not."""
    from conftest import ROOT

    d = replayed.diagnosis(ROOT / "fixtures" / "case-098")
    cited = {e.id: e.excerpt for e in d.evidence}
    assert not any("RB-4471" in x for x in cited.values())
    assert not any("RB-4471" in t.summary for t in d.timeline)


def _milestone_missing(model):
    """The catalog's milestone-missing check (slices_not_ready), as the classifier runs it."""
    cls = next(c for c in CLASSES if c.absence and c.absence.kind == "milestone_missing")
    return ABSENCE_CHECKS[cls.absence.kind](absence_context(model, cls))


def _node_rec(ts: int, text: str, node: str = "gke-c-tpu-np-1-0a1b2c3d-abcd", rid: str = "") -> Record:
    return Record(id=rid or f"n-{ts}", ts=ts, source="node", log="cloudaudit.googleapis.com/system_event", text=text, node=node)


_NO_VICTIMS = ("FailedScheduling: 0/8 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/unreachable: }, "
               "4 Insufficient google.com/tpu. preemption: 0/8 nodes are available: 4 No preemption victims found for "
               "incoming pod.")


def test_a_replacement_without_victims_does_not_outrank_a_proven_preemption():
    """'No preemption victims' is what any unplaceable replacement hears: strong, not proof of a failed hot swap."""
    model = Workload(jobset=JS)
    causes, symptoms = feed(model, _node_rec(T0, "compute.instances.preempted projects/p/zones/z/instances/"
                                                 "gke-c-tpu-np-1-0a1b2c3d-abcd Instance was preempted."),
                            _event(T0 + 3 * 60 * NS, _NO_VICTIMS, pod=f"{JS}-worker-1-0-zzzzz"))
    model.now = T0 + 30 * 60 * NS
    v = classify(model, causes, symptoms)
    assert v.failure_class == "spot_preemption"
    assert "hot_swap_failure" in [h.failure_class for h in v.ranked]


def test_a_standby_preempted_for_the_replacement_is_hot_swap_evidence():
    """The scheduler's Preempted event on another workload's pod: a standby made room, so the hot swap was under way."""
    model = Workload(jobset=JS, cluster="c")
    causes, symptoms = feed(
        model, _node_rec(T0, "compute.instances.hostError projects/p/zones/z/instances/gke-c-tpu-np-1-0a1b2c3d-abcd"),
        _event(T0 + 60 * NS, "Preempted: Preempted by pod 4ac849e5 on node gke-c-tpu-np-standby-5e0c91ad-q4tn",
               pod="eval-standby-worker-0-0-k2m7q"),
        _event(T0 + 90 * NS, "FailedScheduling: 0/14 nodes are available: 4 Insufficient google.com/tpu. preemption: not "
                             "eligible due to a terminating pod on the nominated node.", pod=f"{JS}-worker-1-0-zzzzz"))
    model.now = T0 + 30 * 60 * NS
    v = classify(model, causes, symptoms)
    assert v.failure_class == "hot_swap_failure"
    assert ("NodePool", "tpu-np-standby") in {(e.kind, e.name) for e in entities(model, v.root, v.symptoms)}


def test_the_standby_preemption_event_is_read_live_and_in_replay():
    from pathways_workload.skill.judging.engine import _belongs

    assert 'jsonPayload.reason="Preempted"' in next(q.filter for q in workload_queries(Scope(JS, T0, T0 + NS)) if q.name == "events")
    assert _belongs({"kind": "Event", "reason": "Preempted", "involvedObject": {"kind": "Pod", "name": "standby-0"}}, JS)


def test_a_node_fault_names_the_pod_on_the_node_and_the_container_that_failed():
    """The kernel killed a process on a node: name the JobSet's pod there and the container that failed after it."""
    model = Workload(jobset=JS)
    node, pod = "gke-c-tpu-np-0-0a1b2c3d-abcd", f"{JS}-worker-0-2-k6sa7"
    model.add_record(Record(id="sch", ts=T0 - 600 * NS, source="event", log="events", kind="Pod", obj=pod, pod=pod,
                            reason="Scheduled", text=f"Scheduled: Successfully assigned default/{pod} to {node}"))
    causes, symptoms = feed(
        model, Record(id="oom", ts=T0, source="serial", log="serialconsole.googleapis.com/serial_port_1_output", node=node,
                      text="[ 1623.49] Out of memory: Killed process 48211 (server) total-vm:471203448kB"),
        _event(T0 + 20 * NS, f"BackOff: Back-off restarting failed container pathways-worker in pod {pod}_default(x)", pod=pod))
    model.now = T0 + 30 * 60 * NS
    v = classify(model, causes, symptoms)
    got = {(e.kind, e.name) for e in entities(model, v.root, v.symptoms)}
    assert {("Node", node), ("Pod", pod), ("Container", f"{pod}/pathways-worker")} <= got


def test_the_newer_kernel_oops_wording_is_a_kernel_fault():
    rec = Record(id="k", ts=T0, source="serial", log="serialconsole.googleapis.com/serial_port_1_output", node="n1",
                 text="[ 1856.331907] BUG: kernel NULL pointer dereference, address: 0000000000000010")
    assert "node_kernel_error" in {s.target for s in M.match(rec)}


def test_a_node_daemon_killed_for_memory_is_not_the_workloads_oom():
    """The kernel killed fluent-bit on the head's node and nothing of the JobSet failed with it: not host_oom."""
    model = Workload(jobset=JS)
    node = "gke-c-cpu-np-60b180aa-h5zk"
    model.add_record(Record(id="sch", ts=T0 - 600 * NS, source="event", log="events", kind="Pod", obj=HEAD, pod=HEAD,
                            reason="Scheduled", text=f"Scheduled: Successfully assigned default/{HEAD} to {node}"))
    oom = Record(id="oom", ts=T0, source="event", log="events", kind="Node", obj=node, node=node,
                 text="OOMKilling: Memory cgroup out of memory: Killed process 48213 (fluent-bit) total-vm:1184532kB")
    causes, symptoms = feed(model, oom)
    model.now = T0 + 30 * 60 * NS
    assert "host_oom" not in {h.failure_class for h in classify(model, causes, symptoms).ranked}
    # ... but the same kill followed by the head's container failing is the workload's memory
    causes, symptoms = feed(model, oom, Record(id="t", ts=T0 + 5 * NS, source="object", log="pods", kind="Pod", obj=HEAD,
                                              pod=HEAD, container="jax-tpu",
                                              text="container jax-tpu terminated: reason=Error exitCode=137 restartCount=0"))
    assert classify(model, causes, symptoms).failure_class == "host_oom"


def test_an_absl_signal_dump_cites_the_frame_it_stopped_in():
    model = Workload(jobset=JS)
    w = f"{JS}-worker-0-2-iry6u"
    causes, symptoms = feed(
        model, line(T0, "*** SIGSEGV received at time=1770266061 on cpu 143 ***", container="pathways-worker", pod=w, rid="sig"),
        line(T0 + 1000, "PC: @     0x55d4c1a3f2b8  (unknown)  pathways::RemoteBufferManager::ReleaseLocked()",
             container="pathways-worker", pod=w, rid="pc"),
        Record(id="t", ts=T0 + 2 * NS, source="object", log="pods", kind="Pod", obj=w, pod=w, container="pathways-worker",
               text="container pathways-worker terminated: reason=Error exitCode=139 restartCount=1"))
    model.now = T0 + 30 * 60 * NS
    v = classify(model, causes, symptoms)
    assert v.failure_class == "unknown_failure" and {"sig", "pc"} <= {s.record.id for s in v.root.signals}
    assert "SIGSEGV" in v.root.detail


def test_a_failed_recovery_names_the_interrupted_vm_and_its_node_pool():
    """Elastic training gave up after a Spot VM went away: name the VM and its node pool, not only the client."""
    from pathways_workload.skill.catalog import BY_ID

    model = Workload(jobset=JS, cluster="c")
    pre = _node_rec(T0, "compute.instances.preempted projects/p/zones/z/instances/gke-c-tpu-np-2-ba24fdbb-nvru",
                    node="gke-c-tpu-np-2-ba24fdbb-nvru")
    spot = Hypo("spot_preemption", 0.97, [s for s in M.match(pre) if s.target == "spot_preemption"], T0)
    root = Hypo("elastic_recovery_exhausted", 0.9, [], T0)
    assert "spot_preemption" in BY_ID[root.failure_class].absorbs
    got = {(e.kind, e.name) for e in entities(model, root, [], [spot])}
    assert {("Node", "gke-c-tpu-np-2-ba24fdbb-nvru"), ("NodePool", "tpu-np-2")} <= got


def test_a_healthy_verdict_cites_the_start_up_and_the_latest_step(replayed):
    from conftest import ROOT

    d = replayed.diagnosis(ROOT / "fixtures" / "case-002")
    assert any("Slices Now Ready" in e.excerpt for e in d.evidence)


@pytest.mark.parametrize("text, cls", [
    ("E1128 14:06:02.121798     506 tpu_runtime_init.cc:377] TPU runtime initialization aborted: INTERNAL: expected 4 "
     "worker addresses for topology 2x2x4, found 0", "tpu_init_failure"),
])
def test_runtime_and_driver_wordings(text, cls):
    assert cls in {s.target for s in M.match(line(T0, text, container="pathways-worker", pod=WORKER))}


def test_the_autoscaler_marking_the_heads_node_supports_the_eviction_only_on_that_node():
    model = Workload(jobset=JS)
    node = "gke-c-cpu-np-dcccb56e-m29r"
    model.add_record(Record(id="sch", ts=T0 - 600 * NS, source="event", log="events", kind="Pod", obj=HEAD, pod=HEAD,
                            reason="Scheduled", text=f"Scheduled: Successfully assigned default/{HEAD} to {node}"))
    mark = lambda n: Record(id=f"m-{n}", ts=T0, source="event", log="events", kind="Node", obj=n, node=n,
                            text="ScaleDown: marked the node as toBeDeleted/unschedulable")
    causes, _ = feed(model, mark(node), mark("gke-c-cpu-np-dcccb56e-zzzz"))
    from pathways_workload.skill.judging.classify import NEEDS
    held = [NEEDS[s.pattern.needs](needs_context(model, s, [])) for s in causes if s.pattern.needs == "on_the_head_node"]
    assert held == [True, False]


def test_the_autoscalers_vm_deletions_are_read_with_the_cluster_activity():
    q = next(q.filter for q in workload_queries(Scope(JS, T0, T0 + NS, cluster="c")) if q.name == "cluster-activity")
    assert 'protoPayload.methodName:"instanceGroupManagers.deleteInstances"' in q and '"/instanceGroupManagers/gke-c-"' in q


def test_the_detail_of_a_multi_line_record_is_its_exception_line():
    from pathways_workload.skill.telling.citations import said_line as _said_line

    text = 'eval failed at step 2000\nTraceback (most recent call last):\n  File "/opt/x.py", line 3, in f\nKeyError: \'attention_mask\''
    assert _said_line(text) == "KeyError: 'attention_mask'" and _said_line("one line") == "one line"


def test_a_scheduling_blip_that_resolved_is_no_failed_hot_swap():
    """A worker Pending for a minute on a not-ready node ('No preemption victims') that then ran is not hot swap."""
    model = Workload(jobset=JS)
    w = f"{JS}-worker-0-3-vl9gg"
    model.pod(w).ran = True
    causes, symptoms = feed(model, _event(T0, _NO_VICTIMS.replace("unreachable", "not-ready"), pod=w))
    model.now = T0 + 30 * 60 * NS
    assert "hot_swap_failure" not in {h.failure_class for h in classify(model, causes, symptoms).ranked}


def test_kubelets_pulled_event_gives_the_containers_image_when_the_pod_is_gone():
    from pathways_workload.skill.reading.records import record_from_event

    ev = {"kind": "Event", "metadata": {"uid": "u1"}, "reason": "Pulled", "type": "Normal", "lastTimestamp": "2026-11-20T10:00:00Z",
          "message": 'Successfully pulled image "us-docker.pkg.dev/p/infra/cp-sidecar:b3" in 1.4s',
          "involvedObject": {"kind": "Pod", "name": WORKER, "namespace": "default",
                             "fieldPath": "spec.initContainers{colocated-python-sidecar}"}}
    rec = record_from_event(ev)
    assert rec.container == "colocated-python-sidecar"
    model = Workload(jobset=JS)
    model.add_record(rec)
    assert model.pods[WORKER].containers["colocated-python-sidecar"].image == "us-docker.pkg.dev/p/infra/cp-sidecar:b3"


def test_an_identity_named_in_a_refusal_is_an_entity():
    model = Workload(jobset=JS)
    rec = line(T0, "google.api_core.exceptions.Forbidden: 403 GET https://storage.googleapis.com/storage/v1/b/bk/o: "
                   "sa-1@proj.iam.gserviceaccount.com does not have storage.objects.list access", container="jax-tpu", rid="f")
    causes, symptoms = feed(model, rec)
    model.now = T0 + 30 * 60 * NS
    v = classify(model, causes, symptoms)
    assert ("ServiceAccount", "sa-1@proj.iam.gserviceaccount.com") in {(e.kind, e.name) for e in entities(model, v.root)}


def test_a_structured_training_record_keeps_its_step_and_is_progress():
    """{"message": "train step", "step": 1087}: read as "train step (step=1087)", progress like a text logger's line."""
    entry = {"insertId": "s1", "timestamp": "2026-11-20T10:00:00Z", "logName": "projects/p/logs/stdout",
             "resource": {"type": "k8s_container", "labels": {"pod_name": HEAD, "container_name": "jax-tpu"}},
             "jsonPayload": {"message": "train step", "step": 1087, "loss": 2.3}}
    rec = record_from_entry(entry)
    assert rec.text == "train step (step=1087)"
    assert any(s.target == "progress" for s in M.match(rec))
    q = next(q.filter for q in workload_queries(Scope(JS, T0, T0 + NS)) if q.name == "progress")
    assert "jsonPayload.step:*" in q


def test_kueue_failing_to_compose_the_workload_is_admission_blocked():
    rec = _event(T0, 'ErrWorkloadCompose: priorityclasses.scheduling.k8s.io "medium" not found', pod=None)
    rec.kind, rec.obj = "JobSet", JS
    assert "kueue_admission_blocked" in {s.target for s in M.match(rec)}


def test_the_latest_attempt_is_cited_where_its_burst_began():
    """Three attempts fail the same way; the last one on two hosts 0.2 s apart: its first line is cited."""
    from pathways_workload.skill.telling.citations import latest_attempt as _latest_attempt

    rx = "Compilation of jit_train_step (fingerprint 9c41d07e5ab23f18) failed: INTERNAL: RET_CHECK failure"
    recs = [line(T0, rx, container="pathways-worker", pod=f"{JS}-worker-0-0-aaaaa", rid="a0"),
            line(T0 + 400 * NS, rx, container="pathways-worker", pod=f"{JS}-worker-0-0-bbbbb", rid="b0"),
            line(T0 + 400 * NS + 2 * 10**8, rx, container="pathways-worker", pod=f"{JS}-worker-0-3-bbbbb", rid="b3")]
    from pathways_workload.skill.catalog import Pattern
    from pathways_workload.skill.understanding.signals import Signal

    pattern = Pattern(r"Compilation of \S+ .{0,60}failed", 0.9)
    sigs = [Signal("cause", "xla_compile_error", pattern, r, {}) for r in recs]
    assert [s.record.id for s in _latest_attempt(Hypo("xla_compile_error", 0.9, sigs, T0))] == ["b0"]


@pytest.mark.parametrize("labels, expected", [({"kueue.x-k8s.io/queue-name": "lq-tpu"}, "kueue_admission_blocked"),
                                              ({}, "no_failure_detected")])
def test_a_kueue_managed_jobset_left_suspended_is_not_admitted(labels, expected):
    """Suspended with no pods and no reason of Kueue's in the data: Kueue has not admitted it (if it is Kueue's)."""
    from pathways_workload.skill.reading.objects import jobset_records

    js = {"kind": "JobSet", "metadata": {"name": JS, "namespace": "default", "uid": "js-uid", "labels": labels},
          "spec": {"suspend": True},
          "status": {"conditions": [{"type": "Suspended", "status": "True", "reason": "SuspendedJobs",
                                     "message": "jobset is suspended", "lastTransitionTime": "2025-11-24T16:00:00Z"}]}}
    model = Workload(jobset=JS)
    model.add_objects([js])
    causes, symptoms = feed(model, *jobset_records(js))
    model.now = T0 + 30 * 60 * NS
    v = classify(model, causes, symptoms)
    assert (v.failure_class, v.status) == (expected, "stalled")


def test_a_missing_checkpoint_bucket_is_not_a_scratch_problem():
    """'The specified bucket does not exist' on a bucket other than the --gcs_scratch_location one is not scratch."""
    model = Workload(jobset=JS)
    feed(model, line(T0 - 60 * NS, "I1128 init_main.cc:81] argv[3]: '--gcs_scratch_location=gs://team-scratch/pathways'",
                     container="pathways-rm", rid="arg"))
    err = line(T0, 'E0224 persistence_service.cc:412] Failed to write array shard for checkpoint step 250: NOT_FOUND: Error '
                   'writing "x/250/d/1" in GCS bucket "peregrine-ckpt": HTTP response code: 404 with body: The specified '
                   "bucket does not exist.", container="pathways-worker", pod=WORKER, rid="e")
    from pathways_workload.skill.judging.classify import NEEDS
    assert [NEEDS[s.pattern.needs](needs_context(model, s, [])) for s in M.match(err) if s.pattern.needs == "the_scratch_bucket"] == [False]


def test_a_client_connecting_with_its_protocol_version_is_no_mismatch():
    ok = line(T0, "I0203 09:51:02.211500 2216 grpc_server.cc:214] New IFRT proxy client connected from 127.0.0.1:47416 "
                  "(jax 0.8.1, protocol version 14); session 2", container="pathways-proxy")
    assert "ifrt_version_mismatch" not in {s.target for s in M.match(ok)}


def test_an_ephemeral_storage_eviction_of_the_head_has_its_own_fix():
    from pathways_workload.skill.catalog import BY_ID

    rec = _event(T0, "Evicted: The node was low on resource: ephemeral-storage. Container jax-tpu was using 61872340Ki",
                 pod=HEAD)
    ids = {s.pattern.id for s in M.match(rec) if s.target == "head_pod_evicted"}
    assert "ephemeral_storage" in ids
    assert any(f.applies(frozenset(ids)) and "ephemeral-storage" in f.summary for f in BY_ID["head_pod_evicted"].fixes)


def _warning_then_error(warning_pod: str, error_pod: str) -> str:
    """A cache warning in the client, then a checkpoint restore that fails (in the given pods), and the client exits."""
    model = Workload(jobset=JS)
    causes, symptoms = feed(
        model,
        *rm_start(T0, "2/2"),
        line(T0 + 90 * NS, "/usr/lib/python3.11/site-packages/jax/_src/compiler.py:782: UserWarning: Error reading "
             "persistent compilation cache entry for 'jit_f': FileExistsError: [Errno 17] File exists: '/var/cache/jax'",
             container="jax-tpu", pod=warning_pod, rid="warn"),
        line(T0 + 96 * NS, "ValueError: NOT_FOUND: Error opening \"zarr\" driver: Error reading \"params/.zarray\" in "
             "OCDBT database at gs://b/ckpt/5/default/", container="jax-tpu", pod=error_pod, rid="nf"),
    )
    model.now = T0 + 120 * NS
    return classify(model, causes, symptoms).failure_class


def test_a_warning_the_program_went_on_past_ranks_after_what_it_failed_of():
    # the same client warned about its cache, went on, and raised (no checkpoint directory is known here, so the
    # raise is the program's own error): the warning neither is the cause nor explains what came after it
    assert _warning_then_error(HEAD, HEAD) == "user_code_error"


def test_a_warning_is_not_outranked_by_an_error_in_another_container():
    # the rule reads one program's own sequence: an error in another pod says nothing of whether this one went on
    assert _warning_then_error(HEAD, WORKER) == "compilation_cache_failure"


def test_what_counts_as_the_programs_own_warning():
    from pathways_workload.skill.judging.ranking import warning as _warning
    for text in ("W1205 10:00:00.000000 1 x.cc:1] slow", "WARNING:absl:cache miss",
                 "/x/compiler.py:782: UserWarning: Error reading persistent compilation cache entry"):
        assert _warning(SimpleNamespace(record=line(T0, text, container="jax-tpu"))), text
    for text in ("ValueError: NOT_FOUND: x", "E1205 10:00:00.000000 1 x.cc:1] failed", "F1205 fatal"):
        assert not _warning(SimpleNamespace(record=line(T0, text, container="jax-tpu"))), text
