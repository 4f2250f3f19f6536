"""Live = replay: every incident read live through the loopback fakes, with and without the Kubernetes fake, against
its replay verdict (failure class and status).

One Cloud Logging fake and one Kubernetes fake serve the whole run; each case swaps the data they serve. Without the
Kubernetes API the rules read the workload's facts from the logs and the events log; the one principled exception is
an incident whose root cause is shown by Pod object facts alone (a container status that says OOMKilled, with no
event or node log of it): no log holds it, so live without the API cannot see it, and says so in data_gaps. The
other is its mirror: a run that survived a failure line only by completing (the JobSet's Completed condition) is,
without that object, a run whose data ends after a failure line, and survival is never assumed (docs/impact.md).

    python -m pathways_workload.evals.live_parity [FOLDER ...]     # default: fixtures/
"""

from __future__ import annotations

import re

import sys
from dataclasses import dataclass
from pathlib import Path

from pathways_workload.skill.api import diagnose_replay
from pathways_workload.skill.diagnosis import Diagnosis

from .fakes.kube_server import FakeKube, KubeServer
from .fakes.live_case import LiveCase
from .fakes.monitoring_server import MonitoringFake
from .fakes.logging_server import FakeLogging, LoggingServer


@dataclass
class Parity:
    """One incident: the replay verdict, live's with and without the Kubernetes API, and why a difference is allowed."""

    case: str
    replay: tuple[str, str]
    live: tuple[str, str]
    no_kube: tuple[str, str]
    exempt: str = ""  # why live without the API may differ ("" when it must not)

    @property
    def passed(self) -> bool:
        return self.live == self.replay and (self.no_kube == self.replay or bool(self.exempt))


def verdict(d: Diagnosis) -> tuple[str, str]:
    return d.failure_class, d.status


def objects_only(replay: Diagnosis) -> str:
    """Why live without the Kubernetes API cannot reach this verdict: its root cause's evidence is Pod object facts
    only ("" when some of it is a log line or an event)."""
    root = set(replay.hypotheses[0].evidence) if replay.hypotheses else set()
    sources = {e.source for e in replay.evidence if e.id in root}
    return "the root cause is shown by Pod object facts alone" if sources == {"object"} else ""


def completion_only(replay: Diagnosis) -> str:
    """Why live without the Kubernetes API may not call a finished run healthy: a failure line the run survived only
    by finishing (the JobSet's Completed condition is an object fact) is, without it, a line among the last of the
    data, and survival is never assumed ("" when the healthy verdict does not rest on completion)."""
    finished = replay.status == "healthy" and any(o.kind == "survived" and "the JobSet completed" in o.why_not_cause
                                                  for o in replay.observations)
    return "the run survived a failure line only by completing, a JobSet object fact" if finished else ""


_UID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def api_only(replay: Diagnosis) -> str:
    """Why live without the Kubernetes API cannot reach this verdict: every line of its root cause is a Kubernetes
    object or an Event read through the API (cited by its metadata.uid), none a log entry ("" otherwise)."""
    root = set(replay.hypotheses[0].evidence) if replay.hypotheses else set()
    return ("the root cause is shown by Kubernetes Events and objects alone (the export holds no events log)"
            if root and all(_UID.match(i) for i in root) else "")


def compare(case: str, replay: Diagnosis, live: Diagnosis, no_kube: Diagnosis) -> Parity:
    why = (objects_only(replay) or completion_only(replay) or api_only(replay)) \
        if verdict(no_kube) != verdict(replay) else ""
    return Parity(case, verdict(replay), verdict(live), verdict(no_kube), why)


class _Current:
    """The fake a shared server serves now: attribute reads and writes go to it, so one server serves every case."""

    def __init__(self, target) -> None:
        object.__setattr__(self, "target", target)

    def __getattr__(self, name: str):
        return getattr(self.target, name)

    def __setattr__(self, name: str, value) -> None:
        setattr(self.target, name, value)


class SharedFakes:
    """`with SharedFakes() as fakes: fakes.serve(case).diagnose()`: one Logging and one Kubernetes fake, many cases."""

    def __enter__(self):
        self.logging, self.kube = _Current(FakeLogging([])), _Current(FakeKube([]))
        self._ls = LoggingServer(self.logging).__enter__()
        self._ks = KubeServer(self.kube).__enter__()
        self._ms = MonitoringFake([]).__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self._ls.__exit__(*exc)
        self._ks.__exit__(*exc)
        self._ms.__exit__(*exc)

    def serve(self, case: Path) -> LiveCase:
        """The case's data on the shared servers, and the LiveCase whose `diagnose` reads it."""
        lv = LiveCase(case)
        object.__setattr__(self.logging, "target", lv.logging)
        object.__setattr__(self.kube, "target", lv.kube)
        self._ms.series = lv.series
        lv._ls, lv._ks, lv._ms = self._ls, self._ks, self._ms
        return lv


def both(lv: LiveCase) -> tuple[Diagnosis, Diagnosis]:
    """The case live with the Kubernetes fake, and live without it."""
    return lv.diagnose(), lv.diagnose(no_kube=True, kube_server=None)


def run(cases: list[Path]) -> list[Parity]:
    with SharedFakes() as fakes:
        return [compare(c.name, diagnose_replay(c), *both(fakes.serve(c))) for c in cases]


def main(argv: list[str] | None = None) -> int:
    folders = [Path(a) for a in (argv if argv is not None else sys.argv[1:])] or [Path("fixtures")]
    cases = sorted(p.parent for f in folders for p in f.glob("*/expected.yaml"))
    results = run(cases)
    for r in results:
        if r.no_kube != r.replay or r.live != r.replay:
            print(f"{r.case}: replay {'/'.join(r.replay)}, live {'/'.join(r.live)}, without the Kubernetes API "
                  f"{'/'.join(r.no_kube)}" + (f" (allowed: {r.exempt})" if r.exempt else ""))
    n = len(results)
    print(f"{n} incidents: live with the Kubernetes fake = replay {sum(r.live == r.replay for r in results)}/{n}, "
          f"without it {sum(r.no_kube == r.replay for r in results)}/{n} "
          f"({sum(bool(r.exempt) for r in results)} allowed: root cause in Pod objects only)")
    return 0 if all(r.passed for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
