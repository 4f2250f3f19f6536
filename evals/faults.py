"""The fault matrix: live diagnoses against the loopback fakes (real google-cloud-logging and kubernetes clients)
with one fault injected each. A fault must end in a diagnosis that says in data_gaps what is missing, or in one
actionable line (SourceError), within the diagnosis deadline; never a hang or a traceback."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .corpus import BASE, BASE_CLASS
from .outcome import Outcome, bounded, classify_error

SLACK_S = 5.0  # past the deadline: one request timeout and the classification


@dataclass(frozen=True)
class FaultCase:
    """One injected fault: `inject(live_case)` arms the fakes; `expect` is what the run must end in."""

    name: str
    what: str
    inject: Callable
    expect: str  # complete (same verdict, no gap about the fault) | gap (diagnosis; a gap has `says`) | error | either
    says: tuple[str, ...] = ()  # words the gap or the error must contain (any of them)
    limits: dict = field(default_factory=dict)
    deadline_s: float = 20.0
    known_bug: str | None = None


def _lg(fn):
    return lambda lv: fn(lv.logging)


def _kb(**attrs):
    def arm(lv):
        for k, v in attrs.items():
            setattr(lv.kube, k, v)
    return arm


def _everything_down(lv) -> None:
    lv.logging.inject("reset", 10**6)
    lv.kube.reset = 10**6


MATRIX: tuple[FaultCase, ...] = (
    FaultCase("none", "no fault (the reference run)", lambda lv: None, "complete"),
    FaultCase("logging-429-burst", "five 429 RESOURCE_EXHAUSTED, in two bursts",
              _lg(lambda f: (f.fail(429, times=3), f.fail(429, times=2, after=4))), "complete"),
    FaultCase("logging-429-storm", "429 on every request from the third on", _lg(lambda f: f.fail(429, times=10**6, after=2)),
              "gap", ("HTTP 429",), dict(retries=3)),
    FaultCase("logging-503-mid-paging", "two 503 UNAVAILABLE after two pages", _lg(lambda f: f.fail(503, times=2, after=2)),
              "complete", limits=dict(page_size=50)),
    FaultCase("logging-500", "three 500 INTERNAL", _lg(lambda f: f.fail(500, times=3)), "complete"),
    FaultCase("logging-reset", "three connections reset (RST) before an answer", _lg(lambda f: f.inject("reset", times=3)),
              "complete"),
    FaultCase("logging-reset-storm", "every connection reset from the second request on",
              _lg(lambda f: f.inject("reset", times=10**6, after=1)), "gap", ("ConnectionError",), dict(retries=3)),
    FaultCase("logging-slow-pages", "every page takes 0.4 s; 1.5 s deadline", _lg(lambda f: f.inject("slow", 10**6, 0, 0.4)),
              "either", ("deadline",), dict(page_size=50), deadline_s=1.5),
    FaultCase("logging-deadline-mid-read", "the fourth page hangs for 30 s; 1.5 s deadline",
              _lg(lambda f: f.inject("slow", 1, 3, 30.0)), "gap", ("deadline", "Timeout"), dict(page_size=50),
              deadline_s=1.5),
    FaultCase("logging-invalid-page-token", "400 on every request that carries a page token",
              _lg(lambda f: f.inject("bad_token", 10**6)), "gap", ("page token",), dict(page_size=50)),
    FaultCase("logging-empty-pages", "three empty pages that only carry a token (search in progress)",
              _lg(lambda f: f.inject("empty", 3, 1)), "complete", limits=dict(page_size=50)),
    FaultCase("logging-garbage-200", "a 200 whose body is an HTML page from a proxy", _lg(lambda f: f.inject("garbage", 2)),
              "complete"),
    FaultCase("logging-403", "403 PERMISSION_DENIED", _lg(lambda f: f.fail(403, times=10**6)), "error",
              ("roles/logging.viewer",)),
    FaultCase("logging-401", "401 UNAUTHENTICATED", _lg(lambda f: f.fail(401, times=10**6)), "error",
              ("gcloud auth application-default login",)),
    FaultCase("kube-401", "401 Unauthorized from the Kubernetes API", _kb(deny=401), "error",
              ("authentication failed", "get-credentials")),
    FaultCase("kube-403", "403 Forbidden from the Kubernetes API", _kb(deny=403), "error", ("roles/container.viewer",)),
    FaultCase("kube-410-once", "one 410 Gone (Expired) for a stale continue token; 20 items a page",
              _kb(expire_continue=1, page_cap=20), "complete"),
    FaultCase("kube-410-always", "410 Gone for every continue token; 20 items a page",
              _kb(expire_continue=10**6, page_cap=20), "gap", ("410",)),
    FaultCase("kube-reset", "the first two Kubernetes connections reset (urllib3 retries)", _kb(reset=2), "complete"),
    FaultCase("kube-reset-storm", "every Kubernetes connection reset", _kb(reset=10**6), "gap", ("unreachable",)),
    FaultCase("kube-slow", "every Kubernetes answer takes 0.5 s; 2 s deadline", _kb(delay_s=0.5), "either",
              ("deadline", "unreachable"), deadline_s=2.0),
    FaultCase("kube-hang", "the Kubernetes API accepts connections and never answers (60 s); 2 s deadline",
              _kb(delay_s=60.0), "error", ("nothing was read",), deadline_s=2.0),
    FaultCase("kube-500-pods", "500 on the pod list", _kb(error_paths={"/pods": 500}), "gap", ("HTTP 500",)),
    FaultCase("everything-down", "every Logging and Kubernetes connection reset",
              _everything_down, "error",
              ("nothing was read",), dict(retries=2)),
)


def run_fault(fc: FaultCase, case: Path = BASE) -> Outcome:
    """One live diagnosis of `case` with the fault armed; the outcome and whether it kept to the deadline."""
    from pathways_workload.evals.fakes.live_case import LiveCase, fast

    with LiveCase(case) as lv:
        fc.inject(lv)
        limits = fast(deadline_s=fc.deadline_s, **fc.limits)
        diag, err, secs, done = bounded(lambda: lv.diagnose(limits=limits), fc.deadline_s + 60)
        non_get = list(lv.kube.non_get)
    out = Outcome(fc.name, "hang" if not done else classify_error(err)[0], seconds=round(secs, 2),
                  known_bug=fc.known_bug)
    if not done:
        out.detail = f"no result {fc.deadline_s + 60:g} s after a {fc.deadline_s:g} s deadline"
    elif err is not None:
        out.detail = classify_error(err)[1]
    else:
        out.failure_class, out.gaps = diag.failure_class, list(diag.data_gaps)
    if done and secs > fc.deadline_s + SLACK_S:
        out.outcome, out.detail = "hang", f"took {secs:.1f} s against a {fc.deadline_s:g} s deadline; " + out.detail
    if non_get:
        out.outcome, out.detail = "crash", f"non-GET Kubernetes requests: {non_get[:3]}"
    return out


def verdict(fc: FaultCase, out: Outcome, reference: Outcome | None = None) -> str | None:
    """None when the outcome is what the fault must end in, else what is wrong (gaps of the fault-free `reference`
    run are not the fault's)."""
    if out.outcome in ("crash", "hang"):
        return f"{out.outcome}: {out.detail}"
    if fc.expect == "either" and out.outcome == "error":  # timing decides whether anything was read in time
        return None if any(w in out.detail for w in fc.says) else f"the error does not say {fc.says}: {out.detail}"
    if fc.expect == "error":
        if out.outcome != "error":
            return f"expected a one-line error, got {out.outcome} ({out.failure_class})"
        return None if any(w in out.detail for w in fc.says) else f"the error does not say {fc.says}: {out.detail}"
    if out.outcome != "diagnosis":
        return f"expected a diagnosis, got {out.outcome}: {out.detail}"
    known = set(reference.gaps) if reference else set()
    fault_gaps = [g for g in out.gaps if g.startswith(("Cloud Logging", "Kubernetes API")) and g not in known]
    if fc.expect == "complete":
        if out.failure_class != BASE_CLASS:
            return f"verdict changed to {out.failure_class}"
        return f"unexpected gaps: {fault_gaps}" if fault_gaps else None
    hit = [g for g in fault_gaps if any(w in g for w in fc.says)]
    return None if hit else f"no gap says {fc.says}: {fault_gaps or out.gaps[:3]}"


def fault_report() -> list[Outcome]:
    rows = []
    reference = run_fault(MATRIX[0])
    for fc in MATRIX:
        out = run_fault(fc)
        problem = verdict(fc, out, reference)
        if problem and out.outcome == "diagnosis":
            out.outcome = "wrong"
        new_gaps = [g for g in out.gaps if g not in reference.gaps]
        out.detail = out.detail or problem or "; ".join(new_gaps) or "no new gaps"
        rows.append(out)
    return rows
