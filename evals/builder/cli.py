"""`python -m pathways_workload.evals.builder`: rebuild case folders from their scenario.yaml, or print their timelines."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pathways_workload.evals import scenarios as sc
from pathways_workload.evals.scenarios import ScenarioError

from .core import Builder, build

DESCRIPTION = "Builds a replay folder (logs.json, events.json, pods.json, jobset.json, expected.yaml) from a scenario.yaml."


def main(argv: list[str] | None = None) -> int:
    """Build the named scenarios (or every DIR/*/scenario.yaml) beside themselves; 1 on the first bad scenario."""
    p = argparse.ArgumentParser(prog="python -m pathways_workload.evals.builder", description=DESCRIPTION)
    p.add_argument("scenarios", nargs="*", type=Path, help="scenario.yaml files (output goes beside each)")
    p.add_argument("--all", type=Path, metavar="DIR", help="rebuild every DIR/*/scenario.yaml")
    p.add_argument("--timeline", action="store_true", help="print the computed start-up timeline instead of writing")
    args = p.parse_args(argv)
    paths = list(args.scenarios)
    if args.all:
        paths += sorted(args.all.glob("*/scenario.yaml"))
    if not paths:
        p.error("give scenario files or --all DIR")
    for path in paths:
        try:
            if args.timeline:
                b = Builder(sc.load(path))
                b.run()
                print(f"== {path}\n{b.timeline_report()}")
                continue
            build(path, path.parent)
        except ScenarioError as e:
            print(f"{path}: {e}", file=sys.stderr)
            return 1
        sizes = ", ".join(f"{f.name} {f.stat().st_size // 1024}K" for f in sorted(path.parent.glob("*.json")))
        print(f"built {path.parent}: {sizes}")
    return 0
