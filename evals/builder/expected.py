"""expected.yaml: the scenario's answer with entity names and evidence ids resolved against the exported files."""

from __future__ import annotations

import json
from typing import Any

from .files import ids_in, series_in
from .model import ShapeError
from .world import World


class Expected(World):
    """Resolves `expected:` references (pod refs, item keys, text) to what the build exported."""

    def resolve_expected(self, files: dict[str, Any]) -> dict[str, Any] | None:
        exp = self.s.expected
        if exp is None:
            return None
        present = ids_in(files)
        out: dict[str, Any] = {"failure_class": exp["failure_class"], "status": exp["status"]}
        ents = []
        for e in exp.get("root_cause_entities") or []:
            ents.append({"kind": e["kind"], "name": self.entity_name(e)})
        out["root_cause_entities"] = ents
        ev = []
        for ref in exp.get("evidence") or []:
            i = self.evidence_id(str(ref), files)
            if i not in present:
                raise ShapeError(f"expected.evidence {ref!r} resolved to {i!r}, which is in no exported file")
            ev.append(i)
        out["evidence"] = ev
        out["fix_requires"] = list(exp.get("fix_requires") or [])
        out["data_gaps_require"] = list(exp.get("data_gaps_require") or [])
        out["tags"] = list(exp.get("tags") or [])
        if exp.get("fate"):  # the run's fate (issue 41): recovered, waiting, crashing, failed, stalled, running, completed
            out["fate"] = str(exp["fate"])
        return out

    def entity_name(self, e: dict[str, Any]) -> str:
        if "name" in e:
            return self.fmt(str(e["name"]), at=self.s.end)
        if "ref" in e:
            pod = self.pod_ref(e["ref"], self.s.end)
            return {"Pod": pod.name, "Node": pod.node.name if pod.node else "",
                    "Container": f"{pod.name}/{e.get('container') or pod.container(None).name}"}[e["kind"]]
        o = self.outputs.get(e.get("of", ""))
        if o is None:
            raise ShapeError(f"entity {e}: needs name, ref or of: <incident key>")
        kind, of = e["kind"], o.pod
        node = o.node or (of.node if of else None)
        if kind == "Pod" and of:
            return of.name
        if kind == "Node" and node:
            return node.name
        if kind == "Container" and of:
            return f"{of.name}/{o.container or of.container(None).name}"
        if kind == "Image" and (o.image or (of and o.container)):
            return o.image or (of.container(o.container).image if of else "")
        if kind == "JobSet":
            return self.w["jobset"]
        if kind == "Job" and of:
            return of.job.name
        if kind == "NodePool" and node:
            return node.pool
        raise ShapeError(f"entity {e}: incident item {e.get('of')!r} has nothing of kind {kind}")

    def evidence_id(self, ref: str, files: dict[str, Any]) -> str:
        if ref == "jobset":
            return self.jobset_uid
        if ref.startswith("metric:"):
            return metric_point(ref, files)
        if ref.startswith("pod:"):
            return self.pod_ref(ref[4:], self.s.end).uid
        if ref.startswith("text:"):
            hits = [e for e in reversed(files.get("logs.json", [])) if ref[5:] in json.dumps(
                e.get("textPayload") or e.get("jsonPayload") or e.get("protoPayload"), ensure_ascii=False)
                or ref[5:] in json_strings(e.get("jsonPayload"))]
            if not hits:
                raise ShapeError(f"expected.evidence {ref!r}: no log entry contains that text")
            return hits[0]["insertId"]
        key, _, how = ref.partition(":")
        o = self.outputs.get(key)
        if o is None:
            raise ShapeError(f"expected.evidence {ref!r}: no incident item with that key")
        uids_json = {e["metadata"]["uid"] for e in files.get("events.json", {}).get("items", [])}
        if how.startswith("text:"):
            hits = [i for i, t in zip(o.inserts, o.texts) if how[5:] in t]
            if not hits:
                raise ShapeError(f"expected.evidence {ref!r}: no line that item exported contains that text")
            return hits[0]
        if how.startswith("insert"):
            n = int(how.split(":")[1]) if ":" in how else 0
            ins = o.inserts or (o.event.inserts if o.event else [])
            if n >= len(ins):
                raise ShapeError(f"expected.evidence {ref!r}: the item exported {len(ins)} log entries")
            return ins[n]
        if how == "uid" or (not how and o.event is None and not o.inserts):
            if o.uid is None:
                raise ShapeError(f"expected.evidence {ref!r}: the item has no object uid")
            return o.uid
        if o.event is not None:
            if o.event.uid in uids_json:
                return o.event.uid
            if o.event.inserts:
                return o.event.inserts[0]
            if o.uid:
                return o.uid
            raise ShapeError(f"expected.evidence {ref!r}: the event is neither in events.json nor in logs.json")
        if o.inserts:
            return o.inserts[0]
        raise ShapeError(f"expected.evidence {ref!r}: the item exported nothing")


def json_strings(payload: Any) -> str:
    """The string values of a structured payload, unescaped (so `text:` can quote a line of a JSON exc_info)."""
    if isinstance(payload, str):
        return payload + "\n"
    if isinstance(payload, dict):
        return "".join(json_strings(v) for v in payload.values())
    if isinstance(payload, list):
        return "".join(json_strings(v) for v in payload)
    return ""


def metric_point(ref: str, files: dict[str, Any]) -> str:
    """`metric:TYPE` or `metric:TYPE{label=value,...}`: the earliest point above zero of a series of that metric type
    (with those metric or resource labels), by the id a diagnosis cites it with."""
    metric, _, sel = ref[len("metric:"):].partition("{")
    want = dict(kv.split("=", 1) for kv in sel.rstrip("}").split(",") if kv)
    hits = sorted((t, s.point_id(t)) for s in series_in(files).series if s.metric == metric
                  and all({**s.resource, **s.labels}.get(k) == v for k, v in want.items())
                  for t, v in s.points if v > 0)
    if not hits:
        raise ShapeError(f"expected.evidence {ref!r}: no point above zero of such a series in the metric files")
    return hits[0][1]
