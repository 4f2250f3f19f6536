"""What to check next when the verdict is not firm: for the leading candidates, the read-only queries and commands whose
answers tell them apart. Built from the catalog (each class's signatures become a Logging filter, its read-only fixes
are the commands), so a new class brings its checks with it. Pure: no I/O."""

from __future__ import annotations

from ..catalog import BY_ID, HEALTHY, STALL, UNKNOWN, FailureClass
from .classify import CANDIDATE, Verdict
from .promql import promql_for
from ..catalog.series import SAME_HOST
from ..diagnosis import NextCheck
from ..catalog.symptoms import PROGRESS_RX as STEP_RX
from ..reading.query import quote

FIRM = 0.9  # at or above this confidence the diagnosis carries no next checks (answers there are nearly always right)
MAX_CANDIDATES = 3
MAX_REGEX = 3000  # a filter an engineer can paste; the class's strongest signatures first
PROGRESS_RX = f"{STEP_RX}|Completed [0-9]+ program launches"


def next_checks(v: Verdict, ctx: dict[str, str], render) -> list[NextCheck]:
    """Checks for the leading candidates when the root is not firm (or unknown); [] when it is, but for a physical host
    that failed under several node names (named whatever the confidence)."""
    hosts = [_same_host(host, nodes, v, ctx) for host, nodes in v.suspect_hosts.items()]
    if v.confidence >= FIRM and v.failure_class != UNKNOWN:
        return hosts
    return hosts + _checks(v, ctx, render)


def _same_host(host: str, nodes: list[str], v: Verdict, ctx: dict[str, str]) -> NextCheck:
    """The check a host behind several failed node names calls for: is it one machine failing across attempts?"""
    names = " OR ".join(quote(n) for n in nodes)
    return NextCheck(
        question=f"Nodes {', '.join(nodes)} ran on one physical host ({host}, the nodes' gce_topology_host) and the "
                 "workload failed on each: is that machine faulty? If the VMs report the same physical host, report it "
                 "to Google Cloud support with the node names and keep the workload off it; if not, the failures are "
                 "independent.",
        tells_apart=list(dict.fromkeys([v.failure_class, SAME_HOST])),
        filter=f'resource.type="k8s_node" resource.labels.node_name=({names})',
        command=" && ".join(f"gcloud compute instances describe {n} --zone {ctx.get('location', '<zone>')} --project "
                            f"{ctx.get('project', '<project>')} --format='value(resourceStatus.physicalHost)'"
                            for n in nodes[:3]))


def _checks(v: Verdict, ctx: dict[str, str], render) -> list[NextCheck]:
    leading = [h.failure_class for h in v.ranked if h.failure_class not in (HEALTHY, UNKNOWN) and h.score >= CANDIDATE / 2]
    leading = list(dict.fromkeys(leading))[:MAX_CANDIDATES]
    out = []
    for cid in leading:
        cls = BY_ID[cid]
        others = [c for c in leading if c != cid]
        question = (f"Is it {cid} ({cls.title.rstrip('.')})? Look for its own lines"
                    + (f"; if they are absent, {', '.join(others)} remain{'s' * (len(others) == 1)}" if others
                       else "") + ".")
        out.append(NextCheck(question=question, tells_apart=leading, filter=signature_filter(cls, ctx),
                             command=_first_read_only(cls, ctx, render), promql=promql_for(cid, ctx)))
    if v.failure_class == HEALTHY and not out:
        # nothing failed, but nothing shows the program running yet: the check is whether it has stepped since
        jobset, ns = ctx.get("jobset", "<jobset>"), ctx.get("namespace", "default")
        out.append(NextCheck(
            question="Has the program logged a training step (or the workers a program launch) since the data ended? "
                     "Steps mean start-up finished; none long after the slices became ready means a stall.",
            tells_apart=[HEALTHY, STALL],
            filter=f'resource.type="k8s_container" resource.labels.pod_name:{quote(jobset + "-")} '
                   f'(textPayload=~{quote(PROGRESS_RX)} OR jsonPayload.message=~{quote(PROGRESS_RX)})',
            command=f"kubectl logs {ctx.get('head_pod', '<head pod>')} -n {ns} -c {ctx.get('user_container', 'jax-tpu')} "
                    "--since=10m --tail=50", promql=promql_for(STALL, ctx)))
        return out
    if v.failure_class == UNKNOWN or not out:
        jobset, ns = ctx.get("jobset", "<jobset>"), ctx.get("namespace", "default")
        out.append(NextCheck(
            question="What did the first container to fail print last? The line before a fatal exit usually names the "
                     "cause the catalog does not know.",
            tells_apart=leading,
            filter=f'resource.type="k8s_container" resource.labels.pod_name:{quote(jobset + "-")} severity>=ERROR',
            command=f"kubectl logs {ctx.get('pod', '<pod>')} -n {ns} -c {ctx.get('container', '<container>')} "
                    "--previous --tail=200"))
    return out


def signature_filter(cls: FailureClass, ctx: dict[str, str]) -> str | None:
    """A Logging filter for the class's container or event signatures on this JobSet, or None when it has none."""
    jobset = ctx.get("jobset", "<jobset>")
    container = [p.regex for p in sorted(cls.patterns, key=lambda p: -p.weight) if "container" in p.sources]
    events = any("event" in p.sources for p in cls.patterns)
    if container:
        rx = _alternation(container)
        return (f'resource.type="k8s_container" resource.labels.pod_name:{quote(jobset + "-")} '
                f"(textPayload=~{quote(rx)} OR jsonPayload.message=~{quote(rx)})")
    if events:  # an event's reason and message are separate fields: read the JobSet's events whole
        return f'log_id("events") jsonPayload.involvedObject.name:{quote(jobset)}'
    return None


def _alternation(regexes: list[str]) -> str:
    out = ""
    for r in regexes:
        alt = f"(?:{r})"
        if out and len(out) + len(alt) + 1 > MAX_REGEX:
            break
        out = f"{out}|{alt}" if out else alt
    return out


def _first_read_only(cls: FailureClass, ctx: dict[str, str], render) -> str | None:
    """The class's first read-only fix command, filled from the workload (its diagnostic step)."""
    for f in cls.fixes:
        if f.risk == "read-only" and f.command and not f.when:
            return render(f.command, ctx)
    return None
