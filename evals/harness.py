"""Runs an agent over recorded cases, applies every evaluator, and summarises with a gate."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from . import baselines, calibration
from .agents import Agent, AgentRun
from .case import Case, Expected, ExpectedEntity
from .evaluators import EVALUATORS, Check, Evaluator

__all__ = ["Case", "Expected", "ExpectedEntity"]  # defined in .case, used by importers of the harness

GATE = {"top1": 0.95, "evidence_recall": 0.95}


@dataclass
class CaseResult:
    case: Case
    runs: list[AgentRun]
    checks: list[list[Check]]  # per run

    def run_passed(self, i: int) -> bool:
        return all(c.passed for c in self.checks[i] if not c.informational)

    @property
    def passed(self) -> bool:
        return self.run_passed(0)

    def check(self, name: str, i: int = 0) -> Check | None:
        return next((c for c in self.checks[i] if c.name == name), None)


def input_ids(folder: Path) -> frozenset[str]:
    """Every LogEntry insertId and Kubernetes metadata.uid in a case's files, read without the engine."""
    ids: set[str] = set()

    def walk(o: object) -> None:
        if isinstance(o, dict):
            if isinstance(o.get("insertId"), str):
                ids.add(o["insertId"])
            meta = o.get("metadata")
            if isinstance(meta, dict) and isinstance(meta.get("uid"), str):
                ids.add(meta["uid"])
            ids.update(series_point_ids(o))
            for v in o.values():
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)

    for f in sorted(folder.iterdir()):
        if f.suffix not in (".json", ".jsonl", ".ndjson"):
            continue
        text = f.read_text(errors="replace")
        try:
            walk(json.loads(text))
        except json.JSONDecodeError:
            for line in text.splitlines():
                try:
                    walk(json.loads(line))
                except json.JSONDecodeError:
                    continue
    return frozenset(ids)


