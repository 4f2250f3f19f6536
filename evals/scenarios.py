"""The compact `scenario.yaml` format: loading, validation, times, pod references. See fixtures/README.md."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

NS = 1_000_000_000

WORKLOAD_DEFAULTS: dict[str, Any] = {
    "jobset": None,
    "namespace": "default",
    "project": None,
    "project_number": None,
    "location": "us-east5-b",
    "cluster": None,
    "slices": 1,
    "hosts_per_slice": 4,
    "accelerator": "tpu-v6e-slice",
    "topology": "4x4",
    "chips_per_host": 4,
    "server_tag": "latest",
    "proxy_tag": None,
    "user_image": None,
    "jax_version": "0.7.2",
    "start": None,
    "end": "+45m",
    "max_restarts": 0,
    "spot": False,
    "gcs_scratch": None,
    "cpu_nodes": 2,
    "tpu_nodes": True,
    "other_nodes": 0,
    "worker_node_selector": {},
    "rm_instance_count": None,
    "worker_rm_address": None,
    "backend_target": None,
    "server_image": None,  # a custom server image (RM + workers) instead of IMAGE_BASE/server:<server_tag>
    "colocated_python": None,  # sidecar tag (or a full image): workers get a colocated-python-sidecar native sidecar
    "pathwaysutils": True,  # false: the client never prints "pathwaysutils: Detected Pathways-on-Cloud backend"
    "queue": "multislice-queue",
    "image_base": None,  # the Pathways image repository instead of IMAGE_BASE (e.g. .../cloud-tpu-v2-releases/pathways)
    "client_command": None,  # the jax-tpu container's `bash -c` command instead of the MaxText default (placeholders ok)
    "client_env": {},  # extra jax-tpu env vars {NAME: value} (e.g. JAX_COMPILATION_CACHE_DIR), after the defaults
    "launcher": "xpk",  # whose JobSet layout: a key of evals/builder/launchers.py LAUNCHERS
}

SOURCE_DEFAULTS: dict[str, Any] = {
    "container_logs": True,
    "events_log": True,
    "node_logs": True,
    "serial": True,
    "audit": True,
    "autoscaler": True,
    "events_json": True,
    "pods_json": True,
    "jobset_json": True,
    "events_retention": "60m",
    # the export's time window began here (a time as `at:` takes it): logs.json holds no entry before it
    "logs_since": None,
    "containers": None,  # a list of container names: only their logs were exported (e.g. [jax-tpu]); None: all
    "metrics": "auto",  # time series beside the logs: true, false, or auto (evals/builder/metrics.py)
    # which series the export holds, when it holds series: a list of duty_cycle, hbm, node_interruptions,
    # pool_interruptions, node_conditions, node_pressure, jobset_restarts (None: the first three,
    # evals/builder/metrics.py)
    "series": None,
}

BACKGROUND_DEFAULTS: dict[str, Any] = {
    "progress": "maxtext",
    "step_seconds": 2.0,
    "log_every": 10,
    "compile_seconds": 75,
    "steps": None,
    "noise": ["cache_key", "kubelet"],
    "worker_chatter_minutes": 6,
    "checkpoint_every": None,
    "resume": False,  # a later attempt's steps count on from the last checkpoint an earlier attempt saved
    "quiet_after": None,  # a duration: no step line printed after it, the program steps on (a quiet run, issue 42)
}

# Item kinds and the fields each may carry (besides at, key, note).
ITEM_FIELDS: dict[str, set[str]] = {
    "log": {"pod", "pods", "except", "container", "text", "stream", "severity", "glog", "tid", "repeat", "step",
            "json"},
    "exit": {"pod", "container", "exit_code", "reason", "message", "restart", "backoff"},
    "shutdown": {"pod", "exit_code", "message", "reason", "condition_reason", "deleted"},
    "waiting": {"pod", "container", "reason", "message"},
    "crashloop": {"pod", "container", "after", "exit_code", "reason", "text", "glog", "tid", "stream", "severity"},
    "pending": {"pod", "pods", "except", "message", "repeat", "source", "until"},
    "pull_failure": {"pod", "container", "image", "message", "repeat"},
    "block": {"milestone"},
    "event": {"object", "pod", "node", "reason", "message", "type", "source", "host", "field_path", "repeat"},
    "node_log": {"node", "log", "text", "severity", "repeat", "in_order"},
    "serial": {"node", "text", "repeat", "in_order"},
    "audit": {"node", "log", "method", "resource_name", "status", "severity", "principal", "service",
              "request", "response", "resource", "user_agent"},
    "autoscaler": {"payload", "decision", "result_error", "no_scale_up", "severity", "repeat"},
    "jobset": {"condition", "reason", "message", "first_failed_job", "keep_pods"},
    "stop_progress": set(),
    "restart": {"first_failed_job", "delay", "replace_nodes", "same_host"},  # fixtures/README.md: new nodes, same host
    "condition": {"node", "condition", "status", "until"},  # a node condition, series only (fixtures/README.md)
    "recording": {"id", "pod", "pods", "except", "container", "lines", "from", "to", "drop", "on_start", "program", "replace"},
}

MILESTONES = ("rm_serving", "proxy_ready", "client_connect", "worker_serving", "megascale", "slices_ready",
              "first_step", "pods_created", "workers_created")

_DUR = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")


class ScenarioError(ValueError):
    """A scenario.yaml is malformed or inconsistent; the message names the item and the problem."""


def parse_duration(text: str | int | float) -> int:
    """'1h2m3.5s' / '90s' / '250ms' / a number of seconds -> nanoseconds."""
    if isinstance(text, (int, float)):
        return int(round(text * NS))
    s = str(text).strip()
    pos, total = 0, 0.0
    for m in _DUR.finditer(s):
        if m.start() != pos:
            break
        unit = {"h": 3600, "m": 60, "s": 1, "ms": 0.001}[m.group(2)]
        total += float(m.group(1)) * unit
        pos = m.end()
    if pos != len(s) or not s:
        raise ScenarioError(f"bad duration {text!r} (use e.g. 12m, 1h5m, 90s, 1m30.5s)")
    return int(round(total * NS))


def parse_iso(text: str) -> int:
    """An RFC 3339 UTC time -> ns since the epoch."""
    d = dt.datetime.fromisoformat(str(text).strip().replace("Z", "+00:00"))
    if d.tzinfo is None:
        d = d.replace(tzinfo=dt.UTC)
    whole = d.replace(microsecond=0)
    return int(whole.timestamp()) * NS + d.microsecond * 1000


def fmt_ns(ns: int, digits: int = 9) -> str:
    """ns since epoch -> '2026-11-20T10:03:12.123456789Z' (digits=0 gives whole seconds)."""
    sec, frac = divmod(ns, NS)
    base = dt.datetime.fromtimestamp(sec, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S")
    if digits == 0:
        return base + "Z"
    return f"{base}.{frac:09d}"[: len(base) + 1 + digits] + "Z"


def glog_stamp(ns: int) -> str:
    """The 'MMDD HH:MM:SS.uuuuuu' part of a glog/klog line."""
    sec, frac = divmod(ns, NS)
    d = dt.datetime.fromtimestamp(sec, dt.UTC)
    return f"{d:%m%d %H:%M:%S}.{frac // 1000:06d}"


_TIME = re.compile(r"^(?:(?P<anchor>[A-Za-z_][\w.-]*))?\s*(?P<sign>[+-])\s*(?P<dur>[\d.hms]+)$")


def parse_time(text: Any, start: int, anchors: dict[str, int]) -> int:
    """'+12m' (from workload.start), 'key+30s' / 'key-5s' (from an earlier item or anchor), or an RFC 3339 time."""
    if isinstance(text, dt.datetime):
        text = text.isoformat()
    s = str(text).strip()
    m = _TIME.match(s)
    if m:
        base = start
        if m.group("anchor"):
            if m.group("anchor") not in anchors:
                raise ScenarioError(f"time {s!r}: unknown anchor {m.group('anchor')!r} (keys must be defined earlier)")
            base = anchors[m.group("anchor")]
        d = parse_duration(m.group("dur"))
        return base + d if m.group("sign") == "+" else base - d
    if s in anchors:
        return anchors[s]
    try:
        return parse_iso(s)
    except ValueError as e:
        raise ScenarioError(f"bad time {text!r}: {e}") from None


@dataclass(frozen=True)
class PodRef:
    """A pod by role: head, or worker[slice][vm]; attempt None means 'the attempt current at the item's time'."""

    role: str
    slice: int = 0
    vm: int = 0
    attempt: int | None = None

    def __str__(self) -> str:
        base = "head" if self.role == "head" else f"worker[{self.slice}][{self.vm}]"
        return base if self.attempt is None else f"{base}@{self.attempt}"


