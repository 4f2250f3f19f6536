"""The eval of the difference the time series make (issue 42): every stall, survival and interruption incident of the
library judged from its logs only, from its series only (the Kubernetes objects kept, every log entry left out) and
from both; both must never be worse than logs alone. Cases with an audit log are also judged without it, with and
without series (an interruption's own series name it when the audit log was not exported).

    python -m pathways_workload.evals.series_eval [--all] [CASE_DIR ...]

Each case is rebuilt from its scenario with series (evals/builder/metrics.py) whatever its `sources.metrics` says, so
every case in scope is judged all three ways. A verdict is right when class and status are the answer key's."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml

from pathways_workload.evals import builder
from pathways_workload.skill.api import diagnose_replay
from pathways_workload.skill.errors import InputError

ROOT = Path(__file__).resolve().parent.parent
SCOPE = {"workload_stalled", "megascale_hang", "spot_preemption", "host_maintenance", "node_lost", "no_failure_detected"}
SURVIVAL_TAGS = {"red_herring", "survival", "survived"}
WAYS = ("logs", "series", "both")
# the same without the audit log (often not exported): does an interruption's series name it?
NO_AUDIT = ("logs, no audit", "both, no audit")
SERIES = ("metrics-duty-cycle.json", "metrics-hbm.json", "metrics-interruptions.json", "metrics-node-conditions.json",
          "metrics-jobset-restarts.json")


@dataclass
class Judged:
    """One case judged three ways: (class, status) per way, and the answer key's."""

    case: str
    want: tuple[str, str]
    got: dict[str, tuple[str, str]]

    def right(self, way: str) -> bool:
        return self.got.get(way) == self.want

    def score(self, way: str) -> int:
        """2: class and status right; 1: one of them; 0: neither (or no verdict)."""
        got = self.got.get(way)
        return 0 if got is None else (got[0] == self.want[0]) + (got[1] == self.want[1])


def in_scope(case: Path) -> bool:
    exp = yaml.safe_load((case / "expected.yaml").read_text())
    return exp["failure_class"] in SCOPE or bool(SURVIVAL_TAGS & set(exp.get("tags") or []))


def judge(case: Path, work: Path) -> Judged:
    exp = yaml.safe_load((case / "expected.yaml").read_text())
    files = builder.render(case / "scenario.yaml", metrics=True)
    got: dict[str, tuple[str, str]] = {}
    audit = "cloudaudit.googleapis.com" in files.get("logs.json", "")
    for way in WAYS + (NO_AUDIT if audit else ()):
        folder = work / case.name / way.replace(", ", "-").replace(" ", "-")
        folder.mkdir(parents=True)
        for name, text in files.items():
            if name == "expected.yaml" or (way.startswith("logs") and name in SERIES) \
                    or (way == "series" and name == "logs.json"):
                continue
            if name == "logs.json" and way in NO_AUDIT:
                kept = [e for e in json.loads(text) if "cloudaudit.googleapis.com" not in e["logName"]]
                text = json.dumps(kept, indent=2)
            (folder / name).write_text(text)
        try:
            d = diagnose_replay(folder)
        except InputError:
            continue  # no verdict from this data (e.g. series only without a JobSet to name)
        got[way] = (d.failure_class, d.status)
    return Judged(case.name, (exp["failure_class"], exp["status"]), got)


def judge_all(cases: list[Path]) -> list[Judged]:
    """Every case judged the three ways, in a scratch folder removed after."""
    work = Path(tempfile.mkdtemp(prefix="series-eval-"))
    try:
        return [judge(c, work) for c in cases]
    finally:
        shutil.rmtree(work, ignore_errors=True)


def library_cases(every: bool = False) -> list[Path]:
    """The library's cases in scope (stalls, survival, interruptions), or all of them."""
    return sorted(p for p in (ROOT / "fixtures").glob("case-*") if every or in_scope(p))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cases", nargs="*", type=Path, help="case folders (default: the library's cases in scope)")
    ap.add_argument("--all", action="store_true", help="every library case, not only stalls, survival, interruptions")
    args = ap.parse_args(argv)
    cases = args.cases or library_cases(args.all)
    results = judge_all(cases)
    n = len(results)
    for way in WAYS:
        print(f"{way:7} class+status right {sum(r.right(way) for r in results)}/{n}")
    cut = [r for r in results if NO_AUDIT[0] in r.got]
    for way in NO_AUDIT:
        print(f"{way:15} class+status right {sum(r.right(way) for r in cut)}/{len(cut)} (the cases with an audit log)")
    worse = [r for r in results if r.score("both") < r.score("logs")]
    better = [r for r in results if r.score("both") > r.score("logs")]
    print(f"both better than logs alone: {len(better)} ({', '.join(r.case for r in better)})")
    print(f"both worse than logs alone:  {len(worse)} ({', '.join(r.case for r in worse)})")
    for r in results:
        if not all(r.right(w) for w in r.got):
            print(f"  {r.case} want {r.want}: " + "; ".join(f"{w} {r.got.get(w)}" for w in r.got))
    return 1 if worse else 0


if __name__ == "__main__":
    sys.exit(main())