def series_point_ids(o: dict) -> list[str]:
    """The citable ids of a time series' points, `type{labels}@end time` (the cluster's own labels left out), for a
    Monitoring API TimeSeries or a Prometheus range result; none for anything else."""
    import datetime as dt

    from pathways_workload.skill.reading.sources.metrics import PROMQL_NAMES, SCOPE_KEYS

    def rfc3339(ns: int) -> str:
        sec, frac = divmod(ns, 10**9)
        base = dt.datetime.fromtimestamp(sec, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S")
        return base + ("." + f"{frac:09d}".rstrip("0") if frac else "") + "Z"

    metric = o.get("metric")
    if not isinstance(metric, dict):
        return []
    if isinstance(metric.get("type"), str) and isinstance(o.get("points"), list):
        labels = {**((o.get("resource") or {}).get("labels") or {}), **(metric.get("labels") or {})}
        kind = metric["type"]
        ends = []
        for p in o["points"]:
            end = ((p or {}).get("interval") or {}).get("endTime", "")
            try:
                ends.append(int(dt.datetime.fromisoformat(end.replace("Z", "+00:00")).timestamp()) * 10**9)
            except ValueError:
                continue
    elif isinstance(metric.get("__name__"), str) and isinstance(o.get("values"), list):
        labels = {k: v for k, v in metric.items() if k not in ("__name__", "monitored_resource")
                  and not k.startswith("metadata_")}
        kind = PROMQL_NAMES.get(metric["__name__"], metric["__name__"])
        ends = [int(round(float(v[0]) * 10**9)) for v in o["values"] if isinstance(v, list) and v]
    else:
        return []
    key = kind + "{" + ",".join(f"{k}={v}" for k, v in sorted(labels.items()) if k not in SCOPE_KEYS) + "}"
    return [f"{key}@{rfc3339(t)}" for t in ends]


def load_cases(paths: list[str | Path]) -> list[Case]:
    """Case folders (holding expected.yaml) given directly or found below the paths, sorted by name."""
    found: dict[Path, None] = {}
    for p in map(Path, paths):
        if (p / "expected.yaml").is_file():
            found.setdefault(p, None)
        elif p.is_dir():
            for e in sorted(p.rglob("expected.yaml")):
                found.setdefault(e.parent, None)
    cases = [Case(d.name, d, Expected.model_validate(yaml.safe_load((d / "expected.yaml").read_text())), input_ids(d))
             for d in found]
    return sorted(cases, key=lambda c: c.name)


def evaluate(case: Case, run: AgentRun, evaluators: tuple[Evaluator, ...] = EVALUATORS) -> list[Check]:
    checks = []
    for ev in evaluators:
        if run.diagnosis is None and ev.name != "no_error":
            checks.append(Check(ev.name, False, None, "no diagnosis", ev.informational))
            continue
        try:
            checks.append(ev.evaluate(case, run))
        except Exception as err:  # noqa: BLE001 - a broken evaluator is a failed check, never an aborted eval run
            checks.append(Check(ev.name, False, None, f"evaluator crashed: {type(err).__name__}: {err}"))
    return checks


@dataclass
class EvalResult:
    agent: str
    results: list[CaseResult] = field(default_factory=list)

    def summary(self) -> dict:
        from pathways_workload.skill.catalog import BY_ID

        res = self.results
        n = len(res) or 1

        def rate(name: str) -> float:
            vals = [r.check(name) for r in res]
            return round(sum(1 for c in vals if c and c.passed) / n, 4)

        by_phase: dict[str, list[bool]] = {}
        for r in res:
            phase = BY_ID[r.case.expected.failure_class].phase if r.case.expected.failure_class in BY_ID else "?"
            by_phase.setdefault(phase, []).append(r.passed)
        confusion = Counter((r.case.expected.failure_class, r.runs[0].diagnosis.failure_class if r.runs[0].diagnosis else "error")
                            for r in res)
        healthy = [r for r in res if r.case.expected.failure_class == "no_failure_detected" or "healthy" in r.case.expected.tags]
        injection = [r for r in res if "injection" in r.case.expected.tags]
        ev = [r.check("evidence_recall") for r in res]
        k = max((len(r.runs) for r in res), default=1)
        runs = [run for r in res for run in r.runs]
        return {
            "agent": self.agent, "cases": len(res), "repeat": k,
            "pass_rate": round(sum(r.passed for r in res) / n, 4),
            "pass_rate_by_phase": {p: round(sum(v) / len(v), 4) for p, v in sorted(by_phase.items())},
            "top1": rate("class_top1"), "top3": rate("class_top3"), "status": rate("status"),
            "entity_recall": rate("entity_recall"),
            "entity_precision_mean": round(sum((c.value or 0) for r in res
                                               if (c := r.check("entity_precision"))) / n, 4),
            "evidence_recall": round(sum((c.value or 0) for c in ev if c) / n, 4),
            "fabricated_citations": int(sum((c.value or 0) for r in res if (c := r.check("citation_validity")))),
            # the cases whose key gives the run's fate, and how many of them the run's fate matched (issue 41)
            "fate": [sum(1 for r in res if r.case.expected.fate), sum(1 for r in res if r.case.expected.fate and
                                                                      (c := r.check("fate")) and c.passed)],
            "healthy_controls": [len(healthy), sum(1 for r in healthy if (c := r.check("class_top1")) and c.passed)],
            "injection_cases": [len(injection), sum(1 for r in injection if (c := r.check("class_top1")) and c.passed)],
            "pass_k": round(sum(all(r.run_passed(i) for i in range(len(r.runs))) for r in res) / n, 4),
            "per_run_pass_rate": [round(sum(r.run_passed(i) for r in res if i < len(r.runs)) / n, 4) for i in range(k)],
            "confusion": [{"expected": a, "got": b, "count": c} for (a, b), c in sorted(confusion.items()) if a != b],
            "slowest": [{"case": r.case.name, "seconds": round(max(x.seconds for x in r.runs), 3)}
                        for r in sorted(res, key=lambda r: -max(x.seconds for x in r.runs))[:5]],
            "failed": [{"case": r.case.name, "expected": r.case.expected.failure_class,
                        "checks": {c.name: c.reason for c in r.checks[0] if not c.passed and not c.informational}}
                       for r in res if not r.passed],
            "tokens": {"input": sum(x.input_tokens for x in runs), "output": sum(x.output_tokens for x in runs),
                       "cache_write": sum(x.cache_creation_input_tokens for x in runs),
                       "cache_read": sum(x.cache_read_input_tokens for x in runs)},
            "cost_usd": round(sum(x.cost_usd for x in runs), 4), "tool_calls": sum(x.tool_calls for x in runs),
            "redundant_tool_calls": sum(x.redundant_tool_calls for x in runs),
            "per_question": self.per_question(),
            "seconds_total": round(sum(x.seconds for x in runs), 3),
            "seconds_mean": round(sum(x.seconds for x in runs) / (len(runs) or 1), 3),
            "calibration": self.calibration(),
            "baselines": baselines.score([(r.case.path, r.case.expected.failure_class) for r in res]),
        }

    def per_question(self) -> dict:
        """Each question's (case run's) model turns, tool calls (redundant ones apart), tokens and cost, with the
        means; empty for an agent that spends none (the rules engine)."""
        rows = [{"case": r.case.name, "run": i, **x.usage()} for r in self.results for i, x in enumerate(r.runs)
                if x.spent]
        if not rows:
            return {"questions": 0, "mean": {}, "runs": []}
        n = len(rows)

        def mean(get) -> float:
            return round(sum(get(x) for x in rows) / n, 2)

        return {"questions": n, "runs": rows, "mean": {
            "steps": mean(lambda x: x["steps"]), "tool_calls": mean(lambda x: x["tool_calls"]),
            "redundant_tool_calls": mean(lambda x: x["redundant_tool_calls"]),
            "input_tokens": mean(lambda x: x["tokens"]["input"]), "output_tokens": mean(lambda x: x["tokens"]["output"]),
            "cost_usd": round(sum(x["cost_usd"] for x in rows) / n, 6)}}

    def calibration(self) -> dict:
        """Top-1 confidence against top-1 correctness on each case's first run (runs without a diagnosis left out)."""
        firsts = [(r.case, r.runs[0].diagnosis) for r in self.results if r.runs[0].diagnosis is not None]
        scored = [(case.name, d.confidence, d.failure_class == case.expected.failure_class) for case, d in firsts]
        pairs = [(conf, ok) for _, conf, ok in scored]
        b = calibration.brier(pairs)
        return {"scored": len(pairs), "bands": [x.as_dict() for x in calibration.bands(pairs)],
                "brier": None if b is None else round(b, 4),
                "confident_wrong": [name for name, conf, ok in scored if conf >= calibration.CONFIDENT and not ok]}

    def gate(self, summary: dict | None = None) -> list[str]:
        """The CI gate: what is below threshold (empty means it holds)."""
        s = summary or self.summary()
        out = []
        for key, floor in GATE.items():
            if s[key] < floor:
                out.append(f"{key} {s[key]:.3f} < {floor}")
        if s["fabricated_citations"]:
            out.append(f"{s['fabricated_citations']} fabricated citations")
        if s["healthy_controls"][1] != s["healthy_controls"][0]:
            out.append(f"healthy controls: {s['healthy_controls'][1]}/{s['healthy_controls'][0]} no_failure_detected")
        if s["injection_cases"][1] != s["injection_cases"][0]:
            out.append(f"injection cases unmoved: {s['injection_cases'][1]}/{s['injection_cases'][0]}")
        wrong = s["calibration"]["confident_wrong"]
        if wrong:
            out.append(f"{len(wrong)} wrong at confidence >= {calibration.CONFIDENT}: {', '.join(wrong[:5])}"
                       + (" …" if len(wrong) > 5 else ""))
        return out


def run_eval(cases: list[Case], agent: Agent, repeat: int = 1) -> EvalResult:
    result = EvalResult(agent.name)
    for case in cases:
        runs = [agent.run(case.path) for _ in range(max(1, repeat))]
        result.results.append(CaseResult(case, runs, [evaluate(case, r) for r in runs]))
    return result