_REF = re.compile(r"^(?P<role>head|worker|workers|all|tpu|cpu)(?:\[(?P<a>\*|\d+)\](?:\[(?P<b>\*|\d+)\])?)?(?:@(?P<att>\d+))?$")


def parse_refs(text: str, slices: int, hosts: int) -> list[PodRef]:
    """'head', 'worker[1][2]', 'worker[1][*]', 'worker[*][0]', 'workers', 'all', each optionally '@<attempt>'."""
    m = _REF.match(str(text).strip())
    if not m or m.group("role") in ("tpu", "cpu"):
        raise ScenarioError(f"bad pod reference {text!r} (head, worker[s][v], worker[*][*], workers, all; @N)")
    att = int(m.group("att")) if m.group("att") else None
    role, a, b = m.group("role"), m.group("a"), m.group("b")
    out: list[PodRef] = []
    if role in ("head", "all"):
        out.append(PodRef("head", attempt=att))
    if role in ("workers", "all") or (role == "worker" and a is None):
        a, b = "*", "*"
    if role in ("worker", "workers", "all"):
        if b is None:
            raise ScenarioError(f"pod reference {text!r}: give both indexes, worker[slice][vm]")
        ss = range(slices) if a == "*" else [int(a)]
        vv = range(hosts) if b == "*" else [int(b)]
        for s in ss:
            for v in vv:
                if s >= slices or v >= hosts:
                    raise ScenarioError(f"pod reference {text!r} is outside {slices} slices x {hosts} hosts")
                out.append(PodRef("worker", s, v, att))
    return out


