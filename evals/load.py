"""Load: several MCP clients calling tools at once, and many live diagnoses in parallel against the loopback fakes.

The functions return what they saw (errors, mismatches against a sequential reference, seconds); the report adds
memory figures. Tests assert on behaviour only.
"""

from __future__ import annotations

import gc
import json
import time
import tracemalloc
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .corpus import ROOT

CASES = [ROOT / "fixtures" / c for c in ("case-001", "case-004", "case-007", "case-009")]


def _calls(case: Path) -> list[tuple[str, dict]]:
    r = str(case)
    return [("diagnose", {"replay": r}), ("query_logs", {"replay": r, "filter": "severity>=ERROR", "limit": 20}),
            ("list_events", {"replay": r, "warnings_only": True}), ("get_workload", {"replay": r}),
            ("timeline", {"replay": r}), ("explain_class", {"failure_class": "host_oom"})]


def _stable(name: str, result: dict) -> str:
    result = dict(result)
    result.pop("budget", None)
    return json.dumps(result, sort_keys=True)


def mcp_concurrent(clients: int = 4, rounds: int = 1, cases: list[Path] | None = None) -> dict:
    """`clients` MCP sessions on one server, each calling every tool on every case at the same time."""
    import anyio
    from mcp import Client

    from pathways_workload.tools.mcp_server import build_server
    from pathways_workload.tools.registry import registry

    cases = cases or CASES
    tools = registry()
    reference = {(c.name, n): _stable(n, tools[n].call(a)) for c in cases for n, a in _calls(c)}
    server = build_server()
    errors: list[str] = []
    mismatches: list[str] = []
    done = 0

    async def one_client(k: int) -> None:
        nonlocal done
        async with Client(server) as client:
            async with anyio.create_task_group() as tg:
                for _ in range(rounds):
                    for c in cases[k % len(cases):] + cases[: k % len(cases)]:
                        for name, args in _calls(c):
                            tg.start_soon(call, client, c, name, args)

    async def call(client, case, name, args) -> None:
        nonlocal done
        r = await client.call_tool(name, args)
        done += 1
        if r.is_error:
            errors.append(f"{name} {case.name}: {r.content[0].text[:200]}")
        elif _stable(name, json.loads(r.content[0].text)) != reference[(case.name, name)]:
            mismatches.append(f"{name} {case.name}")

    async def main() -> None:
        with anyio.fail_after(300):
            async with anyio.create_task_group() as tg:
                for k in range(clients):
                    tg.start_soon(one_client, k)

    t0 = time.monotonic()
    anyio.run(main)
    return {"clients": clients, "calls": done, "errors": errors, "mismatches": mismatches,
            "seconds": round(time.monotonic() - t0, 2)}


def live_parallel(diagnoses: int = 16, threads: int = 8, case: Path | None = None) -> dict:
    """`diagnoses` live diagnoses of one workload at once, `threads` at a time, against one pair of fakes."""
    from pathways_workload.evals.fakes.live_case import LiveCase

    case = case or CASES[0]
    with LiveCase(case) as lv:
        ref = lv.diagnose()
        key = (ref.failure_class, ref.status, [e.id for e in ref.evidence])
        errors: list[str] = []
        mismatches = 0

        def one(_i: int):
            return lv.diagnose()

        t0 = time.monotonic()
        with ThreadPoolExecutor(threads) as pool:
            futures = [pool.submit(one, i) for i in range(diagnoses)]
            for f in futures:
                try:
                    d = f.result(timeout=120)
                except Exception as err:  # noqa: BLE001 - counted; the report shows it
                    errors.append(f"{type(err).__name__}: {err}"[:200])
                    continue
                mismatches += (d.failure_class, d.status, [e.id for e in d.evidence]) != key
        secs = time.monotonic() - t0
        requests = len(lv.logging.list_requests)
    return {"diagnoses": diagnoses, "threads": threads, "errors": errors, "mismatches": mismatches,
            "seconds": round(secs, 2), "entries_list_requests": requests}


def replay_memory(runs: int = 40, case: Path | None = None) -> dict:
    """Python heap after `runs` sequential replay diagnoses, against after the first 5: growth means a leak."""
    from pathways_workload.skill.api import diagnose_replay

    case = case or CASES[0]
    started = tracemalloc.is_tracing()
    if not started:
        tracemalloc.start()
    marks = {}
    for i in range(1, runs + 1):
        diagnose_replay(case)
        if i in (5, runs):
            gc.collect()
            marks[i] = tracemalloc.get_traced_memory()[0]
    peak = tracemalloc.get_traced_memory()[1]
    if not started:
        tracemalloc.stop()
    return {"runs": runs, "heap_after_5_mb": round(marks[5] / 2**20, 1), f"heap_after_{runs}_mb": round(marks[runs] / 2**20, 1),
            "growth_mb": round((marks[runs] - marks[5]) / 2**20, 2), "peak_mb": round(peak / 2**20, 1)}


def load_report(quick: bool = False) -> dict:
    return {"mcp": mcp_concurrent(clients=2 if quick else 6, rounds=1),
            "live": live_parallel(diagnoses=8 if quick else 32, threads=8),
            "replay_memory": replay_memory(runs=15 if quick else 60)}
