"""The text spool (skill/reading/sources/spool.py): a search over many texts at once misses no text that matches alone."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pathways_workload.skill.reading.query import compile_regex
from pathways_workload.skill.reading.sources.spool import TextSpool, bulk_patterns

PATTERNS = [r"(?m)^x", r"(?m)x$", r"(?m)^$", r"\bx\b", r"(?s)a.x", r"x+", r"(?i)X\s*1", r"é|a\nx", r"[^a]x",
            r"(?m)(?:^a)|(?:x$)", r"(?i)\bstep\b[\s:=#]*\d+"]
texts = st.lists(st.text(alphabet="xa1 \n\t\u00e9Xstep", max_size=12), max_size=30)


def test_anchors_the_spool_would_read_differently_are_not_searched():
    assert bulk_patterns([r"^x"]) is None and bulk_patterns([r"x$"]) is None and bulk_patterns([r"\Ax"]) is None
    assert bulk_patterns([r"(?m)^x(?-m:$)"]) is None and bulk_patterns([r"x", None]) is None
    assert bulk_patterns([r"(?m)^x", r"[a-m]", r"(?m)^x"]) == (r"(?m)^x", r"[a-m]")


@settings(max_examples=200, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(items=texts, pattern=st.sampled_from(PATTERNS), block=st.sampled_from([4, 16, 1 << 20]),
       batch=st.integers(1, 7))
def test_every_text_that_matches_alone_is_a_candidate(items, pattern, block, batch):
    sp = TextSpool()
    encoded = [t.encode() for t in items]
    for k in range(0, len(encoded), batch):
        sp.extend(list(range(k, min(k + batch, len(encoded)))), encoded[k:k + batch])
    got = set(sp.candidates(pattern, block_size=block))  # small blocks: texts cut across reads, longer than a block
    sp.close()
    rx = compile_regex(pattern)
    assert {i for i, t in enumerate(items) if rx.search(t)} <= got
    assert got <= set(range(len(items)))