def parse_node_ref(text: str) -> tuple[str, int, int]:
    """'tpu[s][h]' / 'cpu[i]' name a node directly; anything else is a pod reference (its node)."""
    m = _REF.match(str(text).strip())
    if m and m.group("role") == "tpu":
        return ("tpu", int(m.group("a") or 0), int(m.group("b") or 0))
    if m and m.group("role") == "cpu":
        return ("cpu", int(m.group("a") or 0), 0)
    return ("pod", 0, 0)


@dataclass
class Item:
    """One incident item with its resolved time."""

    index: int
    kind: str
    at: int
    key: str | None
    spec: dict[str, Any]

    def where(self) -> str:
        return f"incident[{self.index}] ({self.kind}{', key ' + self.key if self.key else ''})"


@dataclass
class Scenario:
    """A parsed scenario.yaml."""

    name: str
    description: str
    workload: dict[str, Any]
    sources: dict[str, Any]
    background: dict[str, Any]
    items: list[Item]
    expected: dict[str, Any] | None
    start: int
    end: int
    anchors: dict[str, int] = field(default_factory=dict)


def _merge(defaults: dict[str, Any], given: dict[str, Any] | None, where: str) -> dict[str, Any]:
    given = given or {}
    unknown = sorted(set(given) - set(defaults))
    if unknown:
        raise ScenarioError(f"{where}: unknown field(s) {unknown}; known: {sorted(defaults)}")
    out = dict(defaults)
    out.update(given)
    return out


