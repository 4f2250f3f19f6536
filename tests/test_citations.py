"""What a diagnosis cites (skill/telling/citations.py): every rule cites something in the library, and the docs are current."""

from __future__ import annotations


import pytest

from pathways_workload.skill import references
from pathways_workload.skill.telling.citations import RULES, cite

from conftest import CASES, ROOT


@pytest.fixture(scope="module")
def cited_by_rule(replayed) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {r.name: set() for r in RULES}
    for case in CASES:
        a = replayed.analysis(case)
        for rule, _s in cite(a.model, a.verdict, a.context, a.last_words):
            out[rule].add(case.name)
    return out


@pytest.mark.parametrize("rule", [r.name for r in RULES])
def test_every_rule_cites_something_in_the_library(rule, cited_by_rule):
    assert cited_by_rule[rule], f"no library case is cited by the rule '{rule}'"


def test_each_id_is_cited_once_in_rule_order(replayed):
    a = replayed.analysis(CASES[0])
    ids = [s.record.id for _rule, s in cite(a.model, a.verdict, a.context, a.last_words)]
    assert len(ids) == len(set(ids))


def test_citations_doc_is_current():
    assert (ROOT / "docs" / "citations.md").read_text() == references.render_citations()
