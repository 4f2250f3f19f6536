"""The impact rule (skill/judging/impact.py): a test per row, the generated doc, and whole incidents with survived look-alikes."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from pathways_workload.evals.builder import build
from pathways_workload.skill import references
from pathways_workload.skill.api import diagnose_replay
from pathways_workload.skill.catalog import Pattern
from pathways_workload.skill.judging.impact import ROWS, Line, judge
from pathways_workload.skill.reading.records import Record
from pathways_workload.skill.understanding.signals import Signal

from conftest import FIXTURES, ROOT

NS = 1_000_000_000
T0 = 1_800_000_000 * NS


def line(at_s: int, steps=(), damage=(), finished: int | None = None, next_other: int | None = None) -> Line:
    s = Signal("cause", "gcs_permission_denied", Pattern("x"), Record(id="x", ts=T0 + at_s * NS, source="container",
                                                                      log="stderr", text="403 Forbidden"), {})
    return Line(s, tuple(T0 + t * NS for t in steps), tuple(T0 + t * NS for t in damage),
                None if finished is None else T0 + finished * NS, None if next_other is None else T0 + next_other * NS)


def test_never_ran_is_linked():
    assert judge(line(10, damage=(20,)))[:2] == ("linked", "never ran")


def test_a_failure_just_before_is_linked_even_if_steps_follow():
    assert judge(line(100, steps=range(110, 400, 10), damage=(20,)))[:2] == ("linked", "a failure just before")


def test_steps_after_it_before_anything_failed_is_survived():
    verdict, row, why = judge(line(100, steps=range(50, 400, 10), damage=(900,)))
    assert (verdict, row) == ("survived", "ran on after it") and "before anything failed" in why


def test_two_steps_then_a_failure_is_linked():
    # a client may print a step or two it dispatched before the fault: not enough to call it survived
    assert judge(line(100, steps=(50, 60, 105, 110), damage=(115,)))[:2] == ("linked", "otherwise")


def test_a_line_among_the_last_of_the_data_is_linked_not_assumed_survived():
    # the run stepped before the line and nothing failed after it, but the data ends 4 s later (an export made when the
    # alert fired, live mode ending at "now"): nothing shows the run going on, so the line stays a cause
    assert judge(line(100, steps=(50, 90, 96)))[:2] == ("linked", "otherwise")
    # one or two steps after it are not enough either (a client prints steps it dispatched before the fault)
    assert judge(line(100, steps=(50, 90, 104)))[:2] == ("linked", "otherwise")


def test_steps_stopped_after_it_is_linked():
    assert judge(line(100, steps=(50, 90)))[:2] == ("linked", "otherwise")


def test_a_line_the_run_finished_after_is_survived_whatever_its_wind_down_stopped():
    # a failed optional upload 14 s before the JobSet completed; completion SIGTERMs the proxy (exit 143) as it winds down
    verdict, row, why = judge(line(100, steps=range(50, 110, 5), damage=(114,), finished=114))
    assert (verdict, row) == ("survived", "finished after it") and "completed 14 s later" in why
    # ... but not when something failed before the wind-down
    assert judge(line(100, steps=range(50, 110, 5), damage=(30 + 100,), finished=400))[:1] == ("linked",)


def test_a_line_the_program_stepped_past_before_failing_of_another_is_survived():
    # a handled PermissionError on an optional upload, steps, then the program's own TypeError 3 s later kills it
    verdict, row, why = judge(line(100, steps=(101, 102, 103), damage=(108,), next_other=103.5))
    assert (verdict, row) == ("survived", "went on to fail of something else") and "3 progress lines" in why
    # no step in between: the two lines are one failure's account, still linked
    assert judge(line(100, steps=(90, 95), damage=(108,), next_other=100.2))[:1] == ("linked",)


def test_an_exception_the_interpreter_ignored_is_survived_even_with_nothing_after_it():
    # CPython's "Exception ignored in: <function ... __del__>" report at shutdown: never raised into the program
    from dataclasses import replace
    verdict, row, why = judge(replace(line(100), ignored=True))
    assert (verdict, row) == ("survived", "ignored by the interpreter") and "never raised" in why


def test_a_line_whose_container_then_exited_0_is_survived_unless_something_failed_after():
    from dataclasses import replace
    verdict, row, _why = judge(replace(line(100, steps=(40, 50, 60)), exited_clean=True))
    assert (verdict, row) == ("survived", "exited cleanly after it")
    assert judge(replace(line(100, steps=(40, 50, 60), damage=(130,)), exited_clean=True))[:1] == ("linked",)


def test_every_row_is_tested():
    names = {r.name for r in ROWS}
    assert names == {"ignored by the interpreter", "never ran", "a failure just before",
                     "went on to fail of something else", "finished after it", "exited cleanly after it",
                     "ran on after it", "otherwise"}


def test_impact_doc_is_current():
    assert (ROOT / "docs" / "impact.md").read_text() == references.render_impact()


HEALTHY = FIXTURES / "case-002"  # a healthy two-slice run, 50 min, step lines to the end
SURVIVED = {
    "tensorboard_403": "WARNING:tensorboard:Failed to write event file gs://orchard-tb/events.out.tfevents.1: "
                       "google.api_core.exceptions.Forbidden: 403 POST https://storage.googleapis.com/upload/storage/v1/"
                       "b/orchard-tb/o?uploadType=resumable: Permission 'storage.objects.create' denied",
    "cache_write": "WARNING:jax._src.compilation_cache:Error writing persistent compilation cache entry for "
                   "'jit_train_step': OSError: Forbidden",
    "quantity": "Scratch usage under gs://orchard-research-pathways/tmp: 403 MiB",
}


def _with_line(tmp_path: Path, text: str, at: str, base: Path = HEALTHY, pod: str = "head") -> Path:
    scenario = yaml.safe_load((base / "scenario.yaml").read_text())
    scenario["incident"] = list(scenario.get("incident") or []) + [{"at": at, "kind": "log", "pod": pod, "text": text}]
    (tmp_path / "scenario.yaml").write_text(yaml.safe_dump(scenario, sort_keys=False))
    build(tmp_path / "scenario.yaml", tmp_path)
    return tmp_path


@pytest.mark.parametrize("kind", sorted(SURVIVED))
@pytest.mark.parametrize("at", ["+20m", "+46m"])  # long before the end, and four minutes before it
def test_a_healthy_run_stays_healthy_with_a_line_it_survived(tmp_path, kind, at):
    d = diagnose_replay(_with_line(tmp_path, SURVIVED[kind], at))
    assert (d.failure_class, d.status) == ("no_failure_detected", "healthy")
    ids = d.cited_ids()
    if kind != "quantity":  # a size is no fact at all; the real 403s are reported as survived warnings
        assert any(o.kind == "survived" for o in d.observations) and all(o.why_not_cause for o in d.observations)
        assert {i for o in d.observations for i in o.evidence} <= ids


def test_a_survived_warning_does_not_displace_the_real_cause(tmp_path):
    base = FIXTURES / "case-001"  # a TPU chip failing on one host of slice 1
    d = diagnose_replay(_with_line(tmp_path, SURVIVED["tensorboard_403"], "+5m", base))
    assert d.failure_class == "tpu_hardware_failure"
    assert [o.failure_class for o in d.observations if o.kind == "survived"] == ["gcs_permission_denied"]
