"""The diagnosis: the one value every surface (CLI, tools, MCP, evals) shows. Pydantic because it is the contract."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_ID = "pathways-workload.diagnosis/v2"

Status = Literal["failed", "crashing", "stalled", "degraded", "healthy"]
EvidenceSource = Literal["container", "node", "event", "serial", "object", "metric"]
Risk = Literal["read-only", "low", "high"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Workload(_Strict):
    jobset: str | None = None
    namespace: str | None = None
    cluster: str | None = None
    project: str | None = None
    location: str | None = None


class Entity(_Strict):
    kind: str = Field(description="Pod, Node, JobSet, Job, Container (name 'pod/container'), Image, Bucket, ...")
    name: str


class RootCause(_Strict):
    component: str
    entities: list[Entity] = []
    explanation: str


class Hypothesis(_Strict):
    failure_class: str
    score: float = Field(ge=0, le=1)
    evidence: list[str] = []


class Evidence(_Strict):
    id: str = Field(description="LogEntry insertId, metadata.uid of a Kubernetes object, or a time series point "
                              "(metric type{labels}@end time)")
    timestamp: str | None = None
    source: EvidenceSource
    resource: str = Field(description="what it is about: pod/container, node, or kind/name")
    excerpt: str
    link: str | None = Field(default=None, description="Logs Explorer link for live data")
    promql: str | None = Field(default=None, description="for a time series point: the PromQL that draws its series in "
                                                         "Cloud Monitoring (docs/metrics.md)")


class TimelineItem(_Strict):
    timestamp: str
    summary: str
    evidence: list[str] = []


class Fix(_Strict):
    summary: str
    command: str | None = None
    risk: Risk


class Sufficiency(_Strict):
    sufficient: bool = Field(description="the data holds what this verdict needs: the failure's own evidence, or "
                                         "progress seen for a healthy run")
    reasons: list[str] = Field(default=[], description="what is missing for a firm verdict, when not sufficient")


class NextCheck(_Strict):
    question: str = Field(description="what to find out next, and what each answer would mean")
    tells_apart: list[str] = Field(default=[], description="the candidate classes it decides between")
    filter: str | None = Field(default=None, description="a Cloud Logging filter: query_logs --filter, or gcloud "
                                                         "logging read")
    command: str | None = Field(default=None, description="a read-only kubectl / gcloud command")
    promql: str | None = Field(default=None, description="a PromQL query to paste into Cloud Monitoring: the series "
                                                         "that tell the candidates apart (docs/metrics.md)")


class Observation(_Strict):
    kind: Literal["survived", "support_matrix"] = Field(default="survived", description="survived: lines that name a "
                                                        "failure but did not hurt the run; support_matrix: the workload "
                                                        "checked against the Pathways release (images, tags, JAX, TPU)")
    failure_class: str | None = Field(description="the class its lines would point to, had they hurt the run; for a "
                                                  "support-matrix finding, the version-skew class it bears on, if any")
    evidence: list[str] = Field(default=[], description="ids of its lines (the first and the latest), as in `evidence`")
    timestamp: str | None = Field(default=None, description="when its first line was logged")
    resource: str = Field(description="what logged it: pod/container, node, or kind/name")
    excerpt: str = Field(description="its first line, redacted")
    why_not_cause: str = Field(description="what the run did after it that shows it survived (skill.judging.impact's rule)")


FateState = Literal["completed", "running", "starting", "recovered", "recovering", "crashing", "waiting", "degraded",
                    "stalled", "failed"]


class Attempt(_Strict):
    index: int = Field(description="0 for the first attempt the data shows, then one per JobSet restart")
    started: str | None = Field(default=None, description="when the restart that began it happened; None for the first")
    ended: str | None = Field(default=None, description="when the next restart ended it; None for the current one")
    first_step: str | None = Field(default=None, description="its first progress line read")
    last_step: str | None = Field(default=None, description="its latest progress line read")
    steps_read: int = Field(default=0, description="progress lines read in it (a capped sample of the newest)")


class Fate(_Strict):
    """What happened to the run, read from its lives (issue 41): the status keeps its five values, the fate says which
    life the run is in at the end of the data."""

    state: FateState = Field(description="completed | running | starting | recovered (a failure ended an attempt, the "
                                         "last steps steadily) | recovering (stepping again, not yet long) | crashing | "
                                         "waiting (pods pending for a place after a restart or failure) | degraded | "
                                         "stalled | failed")
    summary: str = Field(default="", description="one sentence, when the state needs telling (recovered, recovering, "
                                                 "waiting)")
    restarts: int = Field(default=0, description="JobSet restarts the data counts")
    attempts: list[Attempt] = []
    recovered_at: str | None = Field(default=None, description="when the last attempt began stepping steadily")
    waiting_since: str | None = Field(default=None, description="when the scheduler or autoscaler first refused the "
                                                                "replacement pods")
    downtime_seconds: float | None = Field(default=None, description="from the last step before the failure to the "
                                                                     "first step after it")
    steps_redone: int | None = Field(default=None, description="steps repeated after resuming from an earlier checkpoint")
    work_lost_seconds: float | None = Field(default=None, description="downtime plus the redone steps at the run's "
                                                                      "step interval")
    evidence: list[str] = Field(default=[], description="ids that show the restarts, the recovery or the wait")


class Budget(_Strict):
    logging_requests: int = 0
    entries_read: int = 0
    entries_skipped: int = 0
    seconds: float = 0.0


class Diagnosis(_Strict):
    schema_: str = Field(default=SCHEMA_ID, alias="schema")
    workload: Workload
    status: Status
    failure_class: str
    confidence: float = Field(ge=0, le=1)
    summary: str
    root_cause: RootCause
    hypotheses: list[Hypothesis]
    evidence: list[Evidence]
    timeline: list[TimelineItem]
    fix: list[Fix]
    data_gaps: list[str] = []
    sufficiency: Sufficiency = Sufficiency(sufficient=True)
    next_checks: list[NextCheck] = Field(default=[], description="below confidence 0.9 or for unknown_failure: "
                                                                 "read-only checks that tell the leading candidates apart")
    observations: list[Observation] = Field(default=[], description="warnings the run survived: lines that name a "
                                                                   "failure class but did not hurt the workload (progress "
                                                                   "went on after them, nothing failed), so not causes")
    fate: Fate | None = Field(default=None, description="the run's lives and its state at the end of the data (additive "
                                                    "in v2, 2026-12-06)")
    budget: Budget = Budget()

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    def to_json_dict(self) -> dict:
        return self.model_dump(mode="json", by_alias=True)

    def cited_ids(self) -> set[str]:
        """Every id the diagnosis cites anywhere."""
        ids = {e.id for e in self.evidence}
        for h in self.hypotheses:
            ids.update(h.evidence)
        for t in self.timeline:
            ids.update(t.evidence)
        for o in self.observations:
            ids.update(o.evidence)
        if self.fate is not None:
            ids.update(self.fate.evidence)
        return ids
