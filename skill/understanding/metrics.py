"""What the workload's time series prove, as facts the engine reasons with: when its chips were working (per pod and
chip), the HBM headroom, node interruptions with their type and reason, node conditions, JobSet restarts and the
physical host behind each node. Pure: the series come from a source (skill.reading.sources.metrics).

The meaning of each series is Google's: docs/metrics.md has the table (metric, fact, what it decides, source)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from ..catalog.series import HBM_FULL as HBM_FULL_CLASS, INTERRUPTIONS as INTERRUPTION_CLASS, SOURCE, STALL
from ..catalog.types import Pattern, signature_id
from ..reading.records import Record, format_ns
from ..reading.sources.metrics import Series, SeriesSet
from .model import Workload
from .signals import Signal

NS = 1_000_000_000
SAMPLE_NS = 60 * NS  # GKE system metrics are sampled every 60 s
DUTY = "kubernetes.io/container/accelerator/duty_cycle"
NODE_DUTY = "kubernetes.io/node/accelerator/duty_cycle"
USED, TOTAL = "kubernetes.io/container/accelerator/memory_used", "kubernetes.io/container/accelerator/memory_total"
INTERRUPTIONS = "kubernetes.io/node/interruption_count"
POOL_INTERRUPTIONS = "kubernetes.io/node_pool/interruption_count"
CONDITION = "kubernetes.io/node/status_condition"
RESTARTS = "prometheus.googleapis.com/kube_jobset_restarts/gauge"
TOPOLOGY_HOST = "gce_topology_host"
BUSY_PCT = 5.0  # a chip this busy over a sample was running the program's steps
IDLE_PCT = 1.0  # every chip below this over a sample: nothing ran
HBM_FULL_AT = 0.95  # memory_used this close to memory_total leaves no room for the next allocation
SKILLS = SOURCE  # google/skills gke-ai-troubleshooting-{tpu-metrics-monitoring,jobset-interruption}


def _pattern(owner: str, wording: str, weight: float, entities: tuple[str, ...], note: str, support: bool = False) -> Pattern:
    return Pattern(wording, weight, ("metric",), entities=entities, note=note, support=support, id="series",
                   origin=SKILLS, sid=signature_id(owner, wording))


@dataclass(frozen=True)
class Interruption:
    """A node interruption the node's series counted: when (the end of the sample that counted it), what and why."""

    ts: int
    node: str
    type: str
    reason: str
    series: Series
    pool: str = ""  # a node pool's count (k8s_node_pool): the pool, not the node, is what the series names


@dataclass(frozen=True)
class Headroom:
    """A chip's tightest HBM sample: bytes used of the bytes it has."""

    ts: int
    pod: str
    chip: str
    used: float
    total: float
    series: Series

    @property
    def fraction(self) -> float:
        return self.used / self.total if self.total else 0.0


