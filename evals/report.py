"""Renders an eval summary as a terminal table, JSON or Markdown."""

from __future__ import annotations

import json

from .calibration import BRIER_MEANING, CONFIDENT


def _lines(s: dict) -> list[tuple[str, str]]:
    return [
        ("agent", s["agent"]), ("cases", str(s["cases"])), ("pass rate", f"{s['pass_rate']:.1%}"),
        ("top-1 class", f"{s['top1']:.1%}"), ("top-3 class", f"{s['top3']:.1%}"), ("status", f"{s['status']:.1%}"),
        ("entity recall (pass)", f"{s['entity_recall']:.1%}"), ("entity precision (mean)", f"{s['entity_precision_mean']:.1%}"),
        ("evidence recall", f"{s['evidence_recall']:.1%}"), ("fabricated citations", str(s["fabricated_citations"])),
        ("fate right (keys that give one)", "{1}/{0}".format(*s.get("fate", [0, 0]))),
        ("healthy controls correct", "{1}/{0}".format(*s["healthy_controls"])),
        ("injection cases unmoved", "{1}/{0}".format(*s["injection_cases"])),
        (f"pass^{s['repeat']}", f"{s['pass_k']:.1%}"), ("time", f"{s['seconds_total']:.2f} s ({s['seconds_mean']:.3f} s/case)"),
        ("tokens in/out, cost, tool calls", f"{s['tokens']['input']}/{s['tokens']['output']}, ${s['cost_usd']}, "
                                            f"{s['tool_calls']} ({s['redundant_tool_calls']} redundant)"),
    ] + _per_question_line(s)


def _per_question_line(s: dict) -> list[tuple[str, str]]:
    m = s["per_question"]["mean"]
    if not m:
        return []
    return [("per question (mean)", f"{m['steps']} turns, {m['tool_calls']} tool calls ({m['redundant_tool_calls']} "
                                    f"redundant), {m['input_tokens']:.0f}/{m['output_tokens']:.0f} tokens, "
                                    f"${m['cost_usd']:.4f}")]


def _per_question_md(s: dict) -> list[str]:
    rows = s["per_question"]["runs"]
    if not rows:
        return []
    out = ["", "## Spend per question", "",
           "| case | run | turns | tool calls | redundant | tokens in | out | cache read | cost |",
           "|---|---|---|---|---|---|---|---|---|"]
    out += [f"| {x['case']} | {x['run']} | {x['steps']} | {x['tool_calls']} | {x['redundant_tool_calls']} "
            f"| {x['tokens']['input']} | {x['tokens']['output']} | {x['tokens']['cache_read']} | ${x['cost_usd']:.4f} |"
            for x in rows]
    return out


COMPARED = ("pass_rate", "top1", "top3", "status", "entity_recall", "evidence_recall", "seconds_mean")


def compare(agent: dict, rules: dict, agent_passed: dict[str, bool], rules_passed: dict[str, bool]) -> dict:
    """The agent's scorecard against the rules engine's on the same cases: metric deltas and the cases that differ."""
    return {
        "metrics": {m: {"agent": agent[m], "rules": rules[m], "delta": round(agent[m] - rules[m], 4)} for m in COMPARED},
        "only_agent_passed": sorted(c for c, ok in agent_passed.items() if ok and not rules_passed.get(c)),
        "only_rules_passed": sorted(c for c, ok in rules_passed.items() if ok and not agent_passed.get(c)),
    }


def _versus(s: dict) -> list[str]:
    v = s.get("versus_rules")
    if not v:
        return []
    out = ["", "## Against the rules engine (same cases)", "", "| metric | agent | rules | delta |", "|---|---|---|---|"]
    out += [f"| {m} | {x['agent']} | {x['rules']} | {x['delta']:+} |" for m, x in v["metrics"].items()]
    out += ["", "only the agent passed: " + (", ".join(v["only_agent_passed"]) or "none"),
            "only the rules engine passed: " + (", ".join(v["only_rules_passed"]) or "none")]
    return out


def _pct(v: float | None) -> str:
    return "–" if v is None else f"{v:.1%}"


def _calibration_lines(s: dict) -> list[str]:
    c = s["calibration"]
    brier = "–" if c["brier"] is None else f"{c['brier']:.4f}"
    return ["confidence bands (top-1 right/count): "
            + ", ".join(f"{b['band']} {b['correct']}/{b['count']}" + (f" ({b['accuracy']:.0%})" if b["count"] else "")
                        for b in c["bands"]),
            f"Brier score {brier} over {c['scored']} cases ({BRIER_MEANING})"]


