"""The pathways-workload command line: the composition root. Commands stay thin and call into skill/ and tools/."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import traceback
import typing
from collections.abc import Mapping

from . import __version__
from .errors import PathwaysWorkloadError, UsageError
from .output import emit as _emit, output_format as _format
from .wiring import Wiring
from .telling.render import FORMATS

EXIT_OK, EXIT_BELOW, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
_KEY_HINT = "set ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL for a proxy)"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # raised, not exited, so main() answers in the requested format
        where = self.prog.removeprefix("pathways-workload").strip()
        err = UsageError(f"{where}: {message}" if where else message, hint=f"see `{self.prog} --help`")
        err.usage = self.format_usage()
        raise err


class _Help(argparse.RawDescriptionHelpFormatter):
    """Descriptions and examples as written; an option's default shown when it has one worth showing."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if "%(default)" not in text and action.default not in (None, False, argparse.SUPPRESS) and action.option_strings:
            text += " (default: %(default)s)"
        return text


# One example (or a few) per subcommand, shown under its --help.
EXAMPLES = {
    "diagnose": """\
  pathways-workload diagnose --replay fixtures/case-001
  pathways-workload diagnose --replay DIR --jobset NAME --format json
  pathways-workload diagnose --project P --location us-east5 --cluster C --jobset NAME --since 2h --deadline 60""",
    "query-logs": """\
  pathways-workload query-logs --replay DIR --filter 'severity>=ERROR textPayload:"FATAL"' --limit 20 --order desc""",
    "list-events": "  pathways-workload list-events --replay DIR --warnings-only --reason FailedScheduling",
    "get-workload": "  pathways-workload get-workload --replay DIR --jobset NAME",
    "timeline": "  pathways-workload timeline --replay DIR --at 2026-11-20T10:30:00Z",
    "explain-class": "  pathways-workload explain-class --failure-class tpu_hardware_failure",
    "classes": "  pathways-workload classes\n  pathways-workload classes --format json",
    "mcp": """\
  pathways-workload mcp
  client configuration: {"mcpServers": {"pathways-workload": {"command": "pathways-workload", "args": ["mcp"]}}}""",
    "ask": '  pathways-workload ask "Why did it fail?" --replay DIR --max-steps 6',
    "eval": "  pathways-workload eval\n  pathways-workload eval heldout/ --format markdown --out out/",
}
# One metavar per kind of value, whichever command takes it.
METAVARS = {"replay": "DIR", "jobset": "NAME", "at": "TIME", "start": "TIME", "end": "TIME", "since": "DURATION",
            "project": "PROJECT", "location": "LOCATION", "cluster": "CLUSTER", "namespace": "NAMESPACE",
            "filter": "FILTER", "limit": "N", "reason": "REASON", "failure_class": "ID", "deadline": "SECONDS"}


def _command(sub, name: str, summary: str, description: str | None = None) -> argparse.ArgumentParser:
    """A subcommand with its one-line summary (in the top-level list), a description and its examples."""
    return sub.add_parser(name, help=summary, description=description or summary[:1].upper() + summary[1:] + ".",
                          epilog="example:\n" + EXAMPLES[name], formatter_class=_Help)


def _add_workload(p: argparse.ArgumentParser) -> None:
    p.add_argument("--replay", metavar="DIR", help="an exported incident folder (gcloud/kubectl JSON files)")
    p.add_argument("--jobset", metavar="NAME", type=_name("--jobset"),
                   help="the JobSet to diagnose (inferred when the data holds only one)")


def _name(flag: str):
    """An argparse type for a name: an empty one is an error, not "infer it" (a script's unset variable)."""
    def check(value: str) -> str:
        if not value.strip():
            raise argparse.ArgumentTypeError(f"{flag} is empty: name a JobSet, or leave the flag out to infer it")
        return value
    check.__name__ = "name"
    return check