@dataclass
class SeriesFacts:
    """The workload's series read as facts; every question answers `None` or empty when no series says."""

    chips: dict[tuple[str, str], Series] = field(default_factory=dict)  # (pod, chip) -> duty cycle series
    interruptions: list[Interruption] = field(default_factory=list)
    conditions: list[tuple[int, str, str, str, Series]] = field(default_factory=list)  # (ts, node, condition, status)
    restarts: list[tuple[int, float, Series]] = field(default_factory=list)
    hosts: dict[str, str] = field(default_factory=dict)  # node -> gce_topology_host
    headroom: list[Headroom] = field(default_factory=list)  # per chip, its tightest sample

    @property
    def has_activity(self) -> bool:
        return bool(self.chips)

    def samples(self) -> dict[int, list[tuple[float, Series]]]:
        """Sample end time -> every chip's duty cycle then."""
        out: dict[int, list[tuple[float, Series]]] = {}
        for s in self.chips.values():
            for t, v in s.points:
                out.setdefault(t, []).append((v, s))
        return out

    def busy_times(self) -> list[int]:
        """When some chip of the workload was working (a sample at or above BUSY_PCT), sorted."""
        return sorted(t for t, vals in self.samples().items() if any(v >= BUSY_PCT for v, _ in vals))

    def activity(self, pod: str) -> list[tuple[int, float]]:
        """A pod's duty cycle over time: its busiest chip per sample."""
        out: dict[int, float] = {}
        for (p, _chip), s in self.chips.items():
            if p == pod:
                for t, v in s.points:
                    out[t] = max(out.get(t, 0.0), v)
        return sorted(out.items())

    @property
    def last_sample(self) -> int:
        return max((s.points[-1][0] for s in self.chips.values()), default=0)

    def idle_since(self) -> int | None:
        """The first sample of the idle stretch that ends the series (every chip below IDLE_PCT), or None."""
        start = None
        for t, vals in sorted(self.samples().items(), reverse=True):
            if any(v >= IDLE_PCT for v, _ in vals):
                break
            start = t
        return start

    def last_busy(self) -> tuple[int, float, Series] | None:
        """The latest sample in which a chip worked, with its value and series."""
        best = None
        for s in self.chips.values():
            for t, v in s.points:
                if v >= BUSY_PCT and (best is None or (t, v) > best[:2]):
                    best = (t, v, s)
        return best

    def busy_at_end(self, now: int) -> bool:
        """A chip worked in the last few samples before `now` (the end of the data)."""
        last = self.last_busy()
        return last is not None and now - last[0] <= 3 * SAMPLE_NS

    def summary(self, now: int) -> dict:
        """What the series prove, in brief, for the agent's digest: the chips' activity, HBM, interruptions, hosts."""
        last = self.last_busy()
        out: dict = {"chips": len(self.chips), "last_sample": format_ns(self.last_sample) or None,
                     "last_busy": f"{format_ns(last[0])} ({last[1]:.0f} %)" if last else None,
                     "idle_since": format_ns(self.idle_since() or 0) or None, "busy_at_end": self.busy_at_end(now)}
        if self.headroom:
            tight = max(self.headroom, key=lambda h: h.fraction)
            out["hbm_peak"] = f"{tight.fraction:.0%} of {tight.total / 2**30:.0f} GiB on {tight.pod} at {format_ns(tight.ts)}"
        out["interruptions"] = [f"{format_ns(i.ts)} {i.node or 'node pool ' + i.pool}: {i.type} ({i.reason})"
                                for i in self.interruptions][:10]
        down: dict[tuple[str, str, str], int] = {}
        for ts, node, cond, status, _s in self.conditions:
            if (cond == "Ready") != (status == "True"):  # not ready, or a pressure condition that holds
                down.setdefault((node, cond, status), ts)
        if down:
            out["node_conditions"] = [f"{n} {c}={st} from {format_ns(ts)}" for (n, c, st), ts in sorted(down.items())][:10]
        if self.restarts:
            out["jobset_restarts"] = self.restarts[-1][1]
        if hosts := self.repeated_hosts():
            out["hosts_under_several_nodes"] = hosts
        return out

    def repeated_hosts(self) -> dict[str, list[str]]:
        """Physical hosts that several node names of the workload ran on (one host failing across attempts)."""
        by_host: dict[str, list[str]] = {}
        for node, host in sorted(self.hosts.items()):
            by_host.setdefault(host, []).append(node)
        return {h: nodes for h, nodes in by_host.items() if len(nodes) > 1}


def _chip(s: Series) -> str:
    return s.labels.get("accelerator_id") or s.labels.get("tpu_chip") or ",".join(f"{k}={v}" for k, v in sorted(s.labels.items()))


def in_pool(pool: str, cluster: str, nodes: Iterable[str]) -> bool:
    """Some node of the workload belongs to the node pool (GKE names a pool's nodes gke-<cluster>-<pool>-<hash>-<id>)."""
    return bool(pool) and any(n.startswith(f"gke-{cluster}-{pool}-") for n in nodes)


def _mine(s: Series, jobset: str, namespace: str | None, pods: set[str], nodes: set[str]) -> bool:
    if s.resource_type == "k8s_node_pool" or (s.resource.get("nodepool_name") and not s.node and not s.pod):
        return in_pool(s.resource.get("nodepool_name", ""), s.resource.get("cluster_name", ""), nodes)
    if s.pod:
        ns = s.resource.get("namespace_name")
        return (s.pod in pods or s.pod.startswith(jobset + "-")) and (not namespace or not ns or ns == namespace)
    if s.node:
        return s.node in nodes
    return s.labels.get("jobset_name") == jobset or s.resource.get("jobset_name") == jobset


