"""The pathways-workload command line: the composition root. Commands stay thin and call into skill/ and tools/."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import traceback

from .errors import PathwaysWorkloadError

EXIT_OK, EXIT_BELOW, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


def _add_workload(p: argparse.ArgumentParser) -> None:
    p.add_argument("--replay", metavar="DIR", help="an exported incident folder (gcloud/kubectl JSON files)")
    p.add_argument("--jobset", help="the JobSet to diagnose (inferred when the data holds only one)")


def _add_live(p: argparse.ArgumentParser) -> None:
    """Live mode (without --replay): Cloud Logging and the Kubernetes API; see docs/live.md."""
    g = p.add_argument_group("live mode (without --replay; see docs/live.md)")
    g.add_argument("--project", help="Google Cloud project id whose Cloud Logging holds the logs")
    g.add_argument("--location", help="cluster location (region or zone), e.g. us-east5")
    g.add_argument("--cluster", help="GKE cluster name")
    g.add_argument("--namespace", default="default", help="the JobSet's namespace (default: default)")
    w = g.add_mutually_exclusive_group()
    w.add_argument("--since", default="2h", help="window ending at --end (default now): 2h, 90m, 1d (default 2h)")
    w.add_argument("--start", metavar="T", help="window start, RFC 3339")
    g.add_argument("--end", metavar="T", help="window end, RFC 3339 (default: now); also the time stalls are judged at")
    g.add_argument("--no-kube", action="store_true", help="do not call the Kubernetes API; Cloud Logging only")
    g.add_argument("--logging-endpoint", metavar="URL",
                   help="Cloud Logging API endpoint (env PATHWAYS_WORKLOAD_LOGGING_ENDPOINT); http:// means anonymous")
    g.add_argument("--kube-server", metavar="URL",
                   help="Kubernetes API server URL without auth, e.g. kubectl proxy (env PATHWAYS_WORKLOAD_KUBE_SERVER)")
    g.add_argument("--save", metavar="DIR", help="write everything fetched as a replay folder")
    g.add_argument("--deadline", type=float, default=120.0, help="seconds for the whole live read (default 120)")


def cmd_diagnose(args: argparse.Namespace) -> int:
    from .api import analyse_replay
    from .explain import build
    from .report import render_markdown

    analysis = None
    if args.replay:
        analysis = analyse_replay(args.replay, jobset=args.jobset, at=args.at)
        d = build(analysis, logging_requests=0)
    elif args.project or args.cluster:
        from .diagnose_live import diagnose_live

        d = diagnose_live(args.project, args.location, args.cluster, args.jobset, namespace=args.namespace,
                          start=args.start, end=args.end or args.at, since=args.since, no_kube=args.no_kube,
                          logging_endpoint=args.logging_endpoint, kube_server=args.kube_server, save_dir=args.save,
                          deadline_s=args.deadline, progress=lambda msg: print(f"[live] {msg}", file=sys.stderr))
    else:
        raise PathwaysWorkloadError("diagnose needs --replay DIR, or live: --project P --location L --cluster C --jobset J")
    from .redact import redact, redact_obj

    fmt = args.format or ("markdown" if sys.stdout.isatty() else "json")
    if fmt == "json":  # excerpts are redacted already; this covers every other field a log value can reach
        print(json.dumps(redact_obj(d.to_json_dict()), indent=2, ensure_ascii=False))
    elif fmt == "html":  # one self-contained page: the report and the swimlane picture (skill/html.py)
        from .html import render_html

        files = analysis.stats.files if analysis else None
        print(render_html(d, analysis.model if analysis else None, replay_files=files), end="")
    else:
        files = analysis.stats.files if analysis else None
        print(redact(render_markdown(d, replay_files=files)), end="")
    return EXIT_OK


def cmd_mcp(args: argparse.Namespace) -> int:
    from tools.mcp_server import main as serve

    return serve()


def cmd_ask(args: argparse.Namespace) -> int:
    if not os.environ.get("ANTHROPIC_API_KEY") and not os.environ.get("ANTHROPIC_BASE_URL"):
        print("pathways-workload: ask needs ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL for a proxy); "
              "run `pathways-workload diagnose` for the deterministic diagnosis", file=sys.stderr)
        return EXIT_USAGE
    if not args.replay:
        raise PathwaysWorkloadError("ask needs --replay DIR (live mode: --project/--location/--cluster/--jobset)")
    from .ask import ask
    from .redact import redact, redact_obj

    r = ask(redact(args.question), replay=args.replay, jobset=args.jobset, model=args.model, max_steps=args.max_steps,
            max_tokens=args.max_tokens, deadline_s=args.deadline)
    if args.format == "json" or (args.format is None and not sys.stdout.isatty()):
        print(json.dumps(redact_obj(r.to_json_dict()), indent=2, ensure_ascii=False))
    else:
        cost = "unknown price" if r.cost_usd is None else f"${r.cost_usd:.4f}"
        print(r.answer)
        redundant = f" ({r.redundant_tool_calls} redundant)" if r.redundant_tool_calls else ""
        print(f"\n[{r.model}: {r.steps} steps, {len(r.tool_calls)} tool calls{redundant}, {r.input_tokens} in / "
              f"{r.output_tokens} out tokens, {cost}, {r.seconds:.1f}s"
              + (f"; fell back to the deterministic diagnosis: {r.fallback}" if r.fallback else "") + "]")
    return EXIT_OK


def _tool_command(name: str):
    def run(args: argparse.Namespace) -> int:
        from tools.registry import registry

        tool = registry()[name]
        fields = tool.input.model_fields
        payload = {k: v for k, v in vars(args).items() if k in fields and v is not None}
        result = tool.call(payload)
        print(json.dumps(result, indent=2, ensure_ascii=False))
        return EXIT_USAGE if "error" in result else EXIT_OK

    return run


def _add_tool_parsers(sub) -> None:
    from tools.registry import registry

    for name, tool in registry().items():
        if name == "diagnose":
            continue
        p = sub.add_parser(name.replace("_", "-"), help=tool.description.splitlines()[0])
        for field, info in tool.input.model_fields.items():
            flag = "--" + field.replace("_", "-")
            if info.annotation is bool:
                p.add_argument(flag, dest=field, action="store_true", default=None, help=info.description)
            elif info.annotation is int:
                p.add_argument(flag, dest=field, type=int, help=info.description)
            else:
                p.add_argument(flag, dest=field, required=info.is_required(), help=info.description)
        p.set_defaults(func=_tool_command(name))


def parser(eval_command: bool = False) -> argparse.ArgumentParser:
    """The CLI's parser; `eval_command` builds the real `eval` command (importing evals), else a placeholder."""
    ap = argparse.ArgumentParser(prog="pathways-workload",
                                 description="Find out why a Pathways-on-Cloud workload on GKE failed, and how to fix it.")
    sub = ap.add_subparsers(dest="command", required=True)
    d = sub.add_parser("diagnose", help="diagnose one JobSet: class, root cause, evidence, fix")
    _add_workload(d)
    d.add_argument("--at", metavar="TIME", help="judge stalls as of this RFC 3339 time (default: end of the data)")
    d.add_argument("--format", choices=("json", "markdown", "html"),
                   help="default: markdown on a terminal, json otherwise; html: one self-contained page with a "
                        "timeline picture (redirect it to a file)")
    _add_live(d)
    d.set_defaults(func=cmd_diagnose)
    _add_tool_parsers(sub)
    m = sub.add_parser("mcp", help="run the MCP server (stdio) exposing every tool")
    m.set_defaults(func=cmd_mcp)
    a = sub.add_parser("ask", help="ask a question; a Claude model answers with the tools, from the diagnosis")
    a.add_argument("question")
    _add_workload(a)
    a.add_argument("--model", help="Claude model id (default: $PATHWAYS_WORKLOAD_MODEL or claude-sonnet-4-5)")
    a.add_argument("--max-steps", type=int, default=8, help="at most this many model turns (default 8)")
    a.add_argument("--max-tokens", type=int, default=4096, help="max output tokens per model turn (default 4096)")
    a.add_argument("--deadline", type=float, default=300.0, help="wall-time budget in seconds (default 300)")
    a.add_argument("--format", choices=("json", "text"), help="default: text on a terminal, json otherwise")
    a.set_defaults(func=cmd_ask)
    _add_eval(sub, eval_command)
    return ap


EVAL_HELP = "score an agent over recorded incidents (exit 1 below the gate)"


def _add_eval(sub, real: bool) -> None:
    """The `eval` command belongs to the evals package, imported only when that command runs (`real`): the other
    commands never load the harness. Otherwise a placeholder keeps `eval` in the command list."""
    if not real:
        if importlib.util.find_spec("evals") is not None:
            sub.add_parser("eval", help=EVAL_HELP)
        return
    try:
        from evals.cli import register
    except ImportError:  # the harness is optional at run time; the rest of the CLI works without it
        return
    register(sub)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser(eval_command=argv[:1] == ["eval"]).parse_args(argv)
    try:
        return args.func(args)
    except PathwaysWorkloadError as err:
        print(f"pathways-workload: {err}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader (e.g. `| head`) went away: not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except Exception as err:  # noqa: BLE001 - a bug must still end in one line; PATHWAYS_WORKLOAD_DEBUG=1 shows it
        if os.environ.get("PATHWAYS_WORKLOAD_DEBUG"):
            traceback.print_exc()
        print(f"pathways-workload: internal error: {type(err).__name__}: {err} "
              "(set PATHWAYS_WORKLOAD_DEBUG=1 for the traceback)", file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
