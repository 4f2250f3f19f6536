"""Every signature names where its wording comes from (issue 28): a recording made on the TPU or a public source, with
an example line from that source that the signature matches."""

from __future__ import annotations

import re

import pytest
import re2

from pathways_workload.evals.provenance import patterns

from conftest import ROOT

RECORDINGS = ROOT / "fixtures" / "recordings"
ALL = patterns()
# The only signatures without provenance, each named with why (issue 28's target is none; docs/status.md): a new
# signature without a source fails the test, and so does one of these once it is sourced or removed.
UNSOURCED = {
    # the Pathways worker's launch report: the only progress a worker prints, with no public source
    ("milestone:worker_launches", r"Completed \d+ program launches since last report"),
}


def _recorded(rid: str) -> str:
    path = RECORDINGS / rid / "output.log"
    if not path.exists():
        return ""
    return "\n".join(line.split("\t", 2)[-1] for line in path.read_text(errors="replace").splitlines()
                     if not line.startswith("N\t"))


@pytest.mark.parametrize("owner,p", [(o, p) for o, p in ALL if p.origin], ids=lambda x: x if isinstance(x, str) else "")
def test_a_signature_matches_its_example_from_its_origin(owner, p):
    assert p.example, f"{owner}: an origin needs an example line"
    assert re2.search(p.regex, p.example), f"{owner}: {p.regex!r} does not match its example"
    if p.origin.startswith("recording:"):
        rid = p.origin.split(":", 1)[1]
        text = _recorded(rid)
        assert text, f"{owner}: no recording {rid} in fixtures/recordings"
        assert p.example in text, f"{owner}: the example is not a line of recording {rid}"
    else:
        assert re.match(r"https?://\S+$", p.origin), f"{owner}: origin is a recording:<id> or a URL"


def test_every_signature_has_provenance_but_the_named_few():
    without = {(o, p.regex) for o, p in ALL if not (p.origin and p.example)}
    assert without == UNSOURCED, (sorted(without - UNSOURCED), sorted(UNSOURCED - without))
