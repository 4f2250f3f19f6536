"""An analysis as the Diagnosis contract: entities, evidence, timeline, fixes and data gaps."""

from __future__ import annotations

import functools
import re
from urllib.parse import quote as urlquote

import jinja2

from ..catalog import BY_ID, SYMPTOMS, VERDICT_SOURCES
from ..catalog.scheduling import INVALID_FIELD
from ..catalog.types import SIDECAR_CONTAINER, Text
from .citations import SAME_MOMENT_NS, cite, failure_symptoms, node_of, pod_of, primary, said_line
from ..judging.classify import Hypo, Verdict, activity
from ..diagnosis import (Budget, Diagnosis, Entity, Evidence, Fix, Hypothesis, Observation, RootCause, TimelineItem,
                        Workload as WorkloadOut)
from ..judging.engine import Analysis
from ..catalog.release import RELEASE
from ..understanding.facts import GLOG
from ..judging.matrix import Finding, findings, pins
from ..judging.next_checks import next_checks
from ..judging.sufficiency import sufficiency
from ..understanding.model import Workload
from ..reading.query import quote
from .named import named, sentence
from ..reading.names import HEAD_JOB, SERVICE_ACCOUNT, bucket_in, gke_vm_prefix, node_group_prefix, service_account_in
from ..reading.records import Record, format_ns, rm_address
from ..redact import redact
from ..understanding.signals import Signal

EXCERPT = 300
MAX_ENTITIES = 12
# A container status that says the kernel OOM-killed it (exit 137), as the Pod object or an event renders it.
OOM_EXIT = re.compile(r"\bOOMKilled\b|exitCode[=:] ?137\b|exit code 137\b")
_ENV = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=False)
_SYMPTOM_TITLE = {s.id: s.title for s in SYMPTOMS}


def clip(text: str, limit: int) -> str:
    """The text in at most `limit` characters, cut at a word boundary and marked with "…" when cut."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space >= limit // 2 else cut).rstrip(" ,;:") + "…"


def excerpt(text: str) -> str:
    return clip(redact(text.strip()), EXCERPT)


_REFUSAL = re.compile(r"(?i)\b403\b|forbidden|permission|denied|does not have|not authori[sz]ed|unauthori[sz]ed")
_FAILED_CONTAINER = re.compile(r"(?:failed container|[Cc]ontainer) \"?([a-z0-9][a-z0-9-]*)\"?")


def _failed_containers(pod: str, since: int, symptoms: list[Signal]) -> list[str]:
    """The containers of `pod` that failed from `since` on: a termination record's, or the one an event names."""
    out = []
    for s in symptoms:
        if s.record.pod != pod or s.ts < since - SAME_MOMENT_NS:
            continue
        m = None if s.record.container else _FAILED_CONTAINER.search(s.record.text)
        name = s.record.container or (m.group(1) if m else None)
        if name and name not in out:
            out.append(name)
    return out


