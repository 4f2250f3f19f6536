"""The entities a diagnosis names (skill/telling/entities.py): a pod an earlier attempt failed on is followed by the pod
that stands in its place now, the one an engineer can still inspect."""

from __future__ import annotations

import json

from pathways_workload.skill.telling.entities import stand_in
from pathways_workload.skill.understanding.model import Workload

from conftest import CASES


def _pod(name: str, attempt: str | None = None) -> dict:
    labels = {"jobset.sigs.k8s.io/restart-attempt": attempt} if attempt else {}
    return {"kind": "Pod", "metadata": {"name": name, "uid": f"uid-{name}", "labels": labels}, "spec": {}, "status": {}}


def test_a_gone_pod_is_followed_by_the_one_in_its_place():
    m = Workload(jobset="lm")
    m.add_objects([_pod("lm-pathways-head-0-0-cur00", "2"), _pod("lm-worker-0-1-cur11", "2"),
                   _pod("lm-worker-1-1-cur21", "2")])
    m.pod("lm-pathways-head-0-0-old00")  # known only from its logs: an earlier attempt's pod
    m.pod("lm-worker-0-1-old11")
    assert stand_in(m, "lm-pathways-head-0-0-old00") == "lm-pathways-head-0-0-cur00"
    assert stand_in(m, "lm-worker-0-1-old11") == "lm-worker-0-1-cur11"  # same slice and host, not slice 1's
    assert stand_in(m, "lm-pathways-head-0-0-cur00") is None  # it exists: nothing stands in for it


def test_every_stand_in_named_in_the_library_exists_in_the_same_place(diagnoses, replayed):
    named = 0
    for case in CASES:
        d = diagnoses[case.name]
        objects = {p["metadata"]["name"] for f in case.glob("pods.json")
                   for p in json.loads(f.read_text()).get("items", [])}
        model = replayed.analysis(case).model
        pods = [e.name for e in d.root_cause.entities if e.kind == "Pod"]
        for p in pods:
            now = stand_in(model, p)
            if now is not None and now in pods:
                named += 1
                assert now in objects, (case.name, p, now)
                a, b = model.pods[p], model.pods[now]
                assert (a.role, a.slice, a.host) == (b.role, b.slice, b.host)
    assert named  # the rule names something in the library
