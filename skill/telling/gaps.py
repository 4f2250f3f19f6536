"""A diagnosis's data gaps: the sources missing from what was read, and what each absence leaves unchecked."""

from __future__ import annotations

from ..catalog import BY_ID, VERDICT_SOURCES
from ..judging.engine import Analysis


def data_gaps(a: Analysis) -> list[str]:
    """What the data did not hold (missing sources, and those the verdict leans on), then the verdict's notes."""
    m, gaps = a.model, list(a.stats.gaps)
    if "container" not in m.sources_seen and a.stats.entries_read:
        # entries were read, but no container line the diagnosis selects: say so, not that there were none
        n = a.stats.entries_read
        said = "the one log entry read is not" if n == 1 else f"none of the {n:,} log entries read is"
        gaps.append(f"{said} a container line of JobSet {m.jobset} that the diagnosis selects (the control plane's "
                    "output, failure signatures, start-up milestones, steps): whatever its pods printed held nothing "
                    "the catalog knows; `pathways-workload query-logs` with the filter resource.type=\"k8s_container\" "
                    "lists what there is")
    elif "container" not in m.sources_seen:
        gaps.append(f"no container logs of JobSet {m.jobset}: its pods' own output could not be checked")
    if not ({"kubelet", "node-problem-detector", "container-runtime"} & m.logs_seen):
        gaps.append("no node logs (kubelet, node-problem-detector) for the JobSet's nodes: node-level causes "
                    "(kernel errors, kernel OOM kills, device plugin) could not be checked")
    if "events" not in m.logs_seen:
        gaps.append("no Kubernetes events (kubectl keeps them about an hour; export the events log from Cloud Logging): "
                    "scheduling, image pull and eviction causes could not be checked")
    ended = m.condition("Failed") or m.condition("Completed")
    if "Pod" not in m.objects_seen and ended and m.pods:
        # The JobSet deletes its Jobs' pods when it fails or completes: an export taken afterwards has none to show.
        gaps.append(f"no Pod objects of JobSet {m.jobset}: it had ended ({ended.get('type')}) and its pods were gone by "
                    "export time, so their final status (exit codes, restart counts, termination reasons) could not be "
                    "read; those were taken from events and logs")
    elif "Pod" not in m.objects_seen:
        gaps.append("no Pod objects (kubectl get pods -o json): restart counts and exit codes were taken from events and logs only")
    if "JobSet" not in m.objects_seen:
        gaps.append("no JobSet object (kubectl get jobset -o json): its terminal state was inferred from events")
    for key in BY_ID[a.verdict.failure_class].leans_on:
        if not VERDICT_SOURCES[key].present(m.logs_seen):
            gaps.append(VERDICT_SOURCES[key].gap)
    return gaps + a.verdict.notes