def entities(model: Workload, root: Hypo, symptoms: list[Signal] = (), triggers: list[Hypo] = ()) -> list[Entity]:
    out: dict[tuple[str, str], None] = {}
    for s in primary(root):
        r = s.record
        node = node_of(s) or model.node_of(pod_of(s))
        for kind in root.entity_kinds or s.pattern.entities:
            name = _entity_name(kind, s, r, node, model)
            if name:
                out.setdefault((kind, name), None)
    cls = BY_ID[root.failure_class]
    if not any(k == "Pod" for k, _ in out):
        # a fault of the node (a VM that went away, its kernel, its memory): name the JobSet's pods that ran on it (the
        # workers that died with it), and a container the kernel killed there (exit 137 or OOMKilled)
        for node in [n for k, n in out if k == "Node"]:
            for pod in sorted((p for p in model.pods.values() if p.node == node), key=lambda p: p.name)[:2]:
                out.setdefault(("Pod", pod.name), None)
                killed = [c.name for c in pod.containers.values() if c.last_exit_code == 137 or c.last_reason == "OOMKilled"]
                for c in killed or _failed_containers(pod.name, root.first_ts, list(symptoms))[:1]:
                    out.setdefault(("Container", f"{pod.name}/{c}"), None)
    # the interruption a failed recovery was meant to survive (the strongest that names a VM): its VM and node pool
    nodes = (n for t in triggers for n in (node_of(x) or model.node_of(pod_of(x)) for x in t.strong_signals) if n)
    if (node := next(nodes, None)) is not None:
        out.setdefault(("Node", node), None)
        if pool := _node_pool(gke_vm_prefix(node), model):
            out.setdefault(("NodePool", pool), None)
    for s in primary(root) if root.signals else []:  # an identity a refusal names (the one missing the permission)
        if _REFUSAL.search(s.record.text) and (sa := service_account_in(s.record.text)) is not None:
            out.setdefault(("ServiceAccount", sa), None)
    for kind, name in list(out):
        pod, _, container = name.partition("/")
        # version skew is fixed in the images; a colocated sidecar is the user's own build, fixed in its image whatever
        # the class
        if cls.names_images or container == SIDECAR_CONTAINER:
            c = model.pods[pod].containers.get(container) if kind == "Container" and pod in model.pods else None
            if c and c.image:
                out.setdefault(("Image", c.image), None)
    if cls.names_jobset and model.jobset:
        out.setdefault(("JobSet", model.jobset), None)
    return [Entity(kind=k, name=n) for k, n in list(out)[:MAX_ENTITIES]]


def _entity_name(kind: str, s: Signal, r: Record, node: str | None, model: Workload) -> str | None:
    if kind == "Pod":
        return r.pod or s.groups.get("pod")
    if kind == "Node":
        return node
    if kind == "Container":
        return f"{r.pod}/{r.container}" if r.pod and r.container else None
    if kind == "Image":
        image = s.groups.get("image") or r.extra.get("image")
        if not image and r.pod in model.pods and r.container:
            c = model.pods[r.pod].containers.get(r.container)
            image = c.image if c else None
        return image
    if kind == "Bucket":
        if s.groups.get("url", "").startswith("gs://"):  # the object a fact names, whatever the line's wording
            return "gs://" + s.groups["url"][5:].split("/")[0]
        bucket = bucket_in(r.text)
        if not bucket and (c := BY_ID.get(s.target)) is not None and c.bucket_from_scratch:
            # The scratch error text often omits the bucket; the server's own --gcs_scratch_location names it.
            args = sorted(model.milestones.get("scratch_location", []), key=lambda a: (a.record.pod != r.pod, a.ts))
            bucket = bucket_in(args[0].groups.get("bucket", "")) if args else None
        return f"gs://{bucket}" if bucket else None
    if kind == "JobSet":
        return model.jobset
    if kind == "NodePool":
        return _node_pool(node_group_prefix(r.text), model)
    if kind == "ServiceAccount":  # the identity the refusal names (`<sa>@<project>.iam.gserviceaccount.com does not have ...`)
        return service_account_in(r.text)
    if kind == "Workload":
        return r.obj if r.kind == "Workload" else None
    return None


def _node_pool(prefix: str | None, model: Workload) -> str | None:
    """The node pool a GKE instance-group or VM prefix (gke-<cluster>-<pool>) names, when the cluster is known."""
    if prefix and model.cluster and prefix.startswith(f"gke-{model.cluster}-"):
        return prefix[len(f"gke-{model.cluster}-"):]
    return None


LINK_MARGIN_NS = 10 * 60 * 1_000_000_000


def logs_explorer_link(r: Record, project: str | None) -> str | None:
    """A Logs Explorer URL whose query finds exactly this entry, with the cursor on its time; None for object facts.

    The form is the one the console produces when you copy a link to a query:
    https://console.cloud.google.com/logs/query;query=...;cursorTimestamp=...;startTime=...;endTime=...?project=P
    An Event exported by kubectl is cited by its uid, which the events log keeps as jsonPayload.metadata.uid.
    """
    if not project or r.source == "object":
        return None
    if r.source == "event" and r.log == "events":
        query = f'logName="projects/{project}/logs/events"\n(insertId={quote(r.id)} OR jsonPayload.metadata.uid={quote(r.id)})'
    else:
        query = f"insertId={quote(r.id)}"
    parts = [f"query={urlquote(query, safe='')}"]
    if r.ts:
        parts += [f"cursorTimestamp={r.time}", f"startTime={format_ns(r.ts - LINK_MARGIN_NS)}",
                  f"endTime={format_ns(r.ts + LINK_MARGIN_NS)}"]
    return f"https://console.cloud.google.com/logs/query;{';'.join(parts)}?project={urlquote(project, safe='')}"