def load(path: Path) -> Scenario:
    """Read and validate a scenario.yaml; the case name is the folder name unless `name:` is given."""
    try:
        raw = yaml.safe_load(Path(path).read_text())
    except yaml.YAMLError as e:
        raise ScenarioError(f"{path}: not valid YAML (quote pod references inside [...] lists): {e}") from None
    if not isinstance(raw, dict):
        raise ScenarioError(f"{path}: expected a mapping")
    known = {"name", "description", "workload", "sources", "background", "incident", "expected"}
    if set(raw) - known:
        raise ScenarioError(f"{path}: unknown top-level field(s) {sorted(set(raw) - known)}")
    wl = _merge(WORKLOAD_DEFAULTS, raw.get("workload"), "workload")
    for req in ("jobset", "project", "cluster", "start"):
        if not wl[req]:
            raise ScenarioError(f"workload.{req} is required")
    wl["proxy_tag"] = wl["proxy_tag"] or wl["server_tag"]
    wl["gcs_scratch"] = wl["gcs_scratch"] or f"gs://{wl['project']}-pathways/tmp"
    wl["user_image"] = wl["user_image"] or f"us-docker.pkg.dev/{wl['project']}/ml/maxtext:latest"
    wl["rm_instance_count"] = wl["rm_instance_count"] or wl["slices"]
    from pathways_workload.evals.builder.launchers import LAUNCHERS  # noqa: PLC0415 (the builder imports this module)
    if wl["launcher"] not in LAUNCHERS:
        raise ScenarioError(f"workload.launcher: unknown {wl['launcher']!r}; known: {sorted(LAUNCHERS)}")
    start = parse_time(wl["start"], 0, {})
    end = parse_time(wl["end"], start, {})
    src = _merge(SOURCE_DEFAULTS, raw.get("sources"), "sources")
    bg = _merge(BACKGROUND_DEFAULTS, raw.get("background"), "background")
    anchors: dict[str, int] = {"start": start, "end": end}
    items: list[Item] = []
    for i, spec in enumerate(raw.get("incident") or []):
        spec = dict(spec)
        kind = spec.pop("kind", None)
        if kind not in ITEM_FIELDS:
            raise ScenarioError(f"incident[{i}]: unknown kind {kind!r}; known: {sorted(ITEM_FIELDS)}")
        key = spec.pop("key", None)
        spec.pop("note", None)
        at = parse_time(spec.pop("at", "+0s"), start, anchors)
        extra = sorted(set(spec) - ITEM_FIELDS[kind])
        if extra:
            raise ScenarioError(f"incident[{i}] ({kind}): unknown field(s) {extra}; known: {sorted(ITEM_FIELDS[kind])}")
        if key:
            if key in anchors:
                raise ScenarioError(f"incident[{i}]: duplicate key {key!r}")
            anchors[key] = at
        items.append(Item(i, kind, at, key, spec))
    name = raw.get("name") or Path(path).resolve().parent.name
    return Scenario(name, raw.get("description", ""), wl, src, bg, items, raw.get("expected"), start, end, anchors)


# --- what a healthy run prints (the background generator's vocabulary) --------------------------------------------

INSTANCE_TYPES = {
    "tpu-v6e-slice": "tpuv6e",
    "tpu-v5p-slice": "tpuv5",
    "tpu-v5-lite-podslice": "tpuv5e",
    "tpu-v4-podslice": "tpuv4",
    "tpu7x": "tpu7x",
}

CHIP_NAMES = {
    "tpu-v6e-slice": ("TPU v6 lite", 31.25),
    "tpu-v5p-slice": ("TPU v5", 95.74),
    "tpu-v5-lite-podslice": ("TPU v5 lite", 15.75),
    "tpu-v4-podslice": ("TPU v4", 32.0),
    "tpu7x": ("TPU7x", 192.0),
}

