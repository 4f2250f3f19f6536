"""Incident items: the dispatch over `item_<kind>` methods, `repeat:` times, and the log, node_log and serial items."""

from __future__ import annotations

from typing import Any

from pathways_workload.evals import scenarios as sc
from pathways_workload.evals.scenarios import NS, Item, fmt_ns, parse_duration

from .logs import Logs
from .model import Ctr, Output, Pod, ShapeError


class Incident(Logs):
    """Runs every incident item through the handler of its kind."""

    def repeats(self, spec: dict[str, Any] | None, t: int, stop: int | None = None) -> list[int]:
        """Times of an item with `repeat: {every, count | until}`; a bare item happens once."""
        t += self.jitter(0.0, 0.9)  # nothing real happens on a whole second
        if not spec:
            return [t]
        every = parse_duration(spec["every"])
        until = sc.parse_time(spec["until"], self.s.start, self.s.anchors) if "until" in spec else None
        count = int(spec.get("count", 10**6))
        limit = min(x for x in (until, stop, self.s.end) if x is not None)
        out, k = [], 0
        while k < count and t + k * every <= limit:
            out.append(t + k * every + (self.jitter(0, min(2.0, every / NS / 10)) if k else 0))
            k += 1
        return out

    def incident(self) -> None:
        for it in self.s.items:
            handler = getattr(self, "item_" + it.kind, None)
            if handler:
                handler(it)
        for it, pod, c, t in self.later_logs:
            self.emit_lines(it, pod, c, t, self.out(it))

    def item_log(self, it: Item) -> None:
        sp = it.spec
        o, targets = self.targets(it)
        for n, pod, c in targets:
            for t in self.repeats(sp.get("repeat"), it.at + (self.jitter(0.05, 0.9) if n else 0)):
                if not c.alive(t):
                    raise ShapeError(f"{it.where()}: {pod.ref}/{c.name} is not running at {fmt_ns(t)}; it runs "
                                     f"{[(fmt_ns(r.start), r.end and fmt_ns(r.end)) for r in c.runs]}")
                self.emit_lines(it, pod, c, t, o)

    def emit_lines(self, it: Item, pod: Pod, c: Ctr, t: int, o: Output) -> None:
        sp = it.spec
        if sp.get("json") is not None:
            self.emit_json(it, pod, c, t, o)
            return
        ts = t
        for i, raw in enumerate(str(sp["text"]).rstrip("\n").split("\n")):
            ts += self.rng.randrange(3, 40) * 1000 if i else 0
            text = self.fmt(raw, pod, at=ts, container=c.name)
            if sp.get("step"):
                text = text.replace("{step}", str(self.step_at(pod, t)))
            if sp.get("glog"):
                level, src = sp["glog"].split(None, 1)
                text = self.glog(level, ts, int(sp.get("tid", c.tid)), src, text)
            ins = self.clog(pod, c.name, ts, text, sp.get("stream", "stderr"), sp.get("severity"))
            if ins:
                o.inserts.append(ins)

    def emit_json(self, it: Item, pod: Pod, c: Ctr, t: int, o: Output) -> None:
        """One structured entry: a JSON line on the container's stream, which GKE's agent parses into jsonPayload.

        `text` is the record's `message` (kept whole: a JSON formatter writes one line per record, newlines escaped);
        the `json:` mapping adds fields (logger, exc_info, event_type, nested maps). As Cloud Logging does with
        structured container logs, a `severity` field becomes the LogEntry's severity and leaves the payload.
        """
        sp = it.spec
        fields = sp["json"]
        if not isinstance(fields, dict):
            raise ShapeError(f"{it.where()}: `json:` must be a mapping of extra fields (may be {{}})")
        step = str(self.step_at(pod, t)) if sp.get("step") else None

        def fill(v: Any) -> Any:
            if v == "{step}" and step is not None:  # a field that is just the step is a number, as a formatter writes it
                return int(step)
            if isinstance(v, str):
                v = self.fmt(v, pod, at=t, container=c.name)
                return v.replace("{step}", step) if step is not None else v
            if isinstance(v, dict):
                return {str(k): fill(x) for k, x in v.items()}
            if isinstance(v, list):
                return [fill(x) for x in v]
            return v

        payload = {"message": fill(str(sp.get("text", "")).rstrip("\n")), **fill(fields)}
        severity = payload.pop("severity", None) or sp.get("severity")
        ins = self.clog(pod, c.name, t, "", sp.get("stream", "stderr"), severity, payload)
        if ins:
            o.inserts.append(ins)

    def step_at(self, pod: Pod, t: int) -> int:
        att = self.attempts[pod.attempt]
        if "first_step" not in att.ms:
            return 0
        return att.first_step_no + max(0, int((t - att.ms["first_step"]) / (self.s.background["step_seconds"] * NS)))

    def item_node_log(self, it: Item) -> None:
        node = self.node_ref(it.spec["node"], it.at)
        o = self.out(it)
        o.node = node
        for t in self.repeats(it.spec.get("repeat"), it.at):
            ts = t
            for i, raw in enumerate(str(it.spec["text"]).rstrip("\n").split("\n")):
                # in_order: each line a little after the one before (a multi-line record keeps its order)
                ts = (ts + self.rng.randrange(200, 900) * 1000 if i else t) if it.spec.get("in_order") else t + i * self.rng.randrange(200, 900) * 1000
                ins = self.node_log(node, ts, it.spec.get("log", "kubelet"),
                                    self.fmt(raw, node=node, at=ts), it.spec.get("severity", "INFO"))
                if ins:
                    o.inserts.append(ins)

    def item_serial(self, it: Item) -> None:
        node = self.node_ref(it.spec["node"], it.at)
        o = self.out(it)
        o.node = node
        if not self.s.sources["serial"]:
            return
        for t in self.repeats(it.spec.get("repeat"), it.at):
            ts = t
            for i, raw in enumerate(str(it.spec["text"]).rstrip("\n").split("\n")):
                # in_order: each line a little after the one before (a multi-line kernel report keeps its order)
                ts = (ts + self.rng.randrange(5, 90) * 1000 if i else t) if it.spec.get("in_order") else t + i * self.rng.randrange(5, 90) * 1000
                ins = self.entry(ts, "serialconsole.googleapis.com%2Fserial_port_1_output", self.res_gce(node),
                                 {"compute.googleapis.com/resource_name": node.name}, None,
                                 ("textPayload", self.fmt(raw, node=node, at=ts)))
                if ins:
                    o.inserts.append(ins)