def _evidence_item(r: Record, project: str | None = None) -> Evidence:
    return Evidence(id=r.id, timestamp=r.time or None, source=r.source, resource=r.resource, excerpt=excerpt(r.text),
                    link=logs_explorer_link(r, project or r.project))


def context(model: Workload, root: Hypo, ents: list[Entity], symptoms: list[Signal] = ()) -> dict[str, str]:
    """Values the fix and explanation templates are filled with; unknown ones are shown as <placeholders>. The yes/""
    facts let a sentence say only what happened (no "the restarts" without a restart)."""
    first = primary(root)[0].record if root.signals else None
    by_kind: dict[str, str] = {}
    for e in ents:
        by_kind.setdefault(e.kind, e.name)
    pod = (first.pod if first else None) or by_kind.get("Pod") or model.head_pod or "<pod>"
    node = by_kind.get("Node") or (first.node if first else None) or model.node_of(pod) or "<node>"
    container = (first.container if first else None) or "<container>"
    head = model.pods.get(model.head_pod or "")
    user_container = next((c for c in (head.containers if head else {}) if not c.startswith("pathways-")), "jax-tpu")
    image = by_kind.get("Image") or "<image>"
    location = model.location or "<location>"
    note = primary(root)[0].pattern.note if root.signals else ""
    if root.detail or not first:
        detail = root.detail
    elif note and first.text.startswith("{"):
        detail = note  # a structured payload (an autoscaler decision) is no readable line; say what it means
    else:
        detail = clip(excerpt(GLOG.sub("", said_line(first.text), count=1)), 160)
    jax = re.search(r":jax-([0-9][0-9.]*)", " ".join(c.image or "" for p in model.pods.values() for c in p.containers.values()))
    worker_job = "pathways-worker" if any("-pathways-worker-" in p.name for p in model.workers) else "worker"
    # The root cause's own lines, read for values to fill in (which variant is shown is chosen by matched_ids).
    lines = "\n".join(s.record.text for s in primary(root))[:4000] if root.signals else ""
    sa = re.search(f"({SERVICE_ACCOUNT.pattern}) does not have", lines)
    client_py, sidecar_py = _python_versions(model, user_container)
    invalid = INVALID_FIELD.search(lines)
    return {
        **pins(model),
        "jobset": model.jobset or "<jobset>", "namespace": model.namespace or "default",
        "cluster": model.cluster or "<cluster>", "project": model.project or "<project>", "location": location,
        "region": re.sub(r"-[a-z]$", "", location), "pod": pod, "node": node, "container": container,
        "head_pod": model.head_pod or f"{model.jobset}-{HEAD_JOB}-0-0-<id>", "user_container": user_container,
        "image": image, "image_repo": image.rsplit(":", 1)[0] if ":" in image else image,
        "bucket": by_kind.get("Bucket") or "gs://<bucket>", "jax_version": jax.group(1) if jax else "<client jax version>",
        "worker_job": worker_job, "service_account": sa.group(1) if sa else "<node-or-workload-service-account>",
        "principal": sa.group(1) if sa else "The workload's identity", "detail": detail,
        "client_python": client_py, "sidecar_python": sidecar_py,
        "invalid_field": invalid.group(1) if invalid else "", "invalid_reason": invalid.group(2).strip() if invalid else "",
        "expected_rm_address": rm_address(model.jobset or "<jobset>"),
        "finished": _finished(model, user_container),
        "progress_seen": "yes" if activity(model) else "",
        # a sentence about restarts only when something restarted (the JobSet, or a container of its pods)
        "restarted": "yes" if model.jobset_restarts or any(p.restarts for p in model.pods.values())
        or any(s.target in ("jobset_restarting", "crashloop") for s in root.signals) else "",
        "slices_ready": "yes" if model.ready_slices() else "",
        "timed_out": "yes" if any(s.target == "heartbeat_timeout" for s in symptoms) else "",
        "oom_exit": "yes" if any(c.last_exit_code == 137 or c.last_reason == "OOMKilled" for p in model.pods.values()
                                 for c in p.containers.values()) or OOM_EXIT.search(lines) else "",
        "container_or_process": (f"{container} in {pod}" if first and first.container else
                                 (root.signals[0].groups.get("comm") if root.signals and root.signals[0].groups.get("comm")
                                  else f"a process in {pod}")),
    }