def _add_live(p: argparse.ArgumentParser) -> None:
    """Live mode (without --replay): Cloud Logging and the Kubernetes API; see docs/live.md."""
    g = p.add_argument_group("live mode (without --replay; see docs/live.md)")
    g.add_argument("--project", metavar="PROJECT", help="Google Cloud project id whose Cloud Logging holds the logs")
    g.add_argument("--location", metavar="LOCATION", help="cluster location (region or zone), e.g. us-east5")
    g.add_argument("--cluster", metavar="CLUSTER", help="GKE cluster name")
    g.add_argument("--namespace", metavar="NAMESPACE", default="default", help="the JobSet's namespace")
    w = g.add_mutually_exclusive_group()
    w.add_argument("--since", metavar="DURATION", default="2h", help="window ending at --end: 2h, 90m, 1d")
    w.add_argument("--start", metavar="TIME", help="window start, RFC 3339")
    g.add_argument("--end", metavar="TIME", help="window end, RFC 3339 (default: now); also the time stalls are judged at")
    g.add_argument("--no-kube", action="store_true", help="do not call the Kubernetes API; Cloud Logging only")
    g.add_argument("--logging-endpoint", metavar="URL",
                   help="Cloud Logging API endpoint (env PATHWAYS_WORKLOAD_LOGGING_ENDPOINT); http:// means anonymous")
    g.add_argument("--no-metrics", action="store_true", help="do not read Cloud Monitoring's series; logs only")
    g.add_argument("--monitoring-endpoint", metavar="URL", help="Cloud Monitoring gRPC endpoint (env "
                   "PATHWAYS_WORKLOAD_MONITORING_ENDPOINT); http://host:port means plaintext and anonymous")
    g.add_argument("--kube-server", metavar="URL",
                   help="Kubernetes API server URL without auth, e.g. kubectl proxy (env PATHWAYS_WORKLOAD_KUBE_SERVER)")
    g.add_argument("--save", metavar="DIR", help="write everything fetched as a replay folder")
    g.add_argument("--deadline", metavar="SECONDS", type=float, default=120.0,
                   help="wall-time budget for all live reads: what it cuts is named in data_gaps; an endpoint that "
                        "refuses, does not resolve, or denies access fails at once whatever the budget")
    g.add_argument("--verbose", action="store_true",
                   help="print every progress note on stderr (each query, retries, requests left in the quota) even "
                        "when stderr is not a terminal; on a terminal, notes start once a live read takes over 3 s")
    la = p.add_argument_group("Log Analytics (BigQuery SQL over a linked dataset; see docs/log-analytics.md)")
    la.add_argument("--log-analytics", metavar="PROJECT.DATASET",
                    help="read the logs from this dataset's _AllLogs view instead of Cloud Logging's entries.list")
    la.add_argument("--max-bytes", metavar="N", type=int,
                    help="refuse a query whose dry run would scan more than N bytes (default: no limit)")
    la.add_argument("--kube", action="store_true", help="with --log-analytics: also read the Kubernetes API")
    la.add_argument("--bigquery-endpoint", metavar="URL",
                    help="BigQuery API endpoint (env PATHWAYS_WORKLOAD_BIGQUERY_ENDPOINT); http:// means anonymous")


def cmd_diagnose(args: argparse.Namespace) -> int:
    from .api import analyse_replay
    from .telling.explain import build

    analysis = None
    if args.replay:
        analysis = analyse_replay(args.replay, jobset=args.jobset, at=args.at)
        d = build(analysis, logging_requests=0)
    elif args.log_analytics:
        from .diagnose_live import diagnose_log_analytics

        with _heartbeat("[log-analytics] ", args) as hb:
            d = diagnose_log_analytics(args.log_analytics, args.cluster, args.jobset, project=args.project,
                                       location=args.location, namespace=args.namespace, start=args.start,
                                       end=args.end or args.at, since=args.since, max_bytes=args.max_bytes,
                                       kube=args.kube, bigquery_endpoint=args.bigquery_endpoint,
                                       kube_server=args.kube_server, deadline_s=args.deadline, progress=hb.say,
                                       no_metrics=args.no_metrics, monitoring_endpoint=args.monitoring_endpoint)
    elif args.project or args.cluster:
        from .diagnose_live import diagnose_live

        with _heartbeat("[live] ", args) as hb:
            d = diagnose_live(args.project, args.location, args.cluster, args.jobset, namespace=args.namespace,
                              start=args.start, end=args.end or args.at, since=args.since, no_kube=args.no_kube,
                              logging_endpoint=args.logging_endpoint, kube_server=args.kube_server,
                              save_dir=args.save, deadline_s=args.deadline, progress=hb.say,
                              no_metrics=args.no_metrics, monitoring_endpoint=args.monitoring_endpoint)
    else:
        raise PathwaysWorkloadError("diagnose needs --replay DIR, or live: --project P --location L --cluster C --jobset J")
    return _emit(args, _rendered(args, d, analysis))


