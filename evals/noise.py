"""Benign noise added to a case (issue 25, item 3): lines a run prints and survives, which must change no verdict.

    pathways-workload eval --noise [fixtures/] [--transforms a,b] [--cases N | --only GLOB] [--out DIR]

Each kind is a transformation in the sense of evals/transforms.py (a `Copy` changed in place, the number of entries
added returned), run by the robustness eval's loop and scored by the library's evaluators against the case's own
answer key: healthy cases must stay healthy, failures must keep their class, status and key evidence.

- `startup`: start-up warnings JAX and its libraries print on a healthy TPU host, at the start of each user container.
- `quantities`: numbers that look like statuses or exit codes but are sizes, counts and latencies (403 MiB, 404 files,
  429 ms, 137 examples), at the start of the user and resource-manager containers and just before the key evidence.
- `survived`: real permission and retry errors the run survives (a TensorBoard upload refused with 403, a
  compilation-cache write refused, a retried 503, an Orbax save record), in the client's stream where at least four
  step lines over a minute follow before the key evidence. A case without such a stretch is left unchanged (0).

Where each wording comes from is noted beside it; an entry is a copy of a real entry of the stream it joins (the same
resource and labels), with a new insertId and timestamp, on stderr at severity ERROR as GKE delivers stderr.
"""

from __future__ import annotations

import copy as _copy
import re

from pathways_workload.skill.catalog import MILESTONES

from .transforms import Copy, _ns, _ts, container, is_container_log, is_user_container, text_of

NS = 1_000_000_000
STEP = re.compile(next(m.pattern.regex for m in MILESTONES if m.id == "progress"))  # the engine's own step pattern
SCRATCH = re.compile(r"--gcs_scratch_location=(gs://[^'\"\s]+)")

# JAX's own start-up warnings (jax/_src/xla_bridge.py, jax/_src/dtypes.py) and etils' gfile shim (used by Orbax).
STARTUP = (
    "WARNING:jax._src.xla_bridge:An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not "
    "installed. Falling back to cpu.",
    "/usr/local/lib/python3.12/site-packages/jax/_src/numpy/array_constructors.py:310: UserWarning: Explicitly "
    "requested dtype float64 requested in asarray is not available, and will be truncated to dtype float32. To "
    "enable more dtypes, set the jax_enable_x64 configuration option or the JAX_ENABLE_X64 shell environment variable.",
    "WARNING:absl:Tensorflow library not found, tensorflow.io.gfile operations will use native shim calls. GCS paths "
    "(i.e. 'gs://...') cannot be accessed.",
)
# Quantities (issue 25's own examples): sizes, counts and latencies whose number is a 4xx/5xx or a signal exit code.
QUANTITIES = (
    "Scratch usage under {scratch}: 403 MiB",
    "prefetched 404 files from the input shards",
    "input pipeline: p99 latency 429 ms over 500 batches",
    "137 examples skipped (longer than max_target_length)",
    "data loader: 503 records buffered, 500 steps/epoch",
    "hint: exit code 137 usually means the container was OOM-killed; see the runbook",
)
# Errors a run survives, in the wording their libraries print: google-cloud-storage's Forbidden (google.api_core's
# "403 POST <url>: <message>"), JAX's cache-write warning (jax/_src/compilation_cache.py: "Error writing persistent
# compilation cache entry for '%s': %s: %s"), tensorstore's retry line, and Orbax's structured save record.
SURVIVED = (
    "WARNING:tensorboard:Failed to write event file gs://{bucket}/tensorboard/events.out.tfevents.1764403200.host: "
    "google.api_core.exceptions.Forbidden: 403 POST https://storage.googleapis.com/upload/storage/v1/b/{bucket}/o?"
    "uploadType=resumable: tb-writer@{project}.iam.gserviceaccount.com does not have storage.objects.create access "
    "to the Google Cloud Storage object. Permission 'storage.objects.create' denied on resource (or it may not exist).",
    "WARNING:jax._src.compilation_cache:Error writing persistent compilation cache entry for 'jit_train_step': "
    "PermissionError: [Errno 13] Permission denied: '/jax-cache/jit_train_step-4f1c2a'",
    "WARNING:absl:Retrying request to gs://{bucket}/data/shard-00017.array_record after UNAVAILABLE: HTTP response "
    "code: 503 with body: Service Unavailable (attempt 1 of 32)",
    "INFO:absl:[process=0][thread=MainThread] Finished saving checkpoint. {{'event_type': 'save', 'directory': "
    "'gs://{bucket}/checkpoints', 'step': 500, 'reached_preemption': False, 'checkpointer_blocking_duration_secs': 2.1}}",
)


