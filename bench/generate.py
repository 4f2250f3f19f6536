"""Synthetic incidents at fleet scale, written by the fixtures' own builder (evals/builder.py).

    python -m pathways_workload.bench.generate --entries 100000 --out /tmp/inc-100k
    python -m pathways_workload.bench.generate --slices 16 --hosts 16 --duration 2h --entries 1000000 --out /tmp/inc-1m

One multi-slice JobSet runs healthy (worker INFO chatter every couple of seconds per host, client step lines,
start-up milestones, events, kubelet housekeeping); at `fail_at` one host takes a fatal TPU chip error, the
other workers time out on heartbeats and the JobSet fails. The chatter period is chosen so the export holds
about the number of entries asked for.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml

from pathways_workload.evals import scenarios as sc
from pathways_workload.evals.builder import Builder, dump

# (slices, hosts per slice, duration) per size; 1M is about 256 hosts over 2 hours (the figure), 10M 512 over 4.
SHAPES = {10_000: (2, 8, "30m"), 100_000: (4, 16, "1h"), 1_000_000: (16, 16, "2h"), 10_000_000: (32, 16, "4h")}
CHUNK = 20_000  # entries per json.dumps call when streaming logs.json
FAILURE_CLASS = "tpu_hardware_failure"


@dataclass(frozen=True)
class Shape:
    """One synthetic incident: fleet size, span, target volume, where and when the failure lands."""

    entries: int
    slices: int
    hosts: int
    duration: str
    fail_at: str = "end-12m"
    fail_slice: int = -1  # -1: the last slice
    fail_host: int = -1  # -1: the middle host

    @property
    def name(self) -> str:
        return f"bench-{self.entries}-{self.slices}x{self.hosts}-{self.duration}"

    @property
    def chatter_seconds(self) -> float:
        """The per-host worker INFO period that yields about `entries` lines over the run."""
        total = sc.parse_duration(self.duration) / sc.NS
        at = self.fail_at
        fail = total - sc.parse_duration(at[4:]) / sc.NS if at.startswith("end-") else sc.parse_duration(at[1:]) / sc.NS
        span = min(total, fail + 92) - 120  # workers log from ~2 min in until the JobSet fails (chip+1m32s)
        return max(0.2, self.slices * self.hosts * span / self.entries)


def shape_for(entries: int, **over) -> Shape:
    """The preset shape nearest to `entries` (by ratio), with any field overridden."""
    near = min(SHAPES, key=lambda n: abs((entries / n) - 1) if entries >= n else abs((n / entries) - 1))
    s, h, d = SHAPES[near]
    base: dict[str, Any] = dict(entries=entries, slices=s, hosts=h, duration=d)
    base.update({k: v for k, v in over.items() if v is not None})
    return Shape(**base)


def scenario(shape: Shape) -> dict:
    """The scenario.yaml (as a dict) of one shape: a fatal chip error and its heartbeat cascade."""
    fs = shape.slices - 1 if shape.fail_slice < 0 else shape.fail_slice
    fh = shape.hosts // 2 if shape.fail_host < 0 else shape.fail_host
    bad = f"worker[{fs}][{fh}]"
    return {
        "name": shape.name,
        "description": f"Synthetic {shape.slices}x{shape.hosts}-host run; {bad} takes a fatal chip error.",
        "workload": {"jobset": "lm70b-pt-scale", "project": "halcyon-ml-prod", "location": "us-east5-b",
                     "cluster": "tpu-east5-a", "slices": shape.slices, "hosts_per_slice": shape.hosts,
                     "accelerator": "tpu-v6e-slice", "topology": "4x4", "chips_per_host": 4,
                     "server_tag": "jax-0.7.2", "start": "2026-11-20T08:00:00Z", "end": f"+{shape.duration}"},
        "background": {"progress": "maxtext", "step_seconds": 2.2, "log_every": 10,
                       "worker_chatter_minutes": round(shape.chatter_seconds / 60, 6)},
        "incident": [
            {"at": shape.fail_at, "key": "chip", "kind": "log", "pod": bad, "glog": "E synchronous_driver.cc:820",
             # libtpu's fatal-error line as the MaxText maxtest guide quotes it (issue 28: a sourced wording)
             "text": "6x2x0_SC1: *** A program or fatal error occurred, all pending programs will fail, and results may be "
                     "corrupted. This is likely an XLA compiler bug or your job hit a bad TPU hardware. Physical location: "
                     "tpu1:pe2:1\n[/dev/vfio/2 TPU1(2,1,0)] !!!! FATAL ERROR !!!!\n"},
            {"at": "chip+2s", "kind": "log", "pod": bad, "glog": "E tpu_program.cc:1688",
             "text": "INTERNAL: Accelerator device halted prematurely, perhaps due to an on-device check-failure. "
                     "Node 0 halted unexpectedly at tag:pc TensorCoreSequencer:1:0x1d9; observed errors are: [Hardware]"},
            {"at": "chip+35s", "kind": "log", "pods": "workers", "except": bad, "glog": "E megascale_context.cc:317",
             "text": f"DEADLINE_EXCEEDED: Heartbeat to {{host:{bad}}}:29005 timed out after 60s; peer marked unhealthy "
                     f"(slice {fs}, task {fh})",
             "repeat": {"every": "10s", "count": 6}},
            {"at": "chip+1m5s", "kind": "log", "pod": "head", "container": "pathways-rm",
             "glog": "E resource_manager.cc:902",
             "text": f"Task {{host:{bad}}}:29005 (slice {fs}, task {fh}) missed heartbeats for 65s; "
                     f"marking slice {fs} unavailable"},
            {"at": "chip+1m20s", "kind": "log", "pod": "head",
             "text": "jax.errors.JaxRuntimeError: DEADLINE_EXCEEDED: Failed to execute program on slice "
                     f"{fs}: task {{host:{bad}}}:29005 is unreachable (heartbeat timeout)"},
            {"at": "chip+1m25s", "kind": "exit", "pod": "head", "exit_code": 1},
            {"at": "chip+1m26s", "kind": "exit", "pod": bad, "exit_code": 1},
            {"at": "chip+1m32s", "kind": "jobset", "condition": "Failed", "reason": "ReachedMaxRestarts",
             "first_failed_job": "pathways-head-0"},
        ],
        "expected": {"failure_class": FAILURE_CLASS, "status": "failed",
                     "root_cause_entities": [{"kind": "Pod", "of": "chip"}, {"kind": "Node", "of": "chip"}],
                     "evidence": ["chip"]},
    }


def write(shape: Shape, out: Path) -> dict:
    """Build the incident into `out` (logs.json streamed in chunks, byte-identical to the builder's dump)."""
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scenario.yaml"
        path.write_text(yaml.safe_dump(scenario(shape), sort_keys=False))
        b = Builder(sc.load(path))
        files = b.run()
    expected = b.resolve_expected(files)
    entries = files.pop("logs.json", [])
    with open(out / "logs.json", "w") as f:
        f.write("[\n")
        for i in range(0, len(entries), CHUNK):
            text = json.dumps(entries[i:i + CHUNK], indent=2, sort_keys=True, ensure_ascii=False)
            f.write(("" if i == 0 else ",\n") + text[2:-2])
        f.write("\n]\n")
    for name, data in files.items():
        (out / name).write_text(dump(name, data))
    meta = {"shape": asdict(shape), "entries": len(entries), "expected": expected}
    (out / "pathways_workload.bench.meta").write_text(json.dumps(meta, indent=2) + "\n")
    return meta


def ensure(shape: Shape, root: Path) -> tuple[Path, dict]:
    """The incident folder of a shape under root, generated once and reused (keyed by the shape)."""
    folder = root / shape.name
    meta = folder / "pathways_workload.bench.meta"
    if meta.exists():
        return folder, json.loads(meta.read_text())
    return folder, write(shape, folder)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pathways_workload.bench.generate", description=__doc__.split("\n\n")[0])
    ap.add_argument("--entries", type=int, default=10_000, help="about how many log entries")
    ap.add_argument("--slices", type=int)
    ap.add_argument("--hosts", type=int, help="hosts (TPU VMs) per slice")
    ap.add_argument("--duration", help="run length before the export, e.g. 2h")
    ap.add_argument("--fail-at", help="when the chip fails, e.g. end-12m or +40m")
    ap.add_argument("--fail-slice", type=int)
    ap.add_argument("--fail-host", type=int)
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    shape = shape_for(a.entries, slices=a.slices, hosts=a.hosts, duration=a.duration, fail_at=a.fail_at,
                      fail_slice=a.fail_slice, fail_host=a.fail_host)
    meta = write(shape, a.out)
    print(f"{a.out}: {meta['entries']} entries, {shape.slices}x{shape.hosts} hosts over {shape.duration}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