def _rendered(args: argparse.Namespace, d, analysis) -> str:
    """The diagnosis in the format asked for; the terminal report takes the terminal's colour and width (a file or a
    pipe gets plain text)."""
    from .telling.render import render

    fmt = _format(args, "text")
    color, width = False, None
    if fmt == "text" and not args.output and sys.stdout.isatty():
        from .telling.terminal import WIDTH, wants_color

        color, width = wants_color(True), shutil.get_terminal_size((WIDTH, 24)).columns
    return render(d, fmt, model=analysis.model if analysis else None, color=color, width=width,
                  replay_files=analysis.stats.files if analysis else None)


def _heartbeat(prefix: str, args: argparse.Namespace):
    """Progress on stderr (skill/progress.py): on a terminal once a live read takes over 3 s; --verbose: every note."""
    from .progress import Heartbeat

    return Heartbeat(lambda line: print(line, file=sys.stderr, flush=True), args.deadline, prefix=prefix,
                     enabled=args.verbose or sys.stderr.isatty(), after=0.0 if args.verbose else 3.0)


def cmd_mcp(args: argparse.Namespace) -> int:
    return args.wiring.mcp()


def cmd_ask(args: argparse.Namespace) -> int:
    if not os.environ.get("ANTHROPIC_API_KEY") and not os.environ.get("ANTHROPIC_BASE_URL"):
        raise PathwaysWorkloadError("ask needs ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL for a proxy); run "
                                    "`pathways-workload diagnose` for the deterministic diagnosis",
                                    code="missing_api_key", hint=_KEY_HINT)
    if not args.replay:
        raise PathwaysWorkloadError("ask needs --replay DIR (live mode: --project/--location/--cluster/--jobset)")
    from .ask import ask
    from .redact import redact, redact_obj

    r = ask(redact(args.question), replay=args.replay, jobset=args.jobset, model=args.model, max_steps=args.max_steps,
            max_tokens=args.max_tokens, deadline_s=args.deadline, tools=args.wiring.registry())
    if _format(args, "markdown") == "json":
        return _emit(args, json.dumps(redact_obj(r.to_json_dict()), indent=2, ensure_ascii=False) + "\n")
    cost = "unknown price" if r.cost_usd is None else f"${r.cost_usd:.4f}"
    redundant = f" ({r.redundant_tool_calls} redundant)" if r.redundant_tool_calls else ""
    return _emit(args, f"{r.answer}\n\n[{r.model}: {r.steps} steps, {len(r.tool_calls)} tool calls{redundant}, "
                       f"{r.input_tokens} in / {r.output_tokens} out tokens, {cost}, {r.seconds:.1f}s"
                       + (f"; fell back to the deterministic diagnosis: {r.fallback}" if r.fallback else "") + "]\n")


