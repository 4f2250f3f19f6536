"""A required literal rules a line out only when RE2 would not match it: never a false negative."""

from __future__ import annotations

import pytest
import re2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pathways_workload.skill.reading.literals import required_literal, screened
from pathways_workload.skill.reading.query import compile_regex
from pathways_workload.skill.reading.evaluate import _regex_bytes_test

QUICK = dict(derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck))
PIECES = list("abcKkSs\u017f \t:-#") + [
    "\\b", "\\B", "\\A", "\\z", "\\d", "\\s", "\\.", "\\\\", "\\E", "\\Q", "\\x41", "\\pL", ".", "^", "$", "[a-c]",
    "[^k]", "(a|b)", "(?:ab)", "(?i)", "(?i:ab)", "(?is)", "(?s)", "(?m)", "(?U)", "(?-i)", "{2}", "{0,2}", "*",
    "+", "?", "*?", "**", "+*", "|", "(", ")", "\u00e9", "ab", "kS", "step"]
TEXT = list("abcKkSs\u017f\u212a \t:-#.\\A\u00e90123\n") + ["step", "STEP", "ab"]
OPTIONS = re2.Options()
OPTIONS.log_errors = False


@pytest.mark.parametrize("pattern, want", [
    (r"Completed [0-9]+ program launches", ("Completed", False)),
    (r"(?i)\bstep\b[\s:=#]*\d+", ("step", True)),
    (r"(?m)(?:a)|(?:b)", None),  # an alternation: neither side is required
    (r"ab*", ("a", False)), (r"ab+", ("a", False)), (r"ab?c", ("a", False)),
    (r"a(?s){0,2}", None),  # a repetition after a flag group repeats the a
    (r"a\E*", None), (r"x{2}yz", None), (r"\Qab", None), (r"(?P<x>a)bc", None),
    (r"abc\bdefg", ("defg", False)), (r".hello$", ("hello", False)), ("caf\u00e9", None),
])
def test_required_literal(pattern, want):
    assert required_literal(pattern) == want


@settings(max_examples=3000, **QUICK)
@given(st.lists(st.sampled_from(PIECES), max_size=8).map("".join),
       st.lists(st.lists(st.sampled_from(TEXT), max_size=8).map("".join), min_size=1, max_size=6))
def test_a_line_without_the_literal_never_matches(pattern, texts):
    try:
        rx = re2.compile(pattern, options=OPTIONS)
    except re2.error:
        return
    for want in (True, False):
        test = screened(lambda b, want=want: (rx.search(b.decode()) is not None) == want, pattern, want)
        for text in texts:
            assert test(text.encode()) == ((rx.search(text) is not None) == want), (pattern, text)


@pytest.mark.parametrize("text, hit", [("STEP 4", True), ("\u017ftep 4", False), ("a step: 12", True),
                                       ("no steps", False), ("\u212aSTEP 9", True), ("", False)])
def test_the_compiled_test_folds_case_as_re2_does(text, hit):
    pattern = r"(?i)\bstep\b[\s:=#]*\d+"
    assert _regex_bytes_test(compile_regex(pattern), True)(text.encode()) is hit
    assert (re2.search(pattern, text) is not None) is hit
