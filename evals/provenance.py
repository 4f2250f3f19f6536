"""Where the catalog's knowledge comes from (issue 28, item 3): every signature with its provenance, and how many
cases each one matches.

    python -m pathways_workload.evals.provenance [--cases fixtures/ heldout/] [--json]

For every Pattern of every class, symptom and milestone: its `origin` (a recording id or a public URL) and `example`,
whether the example matches, and the number of cases (folders with expected.yaml) whose logs it matches at least once.
The report's counts are the issue's figures: patterns without provenance, patterns that match exactly one case,
patterns that match none.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import orjson
import re2

from pathways_workload.skill.catalog import CLASSES, MILESTONES, SYMPTOMS
from pathways_workload.skill.catalog.types import Pattern

ROOT = Path(__file__).resolve().parent.parent


def patterns() -> list[tuple[str, Pattern]]:
    """(owner, pattern) for every signature of the catalog: class patterns, symptoms and milestones."""
    out = [(c.id, p) for c in CLASSES for p in c.patterns]
    out += [(f"symptom:{s.id}", p) for s in SYMPTOMS for p in s.patterns]
    out += [(f"milestone:{m.id}", m.pattern) for m in MILESTONES]
    return out


def _texts(case: Path) -> list[str]:
    texts = []
    for f in sorted(case.glob("*.json")):
        try:
            doc = orjson.loads(f.read_bytes())
        except orjson.JSONDecodeError:
            continue
        items = doc if isinstance(doc, list) else (doc.get("items") or [doc]) if isinstance(doc, dict) else []
        for e in items:
            if isinstance(e, dict):
                t = e.get("textPayload") or e.get("message") or json.dumps(e.get("jsonPayload") or e, sort_keys=True)
                texts.append(str(t))
    return texts


def report(case_roots: list[Path]) -> dict:
    cases = sorted({p.parent for r in case_roots for p in r.rglob("expected.yaml")})
    corpus = {c: "\n".join(_texts(c)) for c in cases}
    rows: list[dict] = []
    for owner, p in patterns():
        try:
            rx = re2.compile("(?m)" + p.regex, options=_opts())  # as the engine reads it: ^ at each line of the corpus
        except re2.error:
            rx = None
        hits = [c.name for c, text in corpus.items() if rx is not None and rx.search(text)]
        rows.append({"owner": owner, "regex": p.regex, "origin": p.origin, "example": p.example,
                     "example_matches": bool(p.example and rx is not None and rx.search(p.example)),
                     "cases": len(hits), "case_names": hits[:5]})
    n = len(rows)
    cls = [r for r in rows if ":" not in r["owner"]]
    return {"class_patterns": len(cls), "class_match_one_case": sum(1 for r in cls if r["cases"] == 1),
            "class_match_no_case": sum(1 for r in cls if r["cases"] == 0), "patterns": n, "without_provenance": sum(1 for r in rows if not r["origin"] or not r["example"]),
            "match_one_case": sum(1 for r in rows if r["cases"] == 1),
            "match_no_case": sum(1 for r in rows if r["cases"] == 0),
            "cases": len(cases), "rows": rows}


def _opts() -> re2.Options:
    o = re2.Options()
    o.max_mem = 64 << 20
    return o


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pathways_workload.evals.provenance", description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", nargs="*", type=Path, default=[ROOT / "fixtures", ROOT / "heldout"])
    ap.add_argument("--json", action="store_true", help="print every row as JSON")
    a = ap.parse_args(argv)
    r = report(a.cases)
    if a.json:
        print(json.dumps(r, indent=2))
        return 0
    print(f"{r['patterns']} patterns over {r['cases']} cases: without provenance {r['without_provenance']}, "
          f"matching exactly one case {r['match_one_case']} ({r['match_one_case'] / r['patterns']:.0%}), "
          f"matching none {r['match_no_case']}; class patterns {r['class_patterns']}: one case {r['class_match_one_case']}, "
          f"none {r['class_match_no_case']} (object facts are matched as their raw JSON, so 'none' is an upper bound)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
