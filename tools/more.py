"""More read-only tools: the workload model (pods, restarts, milestones), the timeline, and catalog entries."""

from __future__ import annotations

import difflib

from pydantic import BaseModel, ConfigDict, Field

from pathways_workload.skill.api import analyse_replay
from pathways_workload.skill.catalog import BY_ID, MILESTONES
from pathways_workload.skill.judging.classify import CANDIDATE
from pathways_workload.skill.judging.engine import Analysis
from pathways_workload.skill.errors import InputError
from pathways_workload.skill.redact import redact

from .diagnose import DiagnoseInput
from .inputs import WorkloadInput

_MILESTONE_TITLES = {m.id: m.title for m in MILESTONES}


class GetWorkloadInput(WorkloadInput):
    at: str | None = Field(None, description="Judge the workload as of this RFC 3339 time instead of the end of the data.")


class TimelineInput(DiagnoseInput):
    pass


class ExplainClassInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    failure_class: str = Field(..., description="A taxonomy id as returned in failure_class or hypotheses, e.g. tpu_hardware_failure.")


def _analysis(p: WorkloadInput, at: str | None) -> Analysis:
    """The replay analysis the diagnose tool builds on, stopping before the Diagnosis."""
    if not p.replay:
        raise InputError("give replay=FOLDER (live reads need project, location, cluster and jobset)")
    return analyse_replay(p.replay, jobset=p.jobset, at=at or p.end, namespace=p.namespace)


def get_workload(p: GetWorkloadInput) -> dict:
    """Describe the workload as the evidence shows it: the JobSet and its pods by role; read-only.

    Returns the JobSet (name, namespace, cluster, project, location, uid, restarts and maxRestarts, slice count,
    conditions), every pod with its role (head | worker | other), slice and host index, node, phase, restarts and,
    per container, image, restarts, last termination reason and exit code and waiting reason; the milestones a
    healthy start-up prints that were reached (first time and the id to cite) and those never reached; and
    progress (training step lines seen, the last one). Give `replay` (an export folder) and optionally `jobset`.
    """
    a = _analysis(p, p.at)
    m = a.model
    pods = []
    for pod in sorted(m.pods.values(), key=lambda x: (x.role != "head", x.slice or 0, x.host or 0, x.name)):
        pods.append({
            "name": pod.name, "uid": pod.uid, "role": pod.role, "slice": pod.slice, "host": pod.host,
            "node": pod.node, "phase": pod.phase, "ran": pod.ran, "restarts": pod.restarts,
            "containers": [{"name": c.name, "image": c.image, "restarts": c.restarts, "running": c.running,
                            "last_reason": c.last_reason, "last_exit_code": c.last_exit_code,
                            "waiting_reason": c.waiting_reason} for c in pod.containers.values()],
        })
    reached, missing = [], []
    for mid, title in _MILESTONE_TITLES.items():
        sig = m.first_milestone(mid)
        if sig is None:
            missing.append({"milestone": mid, "title": title})
        else:
            reached.append({"milestone": mid, "title": title, "timestamp": sig.record.time, "id": sig.record.id,
                            "count": len(m.milestones.get(mid, ()))})
    last = m.last_progress
    last = last() if callable(last) else last
    return {
        "jobset": {"name": m.jobset, "namespace": m.namespace, "cluster": m.cluster, "project": m.project,
                   "location": m.location, "uid": m.jobset_uid, "restarts": m.jobset_restarts,
                   "max_restarts": m.max_restarts, "num_slices": m.num_slices,
                   "conditions": [{k: c.get(k) for k in ("type", "status", "reason", "message", "lastTransitionTime")}
                                  for c in m.jobset_conditions]},
        "pods": pods,
        "nodes": sorted(m.nodes),
        "milestones_reached": reached,
        "milestones_missing": missing,
        "progress": {"lines": m.progress_count,
                     "last": None if last is None else {"timestamp": last.record.time, "id": last.record.id,
                                                        "text": redact(last.record.text)[:500]}},
        "data_gaps": list(a.stats.gaps),
    }


def timeline(p: TimelineInput) -> dict:
    """The incident timeline from the diagnosis, oldest first; read-only.

    Each item has a timestamp, a one-line summary (milestones, the root cause, the symptoms that followed) and the
    evidence ids it rests on; the evidence excerpts for those ids are included. Give `replay` (an export folder),
    optionally `jobset` and `at` (judge stalls as of this time).
    """
    from pathways_workload.skill.api import diagnose_replay

    d = diagnose_replay(p.replay, jobset=p.jobset, at=p.at or p.end) if p.replay else None
    if d is None:
        raise InputError("give replay=FOLDER (live reads need project, location, cluster and jobset)")
    cited = {i for t in d.timeline for i in t.evidence}
    return {"jobset": d.workload.jobset, "failure_class": d.failure_class, "status": d.status,
            "timeline": [t.model_dump(mode="json") for t in d.timeline],
            "evidence": [e.model_dump(mode="json") for e in d.evidence if e.id in cited]}


def explain_class(p: ExplainClassInput) -> dict:
    """Explain one failure class of the taxonomy from the catalog; read-only, needs no data.

    Returns its title, phase, component, the signatures that detect it (RE2 regex, where it may appear, weight:
    1.0 proves it alone, below {candidate} only supports), the classes it explains (causes downstream), its look-alikes
    (classes easily confused with it), and its fix templates with risk labels (read-only, low = your code or
    manifest, high = changes the cluster or project). Use it to check a rival hypothesis or to word a fix.
    """
    fc = BY_ID.get(p.failure_class)  # (the docstring's numbers are filled from skill.judging.classify below)
    if fc is None:
        close = difflib.get_close_matches(p.failure_class, list(BY_ID), n=1, cutoff=0.6)
        raise InputError(f"unknown failure_class {p.failure_class!r}" + (f" (did you mean {close[0]!r}?)" if close else ""),
                         code="unknown_failure_class", hint="one of: " + ", ".join(sorted(BY_ID)))
    return {
        "failure_class": fc.id, "title": fc.title, "phase": fc.phase, "component": fc.component,
        "patterns": [{"regex": x.regex, "weight": x.weight, "sources": list(x.sources),
                      "containers": list(x.containers), "note": x.note} for x in fc.patterns],
        "explains": list(fc.explains), "lookalikes": list(fc.lookalikes),
        "fixes": [{"summary": f.summary, "command": f.command, "risk": f.risk} for f in fc.fixes],
        "needs_sources": list(fc.sources),
    }


explain_class.__doc__ = (explain_class.__doc__ or "").replace("{candidate}", str(CANDIDATE))  # stated in one place
