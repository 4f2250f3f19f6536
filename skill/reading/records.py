"""Normalised records: one log line, event or object fact, whatever source it came from."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from urllib.parse import unquote

import orjson

from ..errors import InputError
from .names import HEAD_JOB

POD_LABEL = "k8s-pod/jobset_sigs_k8s_io/jobset-name"
NODE_LABEL = "compute.googleapis.com/resource_name"
CONTROLLER_NAME_LABEL = "logging.gke.io/top_level_controller_name"


@dataclass(slots=True)
class Record:
    """One piece of evidence: a log line, an event, or a fact read off a Kubernetes object."""

    id: str
    ts: int  # nanoseconds since the epoch; 0 when the input had no usable time
    source: str  # container | node | event | serial | object
    log: str  # log id (stdout, stderr, events, kubelet, ...) or the object fact kind (pod-status, jobset-status ...)
    text: str
    severity: str = "DEFAULT"
    pod: str | None = None
    container: str | None = None
    node: str | None = None
    namespace: str | None = None
    jobset: str | None = None
    reason: str | None = None  # events: the event reason; objects: the condition/termination reason
    kind: str | None = None  # events: involvedObject.kind; objects: the object kind
    obj: str | None = None  # events: involvedObject.name; objects: metadata.name
    cluster: str | None = None
    project: str | None = None
    location: str | None = None
    extra: dict = field(default_factory=dict)
    # An Event Kubernetes folded repeats into: `count` occurrences from `first_ts` to `ts`; `times` the ones known
    # exactly besides those two (copies of it in the events log)
    count: int = 1
    first_ts: int = 0
    times: tuple[int, ...] = ()

    @property
    def time(self) -> str:
        return format_ns(self.ts)

    @property
    def resource(self) -> str:
        """A short name for what the record is about, for citations."""
        if self.pod and self.container:
            return f"{self.pod}/{self.container}"
        if self.kind and self.obj:
            return f"{self.kind}/{self.obj}"
        return self.pod or self.node or self.obj or self.log


_SECONDS: dict[str, int] = {}


def parse_ts(value: object) -> int:
    """An RFC 3339 timestamp (any offset, up to nanoseconds) as ns since the epoch; 0 when absent or unparsable."""
    if not isinstance(value, str) or not value:
        return 0
    # Fast path for the fixed-width UTC form gcloud prints: cache whole seconds, read the fraction directly.
    if len(value) >= 20 and value[-1] == "Z" and value[10] == "T" and (len(value) == 20 or value[19] == "."):
        head = value[:19]
        sec = _SECONDS.get(head)
        if sec is None:
            try:
                sec = int(dt.datetime.fromisoformat(head).replace(tzinfo=dt.UTC).timestamp())
            except ValueError:
                return 0
            if len(_SECONDS) > 200_000:
                _SECONDS.clear()
            _SECONDS[head] = sec
        frac = value[20:-1]
        if len(value) == 20:
            return sec * 1_000_000_000
        if frac.isdigit():
            return sec * 1_000_000_000 + int(frac[:9].ljust(9, "0"))
    try:
        return _parse_ts(value)
    except ValueError:
        return 0


_SECOND_NS: dict[str, int] = {}  # 'YYYY-MM-DDTHH:MM:SS' -> ns, for parse_utc


def parse_utc(value: str) -> int:
    """A timestamp in gcloud's fixed-width UTC spelling (YYYY-MM-DDTHH:MM:SS, up to 9 fraction digits, Z) as ns,
    and 0 for any other spelling or an impossible time: parse_ts(value) if query.utc_spelled(value) else 0, for
    the one string of every entry the index reads (the instant of each second is computed once)."""
    base = _SECOND_NS.get(value[:19])
    if base is None and (base := _second_ns(value[:19])) is None:
        return 0
    n = len(value)
    if n == 20:
        return base if value[19] == "Z" else 0
    frac = value[20:-1]
    if n < 20 or n > 30 or value[19] != "." or value[-1] != "Z" or not frac.isdigit() or not frac.isascii():
        return 0
    return base + int(frac.ljust(9, "0"))


def _second_ns(head: str) -> int | None:
    """ns of 'YYYY-MM-DDTHH:MM:SS' (ASCII digits, a real calendar time), remembered; None for anything else."""
    digits = head[:4] + head[5:7] + head[8:10] + head[11:13] + head[14:16] + head[17:19]
    if len(head) != 19 or head[4] + head[7] + head[10] + head[13] + head[16] != "--T::" or not head.isascii() \
            or not digits.isdigit() or head[17:19] > "59":
        return None
    base = parse_ts(head + "Z")
    if not base and head != "1970-01-01T00:00:00":  # 0: not a calendar time (or the epoch itself)
        return None
    if len(_SECOND_NS) > 200_000:
        _SECOND_NS.clear()
    _SECOND_NS[head] = base
    return base


def _parse_ts(s: str) -> int:
    s = s.strip()
    frac_ns = 0
    # Split off the fraction by hand: datetime only keeps microseconds and we keep nanoseconds.
    dot = s.find(".", 10)
    if dot != -1:
        end = dot + 1
        while end < len(s) and s[end].isdigit():
            end += 1
        digits = s[dot + 1 : end]
        if not digits:
            raise ValueError(s)
        frac_ns = int(digits[:9].ljust(9, "0"))
        s = s[:dot] + s[end:]
    if s.endswith(("Z", "z")):
        s = s[:-1] + "+00:00"
    d = dt.datetime.fromisoformat(s.replace(" ", "T", 1))
    if d.tzinfo is None:
        d = d.replace(tzinfo=dt.UTC)
    return int(d.timestamp()) * 1_000_000_000 + frac_ns


def format_ns(ns: int) -> str:
    """ns since the epoch as RFC 3339 UTC with the shortest exact fraction (nanoseconds kept)."""
    if ns <= 0:
        return ""
    sec, frac = divmod(ns, 1_000_000_000)
    base = dt.datetime.fromtimestamp(sec, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S")
    if frac:
        base += "." + f"{frac:09d}".rstrip("0")
    return base + "Z"


def log_id(log_name: str) -> str:
    """The log id of a logName: projects/p/logs/cloudaudit.googleapis.com%2Factivity -> cloudaudit.googleapis.com/activity."""
    i = log_name.rfind("/logs/")
    return unquote(log_name[i + 6 :]) if i != -1 else log_name


MESSAGE_KEYS = ("message", "MESSAGE", "msg", "log")
STEP_KEYS = ("step", "global_step", "train_step")  # a structured training record's step counter
ERROR_KEYS = ("exc_info", "exception", "stack_trace", "stacktrace", "traceback", "error")


_GLOG_LEVEL = re.compile(r"^([IWEF])\d{4} \d\d:\d\d:\d\d")
_PY_LEVEL = re.compile(r"^(DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL):[\w.]*:")
_LEVELS = {"I": "INFO", "W": "WARNING", "E": "ERROR", "F": "CRITICAL", "WARN": "WARNING", "FATAL": "CRITICAL"}


def stated_level(rec: Record) -> str:
    """How bad a container line says it is: a glog letter or a Python logging prefix outranks the entry's severity,
    which GKE sets to ERROR for every stderr line whatever it says; otherwise the entry's severity."""
    if (m := _GLOG_LEVEL.match(rec.text)) is not None:
        return _LEVELS[m.group(1)]
    if (m := _PY_LEVEL.match(rec.text)) is not None:
        return _LEVELS.get(m.group(1), m.group(1))
    return rec.severity