def cmd_classes(args: argparse.Namespace) -> int:
    from .catalog import CLASSES

    rows = [{"id": c.id, "phase": c.phase, "title": c.title} for c in CLASSES]
    if args.format == "json":
        return _emit(args, json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
    wid, wph = max(len(r["id"]) for r in rows), max(len(r["phase"]) for r in rows)
    return _emit(args, "".join(f"{r['id']:<{wid}}  {r['phase']:<{wph}}  {r['title']}\n" for r in rows))


def _tool_command(name: str):
    def run(args: argparse.Namespace) -> int:
        tool = args.wiring.registry()[name]
        fields = tool.input.model_fields
        payload = {k: v for k, v in vars(args).items() if k in fields and v is not None}
        result = tool.call(payload)
        print(json.dumps(result, indent=2, ensure_ascii=False))
        if "error" not in result:
            return EXIT_OK
        return EXIT_INTERNAL if result["error"].get("code") == "internal" else EXIT_USAGE

    return run


def _add_tool_parsers(sub, tools: Mapping) -> None:
    for name, tool in tools.items():
        if name == "diagnose":
            continue
        cmd = name.replace("_", "-")
        first = tool.description.splitlines()[0].rstrip(".")
        p = _command(sub, cmd, first[:1].lower() + first[1:], tool.description + "\n\nOutput: JSON.")
        for field, info in tool.input.model_fields.items():
            flag = "--" + field.replace("_", "-")
            default = None if info.is_required() or info.default in (None, False) else info.default
            text = (info.description or "") + (f" (default: {default})" if default is not None else "")
            choices = [a for a in typing.get_args(info.annotation) if isinstance(a, str)]
            if info.annotation is bool:
                p.add_argument(flag, dest=field, action="store_true", default=None, help=text)
            elif info.annotation is int:
                p.add_argument(flag, dest=field, type=int, metavar=METAVARS.get(field, "N"), help=text)
            elif choices:
                p.add_argument(flag, dest=field, choices=choices, help=text)
            else:
                p.add_argument(flag, dest=field, required=info.is_required(),
                               metavar=METAVARS.get(field, field.upper()), help=text)
        p.set_defaults(func=_tool_command(name), json_output=True)


def parser(eval_command: bool = False, wiring: Wiring | None = None) -> argparse.ArgumentParser:
    """The CLI's parser; `eval_command` builds the real `eval` command (importing evals), else a placeholder; the
    commands of the layers above come from `wiring`."""
    wiring = wiring or Wiring()
    ap = _Parser(prog="pathways-workload", formatter_class=_Help,
                 description="Find out why a Pathways-on-Cloud workload on GKE failed, and how to fix it.",
                 epilog="example:\n  pathways-workload diagnose --replay fixtures/case-001\n\n"
                        "`pathways-workload COMMAND --help` describes each command; the class ids are in "
                        "docs/taxonomy.md (`pathways-workload classes`).")
    ap.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    ap.set_defaults(wiring=wiring)
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")
    d = _command(sub, "diagnose", "diagnose one JobSet: class, root cause, evidence, fix",
                 "Diagnose one JobSet from an export folder (--replay) or live (--project/--location/--cluster): the\n"
                 "failure class, root cause, cited evidence, timeline and fixes. Exit 0 whatever the verdict; 2 on a\n"
                 "usage or input error; 3 on an internal error.")
    _add_workload(d)
    d.add_argument("--at", metavar="TIME", help="judge stalls as of this RFC 3339 time (default: end of the data)")
    d.add_argument("--format", choices=FORMATS, metavar="{" + ",".join(FORMATS) + "}",
                   help="text: the report for a person (colour on a terminal unless NO_COLOR is set); markdown; json: "
                        "the contract; html: one self-contained page with a timeline picture. Default: text on a "
                        "terminal, else by --output's extension (.txt .md .json .html), json when piped (said on stderr)")
    d.add_argument("--output", metavar="FILE", help="write the output to FILE instead of stdout")
    _add_live(d)
    d.set_defaults(func=cmd_diagnose)
    _add_tool_parsers(sub, wiring.registry())
    c = _command(sub, "classes", "list the failure classes: id, phase, one line each",
                 "List the taxonomy's failure classes from the catalog: id, phase and a one-line description\n"
                 "(docs/taxonomy.md has the whole table; explain-class --failure-class ID the detail).")
    c.add_argument("--format", choices=("markdown", "json", "text"), default="markdown", metavar="{markdown,json}",
                   help="a table, or a JSON array")
    c.add_argument("--output", metavar="FILE", help="write the output to FILE instead of stdout")
    c.set_defaults(func=cmd_classes)
    if wiring.mcp is not None:
        m = _command(sub, "mcp", "run the MCP server (stdio) exposing every tool",
                     "Run the MCP server on stdio: every tool (diagnose, query_logs, list_events, get_workload, timeline,\n"
                     "explain_class), read-only, with the same JSON results as the command line.")
        m.set_defaults(func=cmd_mcp)
    if wiring.tools is not None:
        a = _command(sub, "ask", "ask a question; a Claude model answers with the tools, from the diagnosis",
                     "Ask a question about an incident: a Claude model answers with the read-only tools, starting from the\n"
                     "deterministic diagnosis. Needs ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL).")
        a.add_argument("question")
        _add_workload(a)
        a.add_argument("--model", metavar="MODEL",
                       help="Claude model id (default: $PATHWAYS_WORKLOAD_MODEL or claude-sonnet-4-5)")
        a.add_argument("--max-steps", metavar="N", type=int, default=8, help="at most this many model turns")
        a.add_argument("--max-tokens", metavar="N", type=int, default=4096, help="max output tokens per model turn")
        a.add_argument("--deadline", metavar="SECONDS", type=float, default=300.0, help="wall-time budget")
        a.add_argument("--format", choices=("markdown", "json", "text"), metavar="{markdown,json}",
                       help="default: markdown (the answer as text) on a terminal, json when piped (said on stderr)")
        a.add_argument("--output", metavar="FILE", help="write the output to FILE instead of stdout")
        a.set_defaults(func=cmd_ask)
    _add_eval(sub, eval_command, wiring)
    return ap


EVAL_HELP = "score an agent over recorded incidents (exit 1 below the gate)"


def _add_eval(sub, real: bool, wiring: Wiring) -> None:
    """The `eval` command belongs to the evals package, imported only when that command runs (`real`): the other
    commands never load the harness. Otherwise a placeholder keeps `eval` in the command list."""
    if wiring.eval_register is None:
        return
    if not real:
        sub.add_parser("eval", help=EVAL_HELP)
        return
    register = wiring.eval_register()
    if register is not None:  # the harness is optional at run time; the rest of the CLI works without it
        register(sub, _command)


def _json_output(argv: list[str], args: argparse.Namespace | None, wiring: Wiring) -> bool:
    """Whether an error must be JSON: `--format json` was asked for, or the command is a tool (always JSON). From
    the words alone when they did not parse."""
    tools = {n.replace("_", "-") for n in wiring.registry() if n != "diagnose"}
    if args is not None:
        fmt, command = getattr(args, "format", None), args.command
    else:
        fmt = next((b for a, b in zip(argv, argv[1:]) if a == "--format"), None)
        fmt = next((a.split("=", 1)[1] for a in argv if a.startswith("--format=")), fmt)
        command = next((a for a in argv if not a.startswith("-")), None)
    return command in tools or fmt == "json"


def _fail(err: PathwaysWorkloadError, as_json: bool, usage: str = "") -> int:
    if as_json:
        print(json.dumps(err.as_dict(), indent=2, ensure_ascii=False))
    else:  # one line: a usage error names the command's --help instead of printing the usage block
        hint = err.hint if err.code == "internal" or (usage and err.hint) else ""
        print(f"pathways-workload: {err}" + (f" ({hint})" if hint else ""), file=sys.stderr)
    return EXIT_INTERNAL if err.code == "internal" else EXIT_USAGE


def main(argv: list[str] | None = None, wiring: Wiring | None = None) -> int:
    """The command line. `wiring`: the tool registry, MCP and `eval` from the layers above (the composition root,
    pathways_workload.cli, passes them; `python -m pathways_workload.skill.cli` alone has diagnose and classes)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    wiring = wiring or Wiring()
    try:
        args = parser(eval_command=argv[:1] == ["eval"], wiring=wiring).parse_args(argv)
    except UsageError as err:
        return _fail(err, _json_output(argv, None, wiring), usage=err.usage)
    as_json = _json_output(argv, args, wiring)
    try:
        return args.func(args)
    except PathwaysWorkloadError as err:
        return _fail(err, as_json)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader (e.g. `| head`) went away: not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except Exception as err:  # noqa: BLE001 - a bug must still end in one line; PATHWAYS_WORKLOAD_DEBUG=1 shows it
        if os.environ.get("PATHWAYS_WORKLOAD_DEBUG"):
            traceback.print_exc()
        return _fail(PathwaysWorkloadError(f"internal error: {type(err).__name__}: {err}", code="internal",
                                           hint="set PATHWAYS_WORKLOAD_DEBUG=1 for the traceback"), as_json)


if __name__ == "__main__":
    sys.exit(main())