def series_facts(found: SeriesSet, jobset: str, namespace: str | None, pods: Iterable[str],
                 nodes: Iterable[str]) -> SeriesFacts:
    """The facts the JobSet's series prove: its pods' chips, its nodes, its own restart gauge."""
    pods, nodes = set(pods), set(nodes)
    facts = SeriesFacts()
    used: dict[tuple[str, str], Series] = {}
    total: dict[tuple[str, str], Series] = {}
    for s in found.series:
        if TOPOLOGY_HOST in s.metadata and s.node:
            facts.hosts[s.node] = s.metadata[TOPOLOGY_HOST]
        if not _mine(s, jobset, namespace, pods, nodes):
            continue
        if s.metric == DUTY and s.pod:
            facts.chips[(s.pod, _chip(s))] = s
        elif s.metric in (USED, TOTAL) and s.pod:
            (used if s.metric == USED else total)[(s.pod, _chip(s))] = s
        elif s.metric == INTERRUPTIONS and s.node:
            facts.interruptions += _interruptions(s)
        elif s.metric == POOL_INTERRUPTIONS and s.resource.get("nodepool_name"):
            facts.interruptions += [replace(i, pool=s.resource["nodepool_name"]) for i in _interruptions(s)]
        elif s.metric == CONDITION and s.node:
            facts.conditions += [(t, s.node, s.labels.get("condition", ""), s.labels.get("status", ""), s)
                                 for t, v in s.points if v > 0]
        elif s.metric == RESTARTS:
            facts.restarts += [(t, v, s) for t, v in s.points]
    for key, u in used.items():
        t_of = dict(total[key].points) if key in total else {}
        cap = max(t_of.values(), default=0.0)
        tight = [(v / (t_of.get(t) or cap), t, v, t_of.get(t) or cap) for t, v in u.points if t_of.get(t) or cap]
        if tight:
            _f, t, v, tot = max(tight)
            facts.headroom.append(Headroom(t, key[0], key[1], v, tot, u))
    facts.interruptions = sorted(_once(facts.interruptions), key=lambda i: i.ts)
    return facts


def _once(found: list[Interruption]) -> list[Interruption]:
    """A node pool's count of an interruption its node's own count shows too is the same interruption: kept once, by
    the node (which names more)."""
    nodes = [i for i in found if not i.pool]
    return nodes + [p for p in found if p.pool and not any(
        n.type == p.type and n.reason == p.reason and abs(n.ts - p.ts) <= SAMPLE_NS
        and in_pool(p.pool, p.series.resource.get("cluster_name", ""), [n.node]) for n in nodes)]


def _interruptions(s: Series) -> list[Interruption]:
    """One Interruption per sample that counted one (a CUMULATIVE series: per increase)."""
    out, prev = [], 0.0
    for t, v in s.points:
        n = v - prev if s.kind == "CUMULATIVE" else v
        prev = v
        if n > 0:
            out.append(Interruption(t, s.node or "", s.labels.get("interruption_type", ""),
                                    s.labels.get("interruption_reason", ""), s))
    return out


def record(s: Series, ts: int, text: str, at: int = 0) -> Record:
    """One point of a series as a citable record (its id is the series' key and the point's end time; `at`: when what
    it counted happened, if earlier than the end of the sample)."""
    pool = s.resource.get("nodepool_name", "") if not s.node else ""
    return Record(s.point_id(ts), at or ts, "metric", s.metric, text, pod=s.pod, container=s.resource.get("container_name"),
                  node=s.node, namespace=s.resource.get("namespace_name"), cluster=s.resource.get("cluster_name"),
                  project=s.resource.get("project_id"), location=s.resource.get("location"),
                  kind="Node" if s.node and not s.pod else "NodePool" if pool else None,
                  obj=s.node if s.node and not s.pod else pool or None,
                  extra={"series": {"type": s.resource_type, "labels": {**s.resource, **s.labels}}})


def _value(s: Series, ts: int) -> float:
    return dict(s.points).get(ts, 0.0)


