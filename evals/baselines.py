"""Two naive baselines scored beside the engine, for context: the most frequent class, and a plain keyword grep.

The keyword table is written from the taxonomy (../shared/taxonomy.md) and the failure reference
(../shared/reference/pathways-failures.md), not from the engine's catalog, so it says what grepping alone achieves.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache
from pathlib import Path

UNKNOWN = "unknown_failure"
NOT_SCANNED = frozenset({"expected.yaml", "scenario.yaml"})  # the answer and the case's description

# Per class, lower-case substrings; order matters: on a tie the first class wins.
KEYWORDS: dict[str, tuple[str, ...]] = {
    "jobset_rejected": ("jobset-webhook-service", "failedcreate", "must be no more than 63 characters",
                        "coordinator label", "jobset name is too long"),
    "kueue_admission_blocked": ("couldn't assign flavors", "insufficient unused quota", "quotareserved",
                                "preempted to accommodate"),
    "tpu_capacity_unavailable": ("zone_resource_pool_exhausted", "gce_stockout", "resource pool exhausted",
                                 "does not have enough resources available", "scale.up.error.out.of.resources",
                                 "insufficient google.com/tpu", "failedscaleup"),
    "tpu_quota_exceeded": ("quota_exceeded", "insufficient quota", "scale.up.error.quota.exceeded"),
    "node_selector_mismatch": ("didn't match pod's node affinity/selector", "invalid tpu topology",
                               "didn't match pod anti-affinity", "unsupported tpu type"),
    "image_pull_failure": ("errimagepull", "imagepullbackoff", "failed to pull image"),
    "ifrt_version_mismatch": ("failed to agree on the protocol version", "protocol version"),
    "proxy_backend_not_registered": ("is not in the list of known backends",),
    "libtpu_mismatch": ("failed to open libtpu.so", "pjrt api version", "cloud_tpu_init failed"),
    "colocated_python_failure": ("sidecar image matches", "colocated-python-sidecar", "colocated python"),
    "proxy_unreachable": ("unable to establish connection to ifrt_proxy", "dns resolution failed"),
    "proxy_connection_lost": ("cancelled: cancelled", "writes no longer allowed", "connection to ifrt proxy server was terminated"),
    "slices_not_ready": ("waiting for slices", "slices not ready", "not yet registered"),
    "gcs_scratch_misconfigured": ("the specified bucket does not exist", "lifecycle matches_prefix"),
    "gcs_permission_denied": ("does not have storage.objects", "iam.serviceaccounts.getaccesstoken",
                              "unable to generate access token", "403 forbidden"),
    "hbm_oom": ("ran out of memory in memory space hbm", "memory space vmem", "error allocating device buffer",
                "resource_exhausted"),
    "host_oom": ("oomkilled", "oomkilling", "memory cgroup out of memory", "exit code 137", "exitcode\": 137"),
    "xla_compile_error": ("mosaic failed to compile", "compile permanent error", "xla compilation"),
    "user_code_error": ("traceback (most recent call last)", "valueerror", "typeerror", "keyerror",
                        "unexpected keyword argument"),
    "checkpoint_failure": ("orbax", "tensorstore"),
    "compilation_cache_failure": ("compilation cache", "compilation_cache", "too many requests"),
    "megascale_hang": ("megascale detects a hang", "hang_detected", "barrier timed out", "deadline_exceeded"),
    "workload_stalled": ("no progress", "stalled"),
    "tpu_device_busy": ("device or resource busy", "/dev/vfio", "lockfile"),
    "tpu_init_failure": ("tpu initialization failed", "failed to initialize tpu system", "tpu_ret_check"),
    "tpu_hardware_failure": ("[hardware]", "fatal error", "halted prematurely", "received error interrupt",
                             "no healthy devices"),
    "node_kernel_error": ("kerneloops", "taskhung", "cperhardwareerrorfatal", "buffer i/o error",
                          "unable to handle kernel", "pcie bus error"),
    "node_lost": ("nodenotready", "hosterror", "host error", "auto-repair", "autorepair"),
    "spot_preemption": ("compute.instances.preempted", "imminent node shutdown", "preemptionevent", "was preempted"),
    "host_maintenance": ("active-node-maintenance", "terminateonhostmaintenance", "host maintenance"),
    "head_pod_evicted": ("evicted", "scaledown", "scale-down", "the node was low on resource"),
    "elastic_recovery_exhausted": ("elasticruntimeerror", "timed out waiting for", "elastic attempt"),
    "hot_swap_failure": ("hot swap", "hot-swap", "hotswap", "standby slice"),
    "suspend_resume_failure": ("not restorable", "resume failed", "snapshot"),
    "no_failure_detected": (),  # grepping cannot see the absence of a failure
}


def most_frequent(expected: list[str]) -> str:
    """The most frequent expected class; a tie goes to the class seen first."""
    return Counter(expected).most_common(1)[0][0] if expected else UNKNOWN


def keyword_hits(text: str) -> dict[str, int]:
    low = text.lower()
    return {cls: sum(low.count(k) for k in words) for cls, words in KEYWORDS.items()}


def grep_class(text: str) -> str:
    """The class with the most keyword hits in the text; ties to the first in KEYWORDS, no hit at all to unknown."""
    hits = keyword_hits(text)
    best = max(hits.values(), default=0)
    return next(cls for cls, n in hits.items() if n == best) if best else UNKNOWN


def case_text(folder: Path) -> str:
    """All text of a case's exported files (not its expected answer nor its description)."""
    return "\n".join(p.read_text(errors="replace") for p in sorted(folder.iterdir())
                     if p.is_file() and p.name not in NOT_SCANNED)


@lru_cache(maxsize=1024)
def _grep_folder(folder: str) -> str:
    return grep_class(case_text(Path(folder)))


def score(cases: list[tuple[Path, str]]) -> dict:
    """Top-1 of each baseline over (case folder, expected class) pairs."""
    n = len(cases) or 1
    expected = [cls for _, cls in cases]
    mf = most_frequent(expected)
    grep = [_grep_folder(str(Path(path).resolve())) for path, _ in cases]
    return {
        "most_frequent": {"class": mf, "top1": round(sum(cls == mf for cls in expected) / n, 4)},
        "keyword_grep": {"top1": round(sum(g == cls for g, cls in zip(grep, expected)) / n, 4),
                         "most_predicted": dict(Counter(grep).most_common(3))},
    }