def payload_text(entry: dict) -> str:
    """The human text of a LogEntry, whichever payload it has."""
    text = entry.get("textPayload")
    if isinstance(text, str):
        return text
    jp = entry.get("jsonPayload")
    if isinstance(jp, dict):
        message = next((v for k in MESSAGE_KEYS if isinstance(v := jp.get(k), str)), None)
        # What a structured logger puts beside the message: the exception and its traceback, read like a text line's.
        detail = [v for k in ERROR_KEYS if isinstance(v := jp.get(k), str) and v and v not in (message or "")]
        if message is not None or detail:
            # a training loop's structured record keeps its step beside the message ({"message": "train step",
            # "step": 1087, "loss": 2.3}): read as the line a text logger would print, "train step (step=1087)"
            step = next((f"{k}={v}" for k in STEP_KEYS if type(v := jp.get(k)) is int and str(v) not in (message or "")), None)
            first = f"{message} ({step})" if message and step else message
            return "\n".join(([first] if first else []) + detail)
        return orjson.dumps(jp, option=orjson.OPT_SORT_KEYS).decode()
    pp = entry.get("protoPayload")
    if isinstance(pp, dict):
        status = pp.get("status") or {}
        parts = [pp.get("methodName"), pp.get("resourceName"), status.get("message") if isinstance(status, dict) else None]
        return " ".join(str(p) for p in parts if p)
    return "" if text is None else str(text)