def _entry(like: dict, ts: int, text: str, n: int, kind: str) -> dict:
    e = _copy.deepcopy(like)
    e.pop("jsonPayload", None)
    e.update(insertId=f"noise-{kind}-{n}", timestamp=_ts(ts), receiveTimestamp=_ts(ts + NS // 2), textPayload=text,
             severity="ERROR", logName=re.sub(r"/logs/[^/]+$", "/logs/stderr", str(like.get("logName", ""))))
    return e


def _key_ts(c: Copy) -> int | None:
    """When the answer key's first evidence line was logged (the noise must come before what proves the cause)."""
    keys = {str(k) for k in (c.expected.get("evidence") or []) if isinstance(k, str)}
    ts = [_ns(str(e.get("timestamp", ""))) for e in c.logs if e.get("insertId") in keys]
    return min(ts) if ts else None


def _first_per_stream(c: Copy, want) -> list[dict]:
    first: dict[tuple, dict] = {}
    for e in c.logs:
        if want(e) and text_of(e) is not None:
            lab = (e.get("resource") or {}).get("labels") or {}
            key = (lab.get("pod_name"), lab.get("container_name"))
            if key not in first or _ns(e["timestamp"]) < _ns(first[key]["timestamp"]):
                first[key] = e
    return list(first.values())


def _place(c: Copy) -> dict[str, str]:
    project = next((str(((e.get("resource") or {}).get("labels") or {}).get("project_id")) for e in c.logs
                    if is_container_log(e)), "example-project")
    scratch = next((m.group(1) for e in c.logs if (t := text_of(e)) and (m := SCRATCH.search(t))),
                   f"gs://{project}-pathways/tmp")
    return {"project": project, "bucket": f"{project}-train", "scratch": scratch.rstrip("/")}


def startup(c: Copy) -> int:
    """JAX's start-up warnings at the start of each user container."""
    added: list[dict] = []
    for e in _first_per_stream(c, is_user_container):
        added += [_entry(e, _ns(e["timestamp"]) + (j + 1) * NS // 10, text, len(added) + j, "startup")
                  for j, text in enumerate(STARTUP)]
    c.logs += added
    return len(added)


def quantities(c: Copy) -> int:
    """Sizes, counts and latencies that look like codes: at each user and RM stream's start and before the key line."""
    place = _place(c)
    texts = [t.format(**place) for t in QUANTITIES]
    added: list[dict] = []
    want = lambda e: is_user_container(e) or container(e) == "pathways-rm"  # noqa: E731
    for e in _first_per_stream(c, want):
        added += [_entry(e, _ns(e["timestamp"]) + (j + 1) * NS // 10, t, len(added) + j, "qty") for j, t in enumerate(texts)]
    key = _key_ts(c)
    keyed = [e for e in c.logs if key is not None and _ns(str(e.get("timestamp", ""))) == key and is_container_log(e)]
    if keyed and key is not None:
        added += [_entry(keyed[0], key - (len(texts) - j) * NS, t, len(added) + j, "qty") for j, t in enumerate(texts)]
    c.logs += added
    return len(added)


def survived(c: Copy) -> int:
    """Survived errors in the client's stream, followed by at least four step lines over a minute before the key line."""
    steps = sorted((e for e in c.logs if is_user_container(e) and (t := text_of(e)) and STEP.search(t)),
                   key=lambda e: _ns(e["timestamp"]))
    key = _key_ts(c)
    before = [e for e in steps if key is None or _ns(e["timestamp"]) < key]
    if len(before) < 6:
        return 0
    # after the first third of the steps seen before the key line, with at least four more steps and a minute left
    at = before[len(before) // 3]
    rest = [e for e in before if _ns(e["timestamp"]) > _ns(at["timestamp"])]
    if len(rest) < 4 or _ns(rest[-1]["timestamp"]) - _ns(at["timestamp"]) < 60 * NS:
        return 0
    place = _place(c)
    t0 = _ns(at["timestamp"])
    added = [_entry(at, t0 + (j + 1) * NS // 5, t.format(**place), j, "survived") for j, t in enumerate(SURVIVED)]
    c.logs += added
    return len(added)


NOISE = {"startup": startup, "quantities": quantities, "survived": survived}
