"""The reliability report: the hostile corpus, the fault matrix, parallel load, and what was lost, from one command.

    python -m pathways_workload.evals.reliability [--json FILE] [--quick]

Every outcome is one of: diagnosis (with its data_gaps), error (a one-line PathwaysWorkloadError), crash (anything
else: a bug), hang (over the time limit). `lost` counts input items neither read nor reported skipped.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
import tracemalloc
from dataclasses import asdict
from pathlib import Path

from .corpus import CORPUS, Hostile
from .outcome import HANG_S, Outcome, bounded, classify_error

__all__ = ["HANG_S", "Outcome", "bounded", "classify_error"]  # defined in .outcome

def run_hostile(h: Hostile, workdir: Path) -> Outcome:
    """Write one corpus folder, diagnose it, and account for every input item."""
    from pathways_workload.skill.api import diagnose_replay
    from pathways_workload.skill.reading.sources.replay import ReplaySource

    folder = Path(workdir) / h.name
    counts = h.make(folder)
    diag, err, secs, done = bounded(lambda: diagnose_replay(folder))
    out = Outcome(h.name, "hang" if not done else classify_error(err)[0], seconds=round(secs, 3),
                  items_in=counts.total if counts else None, known_bug=h.known_bug)
    if not done:
        out.detail = f"no result after {HANG_S:g} s"
        return out
    if err is not None:
        out.detail = classify_error(err)[1]
        return out
    out.failure_class, out.gaps = diag.failure_class, list(diag.data_gaps)
    kept = len(ReplaySource(folder).objects())
    out.accounted = diag.budget.entries_read + diag.budget.entries_skipped + kept
    out.skipped = diag.budget.entries_skipped
    return out


def corpus_report(workdir: Path) -> list[Outcome]:
    return [run_hostile(h, workdir) for h in CORPUS]


# --- the report -------------------------------------------------------------------------------------------------

def peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _section(title: str, rows: list[Outcome]) -> dict:
    tally: dict[str, int] = {}
    for r in rows:
        tally[r.outcome] = tally.get(r.outcome, 0) + 1
    return {"title": title, "tried": len(rows), "outcomes": tally, "lost": sum(r.lost for r in rows),
            "miscounted": sum(r.miscounted for r in rows), "known_bugs": sum(1 for r in rows if r.known_bug),
            "unexpected": sum(1 for r in rows if not r.known_bug and (r.outcome in ("crash", "hang", "wrong")
                                                                        or r.lost or r.miscounted)),
            "rows": [{**asdict(r), "lost": r.lost} for r in rows]}


def build_report(quick: bool = False) -> dict:
    from .faults import fault_report
    from .load import load_report

    tracemalloc.start()
    t0 = time.monotonic()
    sections = []
    with tempfile.TemporaryDirectory(prefix="pw-reliability-") as tmp:
        sections.append(_section("hostile inputs (replay)", corpus_report(Path(tmp))))
    sections.append(_section("faults (live, loopback fakes, real clients)", fault_report()))
    load = load_report(quick=quick)
    _cur, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"sections": sections, "load": load, "seconds": round(time.monotonic() - t0, 1),
            "peak_python_heap_mb": round(peak / (1 << 20), 1), "peak_rss_mb": peak_rss_mb()}


def render(report: dict) -> str:
    lines = []
    for s in report["sections"]:
        tally = ", ".join(f"{k} {v}" for k, v in sorted(s["outcomes"].items()))
        lines.append(f"## {s['title']}: {s['tried']} tried — {tally}; lost {s['lost']}, miscounted {s['miscounted']}, "
                     f"known bugs {s['known_bugs']}; unexpected (crash, hang, loss or miscount outside the known bugs) "
                     f"{s['unexpected']}")
        lines.append("| case | outcome | class | items in | accounted | s | note |")
        lines.append("|---|---|---|---|---|---|---|")
        for r in s["rows"]:
            note = r["known_bug"] and "KNOWN BUG: " + r["known_bug"].split(":")[0] or (r["detail"] or "; ".join(
                g for g in r["gaps"] if not g.startswith("no ")) or "")
            note = " ".join(str(note).split())[:140].replace("|", "/")
            lines.append(f"| {r['name']} | {r['outcome']} | {r['failure_class'] or ''} | {r['items_in'] if r['items_in'] is not None else '-'} "
                         f"| {r['accounted'] if r['accounted'] is not None else '-'} | {r['seconds']} | {note} |")
        lines.append("")
    ld = report["load"]
    lines.append("## load")
    for k, v in ld.items():
        lines.append(f"- {k}: {v}")
    lines.append("")
    lines.append(f"peak Python heap {report['peak_python_heap_mb']} MB (tracemalloc), peak RSS {report['peak_rss_mb']} MB, "
                 f"{report['seconds']} s in all")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m pathways_workload.evals.reliability", description=__doc__.splitlines()[0])
    p.add_argument("--json", metavar="FILE", help="also write the full report as JSON")
    p.add_argument("--quick", action="store_true", help="smaller load figures")
    args = p.parse_args(argv)
    report = build_report(quick=args.quick)
    print(render(report), end="")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    return 0 if not any(s["unexpected"] for s in report["sections"]) else 1


if __name__ == "__main__":
    sys.exit(main())