def _python_versions(model: Workload, user_container: str) -> tuple[str, str]:
    """The Python (major.minor) the client on the head and the colocated sidecars report at start-up, "" if unknown."""
    client = sidecar = ""
    for s in sorted(model.milestones.get("python_version", []), key=lambda s: s.ts):
        r = s.record
        if r.container == user_container and r.pod == model.head_pod:
            client = client or s.groups.get("version", "")
        elif r.container == SIDECAR_CONTAINER:
            sidecar = sidecar or s.groups.get("version", "")
    return client, sidecar


def _finished(model: Workload, user_container: str) -> str:
    """How the run says it ended well (the client exited 0, the JobSet is Completed), or "" while it still runs."""
    done = model.condition("Completed")
    head = model.pods.get(model.head_pod or "")
    client = head.containers.get(user_container) if head else None
    parts = []
    if client is not None and client.last_exit_code == 0 and not client.running:
        parts.append(f"the client ({user_container}) exited 0")
    if done:
        parts.append(f"the JobSet is Completed ({done.get('reason') or 'all jobs completed'})")
    return " and ".join(parts) if done else ""


def matched_ids(root: Hypo) -> frozenset[str]:
    """The ids of the signatures the root cause's own lines matched: what picks fix and explanation variants."""
    return frozenset(s.pattern.id for s in (primary(root) if root.signals else []) if s.pattern.id)


def _explanation_text(explanation: str | tuple[Text, ...], matched: frozenset[str]) -> str | None:
    if isinstance(explanation, str):
        return explanation
    return next((t.text for t in explanation if t.applies(matched)), None)


def _render(template: str | None, ctx: dict[str, str]) -> str | None:
    return None if template is None else _template(template).render(**ctx)


@functools.lru_cache(maxsize=1024)
def _template(source: str) -> jinja2.Template:
    """A catalog template compiled once (the catalog's templates are a fixed, small set)."""
    return _ENV.from_string(source)


def timeline(model: Workload, root: Hypo, symptoms: list[Signal]) -> list[TimelineItem]:
    items: list[tuple[int, str, list[str]]] = []
    for mid, label in (("rm_serving", "resource manager serving"), ("proxy_started", "IFRT proxy started"),
                       ("worker_serving", "first worker serving"), ("client_backend", "client connected to Pathways")):
        s = model.first_milestone(mid)
        if s:
            items.append((s.ts, f"{label} ({s.record.pod})", [s.record.id]))
    ready = model.milestones.get("slices_ready")
    if ready:
        s = max(ready, key=lambda s: s.ts)
        items.append((s.ts, f"{s.groups.get('ready')}/{s.groups.get('total')} slices ready", [s.record.id]))
    if model.progress:
        a, b = model.progress[0], model.progress[-1]
        items.append((a.ts, f"training progress seen (step {a.groups.get('step')})", [a.record.id]))
        if b is not a:
            items.append((b.ts, f"last progress line (step {b.groups.get('step')}, {model.progress_count} seen)", [b.record.id]))
    for s in primary(root)[:3]:
        items.append((s.ts, f"{root.failure_class}: {clip(excerpt(s.record.text), 140)} ({s.record.resource})", [s.record.id]))
    for s in failure_symptoms(symptoms)[:6]:
        items.append((s.ts, f"{_SYMPTOM_TITLE.get(s.target, s.target)}: {clip(excerpt(s.record.text), 120)} ({s.record.resource})",
                      [s.record.id]))
    items.sort(key=lambda t: t[0])
    return [TimelineItem(timestamp=format_ns(ts) or "", summary=text, evidence=ids) for ts, text, ids in items if ts]