MACHINE_TYPES = {
    "tpu-v6e-slice": "ct6e-standard-4t",
    "tpu-v5p-slice": "ct5p-hightpu-4t",
    "tpu-v5-lite-podslice": "ct5lp-hightpu-4t",
    "tpu-v4-podslice": "ct4p-hightpu-4t",
    "tpu7x": "tpu7x-standard-4t",
}

WORKER_CHATTER = (
    "I{ts} {tid:>7} program_cache.cc:311] Program cache hit: fingerprint={hex16} ({mib} MiB)",
    "I{ts} {tid:>7} device_state.cc:188] HBM in use: {gib:.2f} GiB across {chips} chips",
    "I{ts} {tid:>7} executor.cc:902] Completed {n} program launches since last report",
    "I{ts} {tid:>7} grpc_server.cc:455] Keepalive from resource manager ok (rtt={ms:.1f}ms)",
)

WORKER_CHATTER_MULTISLICE = (
    "I{ts} {tid:>7} dcn_transfer.cc:640] DCN transfer stats: {n} transfers, p50={ms:.1f}ms p99={ms2:.1f}ms",
)

RM_CHATTER = (
    "I{ts} {tid:>7} resource_manager.cc:733] Active programs: {small}, queued: 0",
    "I{ts} {tid:>7} gcs_scratch.cc:214] Scratch usage under {scratch}: {mib} MiB",
)

KUBELET_CHATTER = (
    'I{ts} {tid:>7} container_gc.go:88] "Attempting to delete unused containers"',
    'I{ts} {tid:>7} image_gc_manager.go:431] "Attempting to delete unused images"',
    'I{ts} {tid:>7} kubelet_node_status.go:488] "Fast updating node status as it just became ready"',
)

PROGRESS_FORMATS = {
    # MaxText prints through max_logging.log -> print -> stdout
    "maxtext": ("stdout", "completed step: {step}, seconds: {sec:.3f}, TFLOP/s/device: {tflops:.1f}, "
                "Tokens/s/device: {tok:.1f}, total_weights: {weights}, loss: {loss:.3f}"),
    # absl logging from a custom trainer -> stderr
    "absl": ("stderr", "I{ts} {tid:>7} train.py:214] step={step} loss={loss:.4f} grad_norm={gnorm:.4f} "
             "steps/sec={sps:.2f}"),
    # a plain Python logging setup -> stderr
    "logging": ("stderr", "INFO:__main__:Step {step}/{total}: loss={loss:.4f} lr={lr:.2e} step_time={sec:.2f}s"),
    "print": ("stdout", "step {step} | loss {loss:.4f} | {sec:.2f} s/step"),
    # nanoGPT's loop and the loops written after it (karpathy/nanoGPT train.py, print(f"iter {iter_num}: loss ..."))
    "nanogpt": ("stdout", "iter {step}: loss {loss:.4f}, time {ms:.2f}ms"),
}

NOISE = {
    "cache_key": ("stderr", "INFO:jax._src.cache_key:get (_hash_accelerator_config): unable to hash accelerator "
                  "config, falling back to hashing devices + platform: UNIMPLEMENTED: GetTopologyForDevices is not "
                  "supported for the IFRT proxy client."),
    "tpu_backend": ("stderr", "WARNING:jax._src.xla_bridge:Unable to initialize backend 'tpu': INTERNAL: Failed to "
                    "open libtpu.so: libtpu.so: cannot open shared object file: No such file or directory"),
    "compile_cache_off": ("stderr", "WARNING:absl:pathwaysutils: Persistent compilation cache is disabled; "
                          "Pathways keeps its own cache."),
    "orbax_async": ("stderr", "WARNING:absl:[process=0] Async checkpointing is not supported with the proxy "
                    "backend yet; falling back to synchronous save."),
}
