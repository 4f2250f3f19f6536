"""The `eval` subcommand: run an agent over recorded incidents and gate on the scorecard."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from pathways_workload.skill.errors import InputError, PathwaysWorkloadError, UsageError

from .agents import AGENTS
from .calibration import Band, reliability_svg
from .harness import load_cases, run_eval
from .report import RENDERERS, as_json, compare, markdown


def register(subparsers, command=None) -> None:
    """Add `eval` to a command line; `command(sub, name, summary, description)` makes the parser (skill.cli's)."""
    summary = "score an agent over recorded incidents (exit 1 below the gate)"
    description = ("Score an agent over recorded incidents (case folders with expected.yaml): class, status, evidence,\n"
                   "entities, fixes, fabricated citations; exit 1 below the gate, 2 on an error. Without a folder it\n"
                   "scores the bundled fixtures/ of the source checkout (they are not in the wheel).")
    p = command(subparsers, "eval", summary, description) if command else subparsers.add_parser("eval", help=summary)
    p.add_argument("paths", nargs="*", metavar="DIR",
                   help="case folders or folders of cases (default: the checkout's bundled fixtures/)")
    p.add_argument("--agent", default="rules", metavar="{rules,llm}",
                   help="rules (the engine) or llm (a Claude model; needs ANTHROPIC_API_KEY)")
    p.add_argument("--repeat", type=int, default=1, metavar="K", help="run each case K times (pass^k)")
    p.add_argument("--format", choices=sorted(RENDERERS), default="table", help="how the scorecard is printed")
    p.add_argument("--out", metavar="DIR", help="also write eval.json, eval.md and reliability.svg there")
    p.add_argument("--robustness", action="store_true",
                   help="replay every case under shape transformations that keep its facts, scored per transformation")
    p.add_argument("--noise", action="store_true",
                   help="replay every case with benign noise added (start-up warnings, quantities that look like codes, "
                        "errors the run survives), scored per kind: no verdict may change")
    p.add_argument("--early-export", action="store_true",
                   help="cut every failing case at its first cause line + 60 s and + 300 s (logs and events only, "
                        "the Pod and JobSet snapshots dropped), as an export made when the alert fires: none may be "
                        "called healthy")
    p.add_argument("--transforms", metavar="A,B", help="with --robustness or --noise: only these transformations / kinds")
    p.add_argument("--cases", type=int, metavar="N",
                   help="with --robustness, --noise or --early-export: N cases spread over the library")
    p.add_argument("--only", metavar="GLOB",
                   help="with --robustness, --noise or --early-export: the cases whose name matches GLOB")
    p.set_defaults(func=run)


def bundled_fixtures() -> Path:
    """The recorded incidents beside the package in a source checkout, wherever the command runs from."""
    folder = Path(__file__).resolve().parent.parent / "fixtures"
    if not folder.is_dir():
        raise InputError("no case folders given, and the bundled fixtures/ is not here: it ships with the source "
                         "checkout, not the wheel", hint="give case folders: pathways-workload eval CHECKOUT/fixtures")
    return folder


def run(args) -> int:
    if args.agent == "llm":
        try:
            import pathways_workload.evals.llm_agent  # noqa: F401 - read as evals.llm_agent
            from pathways_workload import evals  # noqa: F401 - registers itself
        except ImportError:
            pass
        if "llm" not in AGENTS:
            raise PathwaysWorkloadError("eval --agent llm: the LLM agent is not available in this build",
                                        code="agent_unavailable", hint="pip install anthropic")
        if not (os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_BASE_URL")):
            raise PathwaysWorkloadError("eval --agent llm needs ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL for a "
                                        "replay server)", code="missing_api_key",
                                        hint="set ANTHROPIC_API_KEY, or score the engine with --agent rules")
    if args.agent not in AGENTS:
        raise UsageError(f"eval: unknown agent {args.agent!r}; choose from {', '.join(sorted(AGENTS))}")
    paths = args.paths or [str(bundled_fixtures())]
    cases = load_cases(paths)
    if not cases:
        raise InputError(f"no cases (folders with expected.yaml) under {' '.join(paths)}")
    if sum(map(bool, (args.robustness, args.noise, args.early_export))) > 1:
        raise UsageError("eval: choose one of --robustness, --noise and --early-export")
    if args.early_export:
        return early_export(args, cases)
    if args.robustness or args.noise:
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
        (out / "eval.md").write_text(markdown(summary, gate, plot="reliability.svg"))
        (out / "reliability.svg").write_text(_plot(summary, args.paths))
    return 1 if gate else 0


def _plot(summary: dict, paths: list[str]) -> str:
    """The reliability plot of a summary's calibration bands, titled with what was run."""
    c = summary["calibration"]
    bs = [Band.from_dict(b) for b in c["bands"]]
    where = " ".join(Path(p).name or p for p in paths)[:60]
    return reliability_svg(bs, f"Reliability: {where} ({summary['agent']}, {c['scored']} cases)")


def robustness(args: argparse.Namespace, cases) -> int:
    from . import robustness as rb

    cases = rb.select(cases, args.cases, args.only)
    if not cases:
        raise InputError(f"no case matches {args.only!r}")
    transforms = [t.strip() for t in args.transforms.split(",") if t.strip()] if args.transforms else None
    try:
        summary = rb.run_robustness(cases, AGENTS[args.agent](), transforms, noise=args.noise)
    except ValueError as err:
        raise InputError(str(err)) from None
    sys.stdout.write(rb.RENDERERS[args.format](summary))
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        stem = "noise" if args.noise else "robustness"
        (out / f"{stem}.json").write_text(rb.as_json(summary))
        (out / f"{stem}.md").write_text(rb.markdown(summary))
    return 1 if summary["gate"] else 0


def early_export(args: argparse.Namespace, cases) -> int:
    from . import early

    if args.agent != "rules":
        raise UsageError("eval --early-export scores the rules engine (--agent rules)")
    cases = early.select(cases, args.cases, args.only)
    if not cases:
        raise InputError(f"no case matches {args.only!r}")
    fmt = args.format if args.format in early.RENDERERS else "table"
    summary = early.run_early(cases, AGENTS[args.agent]())
    sys.stdout.write(early.RENDERERS[fmt](summary))
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "early-export.json").write_text(early.as_json(summary))
        (out / "early-export.md").write_text(early.markdown(summary))
    return 1 if summary["gate"] else 0


def main(argv: list[str] | None = None) -> int:
    """`python -m pathways_workload.evals.cli ARGS` is `pathways-workload eval ARGS` (same errors and exit codes)."""
    from pathways_workload.skill.cli import main as cli_main
    from pathways_workload.skill.wiring import Wiring

    return cli_main(["eval", *(sys.argv[1:] if argv is None else argv)], wiring=Wiring(eval_register=lambda: register))


if __name__ == "__main__":
    sys.exit(main())
