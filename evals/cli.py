"""The `eval` subcommand: run an agent over recorded incidents and gate on the scorecard."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .agents import AGENTS
from .harness import load_cases, run_eval
from .report import RENDERERS, as_json, compare, markdown


def register(subparsers) -> None:
    p = subparsers.add_parser("eval", help="score an agent over recorded incidents (exit 1 below the gate)")
    p.add_argument("paths", nargs="*", default=["fixtures"], help="case folders or folders of cases (default: fixtures)")
    p.add_argument("--agent", default="rules", help="rules (the engine) or llm (needs ANTHROPIC_API_KEY)")
    p.add_argument("--repeat", type=int, default=1, metavar="K", help="run each case K times (pass^k)")
    p.add_argument("--format", choices=sorted(RENDERERS), default="table")
    p.add_argument("--out", metavar="DIR", help="also write eval.json and eval.md there")
    p.add_argument("--robustness", action="store_true",
                   help="replay every case under shape transformations that keep its facts, scored per transformation")
    p.add_argument("--transforms", metavar="A,B", help="with --robustness: only these transformations")
    p.add_argument("--cases", type=int, metavar="N", help="with --robustness: N cases spread over the library")
    p.add_argument("--only", metavar="GLOB", help="with --robustness: the cases whose name matches GLOB")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.agent == "llm":
        try:
            import evals.llm_agent  # noqa: F401 - registers itself
        except ImportError:
            pass
        if "llm" not in AGENTS or not (os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_BASE_URL")):
            print("eval --agent llm skipped: set ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL for a replay server)"
                  + ("" if "llm" in AGENTS else "; the LLM agent is not available in this build"), file=sys.stderr)
            return 0
    if args.agent not in AGENTS:
        print(f"pathways-workload: unknown agent {args.agent!r}; choose from {', '.join(sorted(AGENTS))}", file=sys.stderr)
        return 2
    cases = load_cases(args.paths)
    if not cases:
        print(f"pathways-workload: no cases (folders with expected.yaml) under {' '.join(args.paths)}", file=sys.stderr)
        return 2
    if args.robustness:
        return robustness(args, cases)
    result = run_eval(cases, AGENTS[args.agent](), repeat=args.repeat)
    summary = result.summary()
    gate = result.gate(summary)
    if args.agent != "rules":  # the difference against the deterministic engine on the same cases
        rules = run_eval(cases, AGENTS["rules"]())
        summary["versus_rules"] = compare(summary, rules.summary(), {r.case.name: r.passed for r in result.results},
                                          {r.case.name: r.passed for r in rules.results})
    sys.stdout.write(RENDERERS[args.format](summary, gate))
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "eval.json").write_text(as_json(summary, gate))
        (out / "eval.md").write_text(markdown(summary, gate))
    return 1 if gate else 0


def robustness(args: argparse.Namespace, cases) -> int:
    from . import robustness as rb

    cases = rb.select(cases, args.cases, args.only)
    if not cases:
        print(f"pathways-workload: no case matches {args.only!r}", file=sys.stderr)
        return 2
    transforms = [t.strip() for t in args.transforms.split(",") if t.strip()] if args.transforms else None
    try:
        summary = rb.run_robustness(cases, AGENTS[args.agent](), transforms)
    except ValueError as err:
        print(f"pathways-workload: {err}", file=sys.stderr)
        return 2
    sys.stdout.write(rb.RENDERERS[args.format](summary))
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "robustness.json").write_text(rb.as_json(summary))
        (out / "robustness.md").write_text(rb.markdown(summary))
    return 1 if summary["gate"] else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m evals.cli")
    sub = ap.add_subparsers(dest="command", required=True)
    register(sub)
    args = ap.parse_args(["eval", *(sys.argv[1:] if argv is None else argv)])
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