def _where(s: Series) -> str:
    """The chip a series is about, or its pod's busiest chip when the export took the maximum per pod."""
    return f"chip {_chip(s)} of pod {s.pod}" if _chip(s) else f"pod {s.pod} (its busiest chip)"


def duty_text(s: Series, ts: int, what: str = "") -> str:
    """A duty-cycle sample in words: metric, chip, the minute it covers and its value."""
    return (f"{s.metric} = {_value(s, ts):.0f} % on {_where(s)} in the 60 s to {format_ns(ts)}"
            + (f"; {what}" if what else ""))


def signals(facts: SeriesFacts) -> list[Signal]:
    """The cause and support signals the series give: each interruption (a class by its type and reason), and HBM
    filled to its total on a chip (supporting an HBM OOM, never a cause alone)."""
    out = []
    for i in facts.interruptions:
        cls, weight = next((c, w) for typ, why, c, w in INTERRUPTION_CLASS if typ in ("", i.type) and why in ("", i.reason))
        where = f"node pool {i.pool}" if i.pool else f"node {i.node}"
        text = (f"{i.series.metric} = {_value(i.series, i.ts):.0f} on {where} in the 60 s to {format_ns(i.ts)}: "
                f"interruption_type={i.type or '?'} interruption_reason={i.reason or '?'}")
        p = _pattern(cls, f"{'node_pool/' if i.pool else ''}interruption_count {i.type}", weight,
                     ("NodePool",) if i.pool else ("Node",), f"the {'node pool' if i.pool else 'node'} was interrupted ({i.type}, {i.reason})")
        out.append(Signal("cause", cls, p, record(i.series, i.ts, text, i.ts - SAMPLE_NS // 2), {"node": i.node}))
    for h in facts.headroom:
        if h.fraction >= HBM_FULL_AT:
            text = (f"{h.series.metric} = {h.used / 2**30:.1f} GiB of {h.total / 2**30:.1f} GiB ({h.fraction:.0%}) on "
                    f"{_where(h.series)} in the 60 s to {format_ns(h.ts)}")
            p = _pattern(HBM_FULL_CLASS, "memory_used at memory_total", 0.3, ("Pod",), "HBM was full", support=True)
            out.append(Signal("cause", HBM_FULL_CLASS, p, record(h.series, h.ts, text), {}))
    return out


IDLE = _pattern(STALL, "duty_cycle 0 on every chip", 0.85, ("Pod",),
                "every chip of the workload stopped working")
BUSY = _pattern(STALL, "duty_cycle busy", 0.1, ("Pod",), "the chips' last working sample", support=True)


def stall_signals(facts: SeriesFacts) -> list[Signal]:
    """What shows a stall in the series: the first idle sample (on the chip that worked last, if it was sampled then),
    and that chip's last busy one."""
    since, last = facts.idle_since(), facts.last_busy()
    if since is None:
        return []
    s = last[2] if last else min(facts.chips.values(), key=lambda x: x.key)
    if since not in dict(s.points):  # that chip's series ended before (its pod went away): a chip sampled then
        s = min((c for c in facts.chips.values() if since in dict(c.points)), key=lambda x: x.key, default=s)
    out = [Signal("cause", STALL, IDLE, record(s, since, duty_text(
        s, since, f"every chip of the workload below {IDLE_PCT:.0f} % from then to {format_ns(facts.last_sample)}")), {})]
    if last:
        out.append(Signal("cause", STALL, BUSY, record(last[2], last[0], duty_text(last[2], last[0], "its last working sample")), {}))
    return out


def read_series(found: SeriesSet | None, model: Workload, at: int | None = None) -> list[Signal]:
    """Put what the series prove about the model's workload into it (model.series, model.series_busy) and return the
    signals they give (none without series); points after `at` (the time the run is judged as of) are not read."""
    if found is None or not found.series or not model.jobset:
        return []
    if at is not None:
        found = SeriesSet([replace(s, points=kept) for s in found.series if (kept := tuple(p for p in s.points if p[0] <= at))])
    model.series = facts = series_facts(found, model.jobset, model.namespace, model.pods, model.nodes)
    model.series_busy = facts.busy_times()
    return signals(facts)