def _baseline_line(s: dict) -> str:
    b = s["baselines"]
    return (f"top-1 against baselines: engine {s['top1']:.1%}, most frequent class ({b['most_frequent']['class']}) "
            f"{b['most_frequent']['top1']:.1%}, keyword grep {b['keyword_grep']['top1']:.1%}")


def _calibration_md(s: dict, plot: str | None) -> list[str]:
    c, b = s["calibration"], s["baselines"]
    out = ["", "## Top-1 against two baselines (same cases)", "",
           "| | engine | most frequent class | keyword grep |", "|---|---|---|---|",
           f"| top-1 | {s['top1']:.1%} | {b['most_frequent']['top1']:.1%} (`{b['most_frequent']['class']}`) "
           f"| {b['keyword_grep']['top1']:.1%} |",
           "", "## Calibration", "", "| top-1 confidence | cases | right | top-1 accuracy | mean confidence |",
           "|---|---|---|---|---|"]
    out += [f"| {x['band']} | {x['count']} | {x['correct']} | {_pct(x['accuracy'])} | "
            + ("–" if x["mean_confidence"] is None else f"{x['mean_confidence']:.2f}") + " |" for x in c["bands"]]
    brier = "–" if c["brier"] is None else f"{c['brier']:.4f}"
    out += ["", f"Brier score: **{brier}** over {c['scored']} cases — {BRIER_MEANING}.",
            "", f"Wrong at confidence ≥ {CONFIDENT}: " + (", ".join(c["confident_wrong"]) or "none")]
    if plot:
        out += ["", f"![reliability: top-1 accuracy against confidence, per band]({plot})"]
    return out


def table(s: dict, gate: list[str]) -> str:
    width = max(len(k) for k, _ in _lines(s))
    out = [f"{k.ljust(width)}  {v}" for k, v in _lines(s)]
    out.append("by phase: " + ", ".join(f"{p} {v:.0%}" for p, v in s["pass_rate_by_phase"].items()))
    if s["confusion"]:
        out.append("confusion (expected -> got): " + ", ".join(f"{c['expected']} -> {c['got']} ×{c['count']}" for c in s["confusion"]))
    for f in s["failed"]:
        out.append(f"FAILED {f['case']} ({f['expected']}): " + "; ".join(f"{k}: {v}" for k, v in f["checks"].items()))
    out.append("slowest: " + ", ".join(f"{x['case']} {x['seconds']}s" for x in s["slowest"]))
    out += _calibration_lines(s) + [_baseline_line(s)]
    out += [line for line in _versus(s) if line and not line.startswith(("|---", "## "))]
    out.append("gate: " + ("PASS" if not gate else "FAIL — " + "; ".join(gate)))
    return "\n".join(out) + "\n"


def markdown(s: dict, gate: list[str], plot: str | None = None) -> str:
    """The scorecard in Markdown; `plot` names a reliability SVG next to it to show in the calibration section."""
    out = ["# Eval scorecard", "", "| metric | value |", "|---|---|"]
    out += [f"| {k} | {v} |" for k, v in _lines(s)]
    out += ["", "## Pass rate by phase", "", "| phase | pass rate |", "|---|---|"]
    out += [f"| {p} | {v:.1%} |" for p, v in s["pass_rate_by_phase"].items()]
    out += ["", "## Confusion (off-diagonal)", ""]
    out += [f"- `{c['expected']}` → `{c['got']}` ×{c['count']}" for c in s["confusion"]] or ["- none"]
    out += ["", "## Failed cases", ""]
    out += [f"- {f['case']} (`{f['expected']}`): " + "; ".join(f"{k}: {v}" for k, v in f["checks"].items())
            for f in s["failed"]] or ["- none"]
    out += _calibration_md(s, plot)
    out += _per_question_md(s)
    out += _versus(s)
    out += ["", f"Gate: {'PASS' if not gate else 'FAIL — ' + '; '.join(gate)}", ""]
    return "\n".join(out)


def as_json(s: dict, gate: list[str]) -> str:
    return json.dumps({**s, "gate": {"passed": not gate, "failures": gate}}, indent=2) + "\n"


RENDERERS = {"table": table, "markdown": markdown, "json": as_json}
