"""Every verbatim ([V]) wording of the shared reference's class sections is matched by the catalog or listed with why
not (issue 36, item 5): the list is evals/reference_signatures.yaml, vendored for a clean checkout."""

from __future__ import annotations

import pytest

from pathways_workload.evals.reference import REFERENCE, extract, filled, load, owners
from pathways_workload.skill.catalog import BY_ID, MILESTONES, SYMPTOMS

ENTRIES = load()
OWNERS = set(BY_ID) | {f"symptom:{s.id}" for s in SYMPTOMS} | {f"milestone:{m.id}" for m in MILESTONES}
FIELDS = {"section", "ref_class", "source", "wording", "line", "match", "none", "note", "paraphrased"}


def _id(e: dict) -> str:
    return f"{e['section']}:{e['wording'][:40]}"


@pytest.mark.parametrize("e", ENTRIES, ids=_id)
def test_each_wording_is_well_formed(e):
    assert set(e) <= FIELDS, set(e) - FIELDS
    assert e["section"] and e["ref_class"] and e["source"] and e["wording"]
    assert ("match" in e) != ("none" in e), "exactly one of match (an owner) and none (a reason)"
    if not e.get("paraphrased"):
        assert filled(e["wording"], e.get("line", e["wording"])), "line is the wording with its placeholders filled in"


@pytest.mark.parametrize("e", [e for e in ENTRIES if "match" in e], ids=_id)
def test_a_matched_wording_is_matched_by_its_owner(e):
    assert e["match"] in OWNERS, f"{e['match']} is no class, symptom or milestone of the catalog"
    found = owners(e.get("line", e["wording"]))
    assert e["match"] in found, f"no pattern of {e['match']} matches it any more (matched by: {found or 'nothing'})"


@pytest.mark.parametrize("e", [e for e in ENTRIES if "none" in e], ids=_id)
def test_an_unmatched_wording_is_matched_by_no_class(e):
    classes = [o for o in owners(e.get("line", e["wording"])) if ":" not in o]
    assert not classes, f"now matched by {classes}: name the owner in evals/reference_signatures.yaml"


def test_the_list_has_each_wording_once():
    keys = [(e["section"], e["ref_class"], e["wording"]) for e in ENTRIES]
    assert len(keys) == len(set(keys))


def test_the_restored_libtpu_fatal_lines_are_matched():
    """The sweep removed them as unsourced; marin-community/marin#1534 is their source (the reference's class 30)."""
    marin = [e for e in ENTRIES if "marin#1534" in e["source"] or "marin issue #1534" in e["source"]]
    assert len(marin) == 3 and all(e.get("match") == "tpu_hardware_failure" for e in marin)


@pytest.mark.skipif(not REFERENCE.exists(), reason="the shared reference is not beside this checkout (CI)")
def test_the_list_is_the_reference_s():
    now = {s.key for s in extract(REFERENCE.read_text())}
    listed = {(e["section"], e["ref_class"], e["wording"]) for e in ENTRIES}
    assert not now - listed, f"[V] wordings the list lacks: {sorted(now - listed)}"
    assert not listed - now, f"listed wordings the reference no longer has: {sorted(listed - now)}"


def test_extract_reads_tags_blocks_and_continuations():
    md = "\n".join([
        "## 5. Classes", "#### 3. `some_class`", "- **Signatures:**",
        "  - [V] `one` and `two`", "    `three` (continued)", "  - [R] `guess`", "  - [V-code] `fmt %s`",
        "- **Signature [V]:** `four`", "- **Fix:** `not this`", "#### (16a) `other`", "- [V] `five`", "## 6. Next",
    ])
    assert [(s.section, s.ref_class, s.wording) for s in extract(md)] == [
        ("3", "some_class", "one"), ("3", "some_class", "two"), ("3", "some_class", "three"),
        ("3", "some_class", "four"), ("16a", "other", "five")]