def data_gaps(a: Analysis) -> list[str]:
    m, gaps = a.model, list(a.stats.gaps)
    if "container" not in m.sources_seen:
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


def observations(v: Verdict, matrix: list[Finding]) -> list[Observation]:
    """The classes whose lines the run survived (skill.judging.impact): their first and latest line, and why not the cause;
    then the workload checked against the Pathways release (skill.judging.matrix)."""
    out = []
    for o in v.observations:
        first, last = o.signals[0], o.signals[-1]
        out.append(Observation(failure_class=o.failure_class, evidence=list(dict.fromkeys([first.record.id, last.record.id])),
                               timestamp=format_ns(first.ts) or None, resource=first.record.resource,
                               excerpt=clip(excerpt(first.record.text), 300), why_not_cause=o.why))
    skew = BY_ID[v.failure_class].names_images  # a version-skew class: the findings bear on it
    for f in matrix:
        why = (f"bears on the verdict ({v.failure_class})" if skew and f.failure_class else
               f"checked against the Pathways release of {RELEASE.date}: not shown to be the cause here, but the first "
               "thing to rule out when the runtime misbehaves")
        out.append(Observation(kind="support_matrix", failure_class=f.failure_class, evidence=list(f.evidence),
                               resource=f.resource, excerpt=f.text, why_not_cause=why))
    return out


def build(a: Analysis, *, logging_requests: int | None = None) -> Diagnosis:
    """The Diagnosis contract for one analysis. Every cited id comes from a record that was read."""
    m, v = a.model, a.verdict
    cls = BY_ID[v.failure_class]
    triggers = [h for h in v.ranked[1:] if h.failure_class in cls.absorbs and h.signals]
    ents = entities(m, v.root, v.symptoms, triggers)
    ctx = context(m, v.root, ents, v.symptoms)
    cited = [s.record for _rule, s in cite(m, v, a.context)]
    evidence = {r.id: _evidence_item(r, m.project) for r in cited}
    matched = matched_ids(v.root)
    explanation = _render(_explanation_text(cls.explanation, matched), ctx) or cls.title
    matrix = findings(m)  # the workload against the release: observations, and part of a version-skew explanation
    if cls.names_images:  # a version-skew verdict: what the workload runs against the release is part of the case
        skew = [f.text for f in matrix if f.failure_class]
        if skew:
            explanation += f" Against the Pathways release of {RELEASE.date}: " + "; ".join(skew) + "."
    hypotheses = [Hypothesis(failure_class=h.failure_class, score=round(min(1.0, h.score), 3),
                             evidence=list(dict.fromkeys(s.record.id for s in h.strong_signals))[:5])
                  for h in v.ranked]
    fixes = [Fix(summary=_render(f.summary, ctx), command=_render(f.command, ctx), risk=f.risk)
             for f in cls.fixes if f.applies(matched)]
    texts = [r.text for r in cited] + [r.text for r in a.context]
    if cls.fixed_in_workload and (pointer := sentence(named(texts), m.settings)):
        at = next((i for i, f in enumerate(fixes) if f.risk != "read-only"), len(fixes))
        fixes.insert(at, Fix(summary=pointer, command=None, risk="low"))
    stats = a.stats
    return Diagnosis(
        workload=WorkloadOut(jobset=m.jobset, namespace=m.namespace, cluster=m.cluster, project=m.project,
                             location=m.location),
        status=v.status, failure_class=v.failure_class, confidence=v.confidence,
        summary=f"{cls.title} ({v.status}). {explanation}",
        root_cause=RootCause(component=cls.component, entities=ents, explanation=explanation),
        hypotheses=hypotheses, evidence=list(evidence.values()), timeline=timeline(m, v.root, v.symptoms), fix=fixes,
        data_gaps=data_gaps(a), sufficiency=sufficiency(m, v), observations=observations(v, matrix),
        next_checks=next_checks(v, ctx, lambda t, c: _render(t, c)),
        budget=Budget(logging_requests=stats.logging_requests if logging_requests is None else logging_requests,
                      entries_read=stats.entries_read, entries_skipped=stats.entries_skipped, seconds=round(a.seconds, 3)),
    )
