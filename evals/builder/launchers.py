"""How each launcher lays out a Pathways JobSet: replicated-job names, the client container, labels, head layout.

Sources (read in public code; see fixtures/README.md "Launchers"):
- xpk: AI-Hypercomputer/xpk `pathways_workload_create.yaml.j2` and its golden dry-run output (`pathways-head` /
  `worker`, RM and proxy as native-sidecar init containers, the user container `jax-tpu` (`--docker-name`), JobSet
  label `xpk.google.com/workload`).
- gcluster: GoogleCloudPlatform/cluster-toolkit `pkg/orchestrator/gke` `pathwaysJobSetTemplate` and
  `TestGeneratePathwaysManifest*` (`pathways-head` / `worker`; head containers `pathways-proxy`, `pathways-rm` and the
  user's `workload-container`, which `--pathways-headless` leaves out; JobSet label `gcluster.google.com/workload`).
- pathways-job: google/pathways-job `internal/controller/pathwaysjob_controller.go` (`pathways-head` / `worker`; with a
  user pod, RM and proxy are init containers beside the user's main container, `main` by default
  (`MainContainerName`); headless: RM and proxy are the head's regular containers).
- pathwaysutils: AI-Hypercomputer/pathways-utils `pathwaysutils/experimental/gke/jobset.py` `PathwaysJobSet`
  (`PATHWAYS_HEAD_JOB_NAME = "pathways-head"`, `PATHWAYS_WORKER_JOB_NAME = "pathways-worker"`; the head holds only
  `pathways-rm` and `pathways-proxy`: the client runs outside the cluster).
- manual: a hand-written manifest as in public examples (`pathways-head` with `pathways-proxy`, `pathways-rm` and a
  user container named by its author, here `trainer`; the workers' replicated job named by its author, here
  `tpu-workers`; no launcher label).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Launcher:
    """One launcher's names: the worker replicated job, the head's client container (None: headless), JobSet labels."""

    worker_job: str = "worker"
    client: str | None = "jax-tpu"
    label: str | None = "xpk.google.com/workload"  # the launcher's workload label on the JobSet (and xpk's workers)
    sidecar_head: bool = True  # RM and proxy are native-sidecar init containers (else regular containers)
    extra_labels: dict[str, str] = field(default_factory=dict)


LAUNCHERS: dict[str, Launcher] = {
    "xpk": Launcher(),
    "gcluster": Launcher(client="workload-container", label="gcluster.google.com/workload", sidecar_head=False),
    "gcluster-headless": Launcher(client=None, label="gcluster.google.com/workload", sidecar_head=False),
    "pathways-job": Launcher(client="main", label=None),
    "pathways-job-headless": Launcher(client=None, label=None, sidecar_head=False),
    "pathwaysutils": Launcher(worker_job="pathways-worker", client=None, label=None, sidecar_head=False),
    "manual": Launcher(worker_job="tpu-workers", client="trainer", label=None, sidecar_head=False),
}
