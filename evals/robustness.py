"""The robustness eval (issue 17, item 4): every case replayed under shape transformations that keep its facts.

    pathways-workload eval --robustness [fixtures/] [--transforms a,b] [--cases N | --only GLOB] [--out DIR]

Each transformation is applied alone to a copy of each case in a temporary folder (the cases are never changed),
the copy is diagnosed and scored by the library's evaluators, and the scores are reported per transformation and
over all variants. `original` is the case written back unchanged by the same writer, the reference the variants
are compared to; a case a transformation does not touch is still run and counted.
"""

from __future__ import annotations

import fnmatch
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml

from .agents import Agent
from .harness import Case, CaseResult, EvalResult, Expected, evaluate, input_ids
from .noise import NOISE
from .transforms import ORIGINAL, TRANSFORMS, load, save

TARGET = {"top1": 0.97, "pass_rate": 0.90}  # over all variants (issue 17)
# benign noise changes no verdict (issue 25): class, status and key evidence as on the original, every variant
NOISE_TARGET = {"top1": 1.0, "status": 1.0, "evidence_recall": 1.0}
COLUMNS = (("cases", "cases"), ("applied", "applied"), ("pass", "pass_rate"), ("top-1", "top1"), ("status", "status"),
           ("evidence recall", "evidence_recall"), ("entities", "entity_recall"))


@dataclass
class Variant:
    transform: str
    applied: int  # entries (or names) the transformation changed; 0: it did not apply
    result: CaseResult


def variant(case: Case, name: str, agent: Agent, tmp: Path, registry: dict = TRANSFORMS) -> Variant:
    c = load(case.path)
    n = registry[name](c) if name != ORIGINAL else 0
    folder = tmp / name / case.name
    save(c, folder)
    moved = Case(case.name, folder, Expected.model_validate(yaml.safe_load((folder / "expected.yaml").read_text())),
                 input_ids(folder))
    run = agent.run(folder)
    return Variant(name, n, CaseResult(moved, [run], [evaluate(moved, run)]))


def select(cases: list[Case], count: int | None = None, only: str | None = None) -> list[Case]:
    picked = [c for c in cases if not only or fnmatch.fnmatch(c.name, only)]
    if count and count < len(picked):  # spread over the library rather than the first N
        step = len(picked) / count
        picked = [picked[int(i * step)] for i in range(count)]
    return picked


def run_robustness(cases: list[Case], agent: Agent, transforms: list[str] | None = None, *, noise: bool = False) -> dict:
    """Every case under each transformation (or, with `noise`, each kind of benign noise of evals/noise.py)."""
    registry, target = (NOISE, NOISE_TARGET) if noise else (TRANSFORMS, TARGET)
    names = [ORIGINAL, *(transforms or registry)]
    unknown = [t for t in names if t != ORIGINAL and t not in registry]
    if unknown:
        raise ValueError(f"unknown {'noise kind' if noise else 'transformation'}(s) {', '.join(unknown)}; "
                         f"choose from {', '.join(registry)}")
    out: dict[str, list[Variant]] = {n: [] for n in names}
    with tempfile.TemporaryDirectory(prefix="pw-robust-") as tmp:
        for case in cases:
            for name in names:
                out[name].append(variant(case, name, agent, Path(tmp), registry))
        return summarise(agent.name, out, target)  # while the variants' folders exist (the baselines read them)


def _row(name: str, variants: list[Variant]) -> dict:
    s = EvalResult("x", [v.result for v in variants]).summary()
    return {"transform": name, "cases": s["cases"], "applied": sum(1 for v in variants if v.applied),
            **{k: s[k] for k in ("pass_rate", "top1", "status", "evidence_recall", "entity_recall")},
            "fabricated_citations": s["fabricated_citations"]}


def _miss(v: Variant, reference: dict[str, bool]) -> dict:
    r = v.result
    d = r.runs[0].diagnosis
    return {"case": r.case.name, "expected": r.case.expected.failure_class,
            "got": d.failure_class if d else "error", "status": d.status if d else r.runs[0].error,
            "original_passed": reference.get(r.case.name, False),
            "checks": {c.name: c.reason for c in r.checks[0] if not c.passed and not c.informational}}


def summarise(agent: str, out: dict[str, list[Variant]], target: dict = TARGET) -> dict:
    reference = {v.result.case.name: v.result.passed for v in out.get(ORIGINAL, [])}
    variants = [v for name, vs in out.items() if name != ORIGINAL for v in vs]
    rows = [_row(name, vs) for name, vs in out.items()]
    overall = _row("all variants", variants) if variants else None
    gate = [f"{k} {overall[k]:.3f} < {floor}" for k, floor in target.items() if overall and overall[k] < floor]
    return {"agent": agent, "rows": rows, "all_variants": overall, "target": target, "gate": gate,
            "misses": {name: [_miss(v, reference) for v in vs if not v.result.passed] for name, vs in out.items()}}


def _cells(row: dict) -> list[str]:
    return [row["transform"], str(row["cases"]), str(row["applied"])] + [f"{row[k]:.1%}" for _, k in COLUMNS[2:]]


def markdown(s: dict) -> str:
    head = ["transformation", *(c for c, _ in COLUMNS)]
    targets = ", ".join(f"{k} ≥ {v:.0%}" for k, v in s["target"].items())
    out = ["# Robustness eval", "", f"agent: {s['agent']}; targets over all variants: {targets}", "", "| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    rows = s["rows"] + ([s["all_variants"]] if s["all_variants"] else [])
    out += ["| " + " | ".join(_cells(r)) + " |" for r in rows]
    out += ["", "`applied`: cases the transformation changed; the others are run and counted as they are.", ""]
    for name, misses in s["misses"].items():
        if not misses:
            continue
        out += [f"## Misses: {name} ({len(misses)})", ""]
        for m in misses:
            why = "; ".join(f"{k}: {v}" for k, v in m["checks"].items())
            new = "" if name == ORIGINAL or m["original_passed"] else " (fails on the original too)"
            out.append(f"- {m['case']} (`{m['expected']}` → `{m['got']}`){new}: {why}")
        out.append("")
    out.append(f"Target: {'MET' if not s['gate'] else 'NOT MET — ' + '; '.join(s['gate'])}")
    return "\n".join(out) + "\n"


def table(s: dict) -> str:
    head = ["transformation", *(c for c, _ in COLUMNS)]
    rows = [head] + [_cells(r) for r in s["rows"] + ([s["all_variants"]] if s["all_variants"] else [])]
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows]
    for name, misses in s["misses"].items():
        lines += [f"MISS {name} {m['case']} ({m['expected']} -> {m['got']}): "
                  + "; ".join(f"{k}: {v}" for k, v in m["checks"].items()) for m in misses]
    lines.append("target: " + ("MET" if not s["gate"] else "NOT MET — " + "; ".join(s["gate"])))
    return "\n".join(lines) + "\n"


def as_json(s: dict) -> str:
    return json.dumps(s, indent=2) + "\n"


RENDERERS = {"table": table, "markdown": markdown, "json": as_json}