def as_object(value: object) -> dict:
    """value if it is a JSON object, else {} (a field of the wrong type counts as absent)."""
    return value if type(value) is dict else {}


def _label(labels: dict, key: str) -> str | None:
    """A label value as a string (Cloud Logging's labels are string maps): a number spelled out, a list or object None."""
    v = labels.get(key)
    if v is None or type(v) is str:
        return v
    return str(v) if isinstance(v, int | float) else None


def record_from_entry(entry: dict) -> Record:
    """Normalise one raw LogEntry dict (camelCase, as gcloud prints it). Raises KeyError/TypeError on a non-entry.

    A resource, resource.labels or labels that is not an object counts as absent, and label values are strings.
    """
    resource = as_object(entry.get("resource"))
    rtype = resource.get("type", "")
    rl = as_object(resource.get("labels"))
    labels = as_object(entry.get("labels"))
    lid = log_id(entry.get("logName", ""))
    rec = Record(
        id=str(entry["insertId"]),
        ts=parse_ts(entry.get("timestamp")) or parse_ts(entry.get("receiveTimestamp")),
        source="container",
        log=lid,
        text="",
        severity=str(entry.get("severity") or "DEFAULT"),
        namespace=_label(rl, "namespace_name"),
        cluster=_label(rl, "cluster_name"),
        project=_label(rl, "project_id"),
        location=_label(rl, "location") or _label(rl, "zone"),
    )
    if lid == "events" and isinstance(entry.get("jsonPayload"), dict):
        _fill_event(rec, entry["jsonPayload"])
        rec.node = _label(rl, "node_name") or rec.node
        return rec
    rec.text = payload_text(entry)
    if rtype == "k8s_container":
        rec.pod = _label(rl, "pod_name")
        rec.container = _label(rl, "container_name")
        rec.node = _label(labels, NODE_LABEL)
        rec.jobset = _label(labels, POD_LABEL) or _label(labels, CONTROLLER_NAME_LABEL)
    elif lid.startswith("serialconsole.googleapis.com"):
        rec.source = "serial"
        rec.node = _label(labels, NODE_LABEL) or _label(rl, "instance_id")
    elif lid.startswith("cloudaudit.googleapis.com"):
        rec.source = "node"  # GCE system/activity events are about the node's VM
        pp = entry.get("protoPayload") or {}
        rec.reason = pp.get("methodName") if isinstance(pp, dict) else None
        name = str(pp.get("resourceName", "")) if isinstance(pp, dict) else ""
        rec.node = name.rsplit("/", 1)[-1] if "/instances/" in name else _label(labels, NODE_LABEL)
        if "/pods/" in name:  # Kubernetes audit: core/v1/namespaces/<ns>/pods/<pod>[/eviction]
            rec.pod = name.split("/pods/", 1)[1].split("/", 1)[0]
            who = (pp.get("authenticationInfo") or {}).get("principalEmail") if isinstance(pp, dict) else None
            if who:  # who evicted or deleted the pod is the point of reading this entry
                rec.text += f" by {who}"
    elif "cluster-autoscaler" in lid:
        rec.source = "event"
    else:
        rec.source = "node" if rtype in ("k8s_node", "gce_instance") else "container"
        rec.node = _label(rl, "node_name") or _label(labels, NODE_LABEL)
        rec.pod = _label(rl, "pod_name")
    return rec


