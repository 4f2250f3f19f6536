"""The diagnose tool: the whole diagnosis of one workload, as the JSON contract."""

from __future__ import annotations

from pydantic import Field

from pathways_workload.skill.api import diagnose_replay
from pathways_workload.skill.errors import InputError

from .inputs import WorkloadInput


class DiagnoseInput(WorkloadInput):
    at: str | None = Field(None, description="Judge stalls as of this RFC 3339 time instead of the end of the data.")


def diagnose(p: DiagnoseInput) -> dict:
    """Diagnose why a Pathways (JAX on TPU) JobSet on GKE failed, crashed or stalled. Run this first.

    Returns the pathways-workload.diagnosis/v2 document: failure_class (taxonomy id), status, confidence,
    root_cause with the pods/nodes it lives on, evidence cited by id (LogEntry insertId or object uid), a timeline,
    fixes with commands and risk labels, data_gaps (what could not be checked) and budget. Read-only.
    Give `replay` (an export folder), or project+location+cluster+jobset for a live workload.
    """
    if p.replay:
        return diagnose_replay(p.replay, jobset=p.jobset, at=p.at or p.end).to_json_dict()
    if not (p.project and p.cluster and p.jobset):
        raise InputError("live diagnosis needs project, location, cluster and jobset (or give replay=FOLDER)")
    from pathways_workload.skill.diagnose_live import diagnose_live

    return diagnose_live(p.project, p.location, p.cluster, p.jobset, namespace=p.namespace or "default",
                         start=p.start, end=p.end or p.at).to_json_dict()
