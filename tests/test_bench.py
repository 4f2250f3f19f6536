"""The benchmark's smoke run at its smallest size: behaviour only (verdict, fields, digest bound), never timing."""

from __future__ import annotations

import pytest

from bench.__main__ import check, measure, table
from bench.generate import FAILURE_CLASS, Shape, scenario, shape_for
from skill.api import analyse_replay
from skill.digest import MAX_TOKENS, digest_of
from skill.explain import build

FIELDS = ("entries", "replay_seconds", "entries_per_second", "baseline_entries_per_second", "peak_rss_mib",
          "live_requests", "live_entries_transferred", "digest_tokens", "failure_class")
SMOKE = 3000


@pytest.fixture(scope="module")
def row(tmp_path_factory):
    return measure(SMOKE, tmp_path_factory.mktemp("bench"))


def test_smoke_row_has_every_field_and_the_injected_failure(row):
    assert all(row[k] is not None for k in FIELDS)
    assert row["failure_class"] == FAILURE_CLASS and row["status"] == "failed"
    assert row["expected_evidence_cited"] and row["entities"] == ["Node", "Pod"]
    assert row["digest_tokens"] <= MAX_TOKENS
    assert row["live_same_as_replay"] and row["live_requests"] >= 1
    assert SMOKE * 0.7 <= row["entries"] <= SMOKE * 1.3
    assert "entries/s" in table([row])


def test_check_names_every_target(row):
    big = {**row, "entries": 1_000_000}  # the speed, memory and live targets are stated for 1M entries
    names = " ".join(n for n, _ok, _d in check([row, big]))
    for word in ("baseline", "entries/s", "RSS", "requests", "digest", "same verdict and root-cause evidence"):
        assert word in names
    assert dict((n, ok) for n, ok, _ in check([row]))[f"digest <= 8,000 tokens ({row['entries']:,})"]


def test_small_sizes_are_held_only_to_their_own_targets(row):
    """`--sizes 10000` checks what is stated for every size (digest, evidence), not the 1M speed target."""
    slow = {**row, "entries_per_second": 1, "speedup": 0.1, "peak_rss_mib": 4096, "live_requests": 999}
    names = [n for n, _ok, _d in check([slow])]
    assert names and all("digest" in n or "evidence" in n for n in names)
    assert all(ok for _n, ok, _d in check([slow]))


@pytest.mark.parametrize("entries,shape", [(10_000, (2, 8, "30m")), (100_000, (4, 16, "1h")),
                                           (1_000_000, (16, 16, "2h"))])
def test_presets(entries, shape):
    s = shape_for(entries)
    assert (s.slices, s.hosts, s.duration) == shape
    assert 1.0 <= s.chatter_seconds <= 4.0  # a worker INFO line every few seconds per host


def test_failure_lands_where_asked():
    sc = scenario(Shape(entries=5000, slices=3, hosts=4, duration="40m", fail_at="+20m", fail_slice=1, fail_host=2))
    chip = sc["incident"][0]
    assert chip["pod"] == "worker[1][2]" and chip["at"] == "+20m"


def test_digest_is_bounded_whatever_the_budget(tmp_path):
    from bench.generate import write

    write(shape_for(2000), tmp_path)
    a = analyse_replay(tmp_path, digest=True)
    d = build(a, logging_requests=0)
    for budget in (1500, 4000, MAX_TOKENS):
        g = digest_of(a, d, max_tokens=budget)
        assert g["tokens_estimate"] <= budget
        assert g["evidence"] and g["verdict"]["failure_class"] == FAILURE_CLASS
        assert len(g["groups"]) + g["omitted"]["groups"] == g["groups_total"]
