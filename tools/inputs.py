"""The inputs every tool shares: where the evidence is (an export folder or a live workload) and the window."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class WorkloadInput(BaseModel):
    """Where to read: `replay` (an exported folder) or a live workload (project, location, cluster, jobset)."""

    model_config = ConfigDict(extra="forbid")

    replay: str | None = Field(None, description="Path of an exported incident folder (gcloud/kubectl JSON files).")
    jobset: str | None = Field(None, min_length=1, description="JobSet name; inferred when the data holds only one.")
    project: str | None = Field(None, description="Google Cloud project id (live mode).")
    location: str | None = Field(None, description="Cluster location, e.g. us-east5 or us-east5-b (live mode).")
    cluster: str | None = Field(None, description="GKE cluster name (live mode).")
    namespace: str | None = Field(None, description="Kubernetes namespace of the JobSet (default: default).")
    start: str | None = Field(None, description="Window start, RFC 3339 (e.g. 2026-11-20T10:00:00Z).")
    end: str | None = Field(None, description="Window end, RFC 3339; in replay mode the default is the end of the data.")