_FIELD_CONTAINER = re.compile(r"spec\.(?:initContainers|containers|ephemeralContainers)\{([^}]+)\}")


def _fill_event(rec: Record, ev: dict) -> None:
    io = ev.get("involvedObject") or {}
    rec.source = "event"
    rec.reason = ev.get("reason")
    rec.kind = io.get("kind")
    rec.obj = io.get("name")
    rec.namespace = io.get("namespace") or rec.namespace
    rec.severity = "WARNING" if ev.get("type") == "Warning" else "INFO"
    rec.text = f"{ev.get('reason') or ''}: {ev.get('message') or ''}"
    if rec.kind == "Pod":
        rec.pod = rec.obj
        # kubelet's events about one container say which: involvedObject.fieldPath = spec.containers{name}
        m = _FIELD_CONTAINER.match(io.get("fieldPath") or "")
        rec.container = m.group(1) if m else rec.container
    elif rec.kind == "Node":
        rec.node = rec.obj
    src = ev.get("source") or {}
    rec.extra = {"component": src.get("component") or ev.get("reportingComponent"), "type": ev.get("type")}
    if rec.kind == "Pod" and io.get("uid"):
        rec.extra["uid"] = io["uid"]  # the pod's UID: what the kernel's OOM summary names (understanding/model.py)
    series = ev.get("series")
    count = (series.get("count") if isinstance(series, dict) else None) or ev.get("count")
    rec.count = count if isinstance(count, int) and 1 < count < 1_000_000 else 1
    if rec.count > 1:
        rec.first_ts = parse_ts(ev.get("firstTimestamp")) or parse_ts(ev.get("eventTime")) or 0


def occurrences(rec: Record) -> list[tuple[int, bool]]:
    """When a record happened, as (time, known) pairs in order: once at `ts` for a line; an Event with `count` N is N
    occurrences between its first and last timestamp, those not known exactly (Kubernetes keeps only the first, the
    last and the count) spread evenly between the known ones and marked known=False."""
    if rec.count <= 1 or not rec.ts:
        return [(rec.ts, True)]
    known: list[int] = []
    for t in sorted(t for t in (rec.first_ts or rec.ts, rec.ts, *rec.times) if t):
        if not known or t - known[-1] > 1_000_000_000:  # a copy logged within a second of it is the same occurrence
            known.append(t)
    missing = rec.count - len(known)
    first, last = known[0], known[-1]
    guessed = [first + (last - first) * k // (missing + 1) for k in range(1, missing + 1)]
    return sorted([(t, True) for t in known] + [(t, False) for t in guessed])


def record_from_event(ev: dict) -> Record:
    """A core/v1 Event object (from kubectl get events) as a record cited by its metadata.uid."""
    meta = ev.get("metadata") or {}
    ts = (
        parse_ts(ev.get("lastTimestamp"))
        or parse_ts((ev.get("series") or {}).get("lastObservedTime"))
        or parse_ts(ev.get("eventTime"))
        or parse_ts(ev.get("firstTimestamp"))
        or parse_ts(meta.get("creationTimestamp"))
    )
    rec = Record(id=str(meta["uid"]), ts=ts, source="event", log="events", text="")
    _fill_event(rec, ev)
    return rec


def rm_address(jobset: str) -> str:
    """Where a JobSet's workers must find its resource manager: the head pod's stable DNS name, port 29001."""
    return f"{jobset}-{HEAD_JOB}-0-0.{jobset}:29001"


def time_arg(flag: str, text: str | None) -> int | None:
    """A time given on the command line or to a tool (`--at`, `--start` ...) as ns; None when not given."""
    if text is None:
        return None
    ns = parse_ts(text)
    if not ns:
        raise InputError(f"{flag} {text!r}: not an RFC 3339 time (e.g. 2026-11-20T10:30:00Z)")
    return ns
