"""Required literals of regexes: a substring test that can rule a line out before RE2 runs (never in)."""

from __future__ import annotations

import re
from collections.abc import Callable

_FLAGS = re.compile(r"\(\?([imsU]+)\)")


def required_literal(pattern: str) -> tuple[str, bool] | None:
    """A string every match of the RE2 pattern contains, and whether its case is folded ((?i)); None if none is
    proven.

    Deliberately narrow: after leading flag groups, runs of plain characters up to the first bracket, parenthesis,
    brace or escape other than the assertions \\b \\B \\A \\z; a run loses its last character before anything that
    might repeat it; a pattern with `|` anywhere gets none (an alternative need not contain the run)."""
    if "|" in pattern:
        return None
    i, fold = 0, False
    while m := _FLAGS.match(pattern, i):
        fold = fold or "i" in m.group(1)
        i = m.end()
    best, run = "", ""
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and pattern[i + 1:i + 2] in ("b", "B", "A", "z"):  # a repetition after it repeats the assertion
            best, run, i = max(best, run, key=len), "", i + 2
            continue
        if ch in ".^$" or not ch.isprintable():  # one node: a repetition after it repeats it, not the run
            best, run = max(best, run, key=len), ""
        elif ch in "*?+{}[]()\\":
            best, run = max(best, run[:-1], key=len), ""
            if ch not in "*?+":
                break
        else:
            run += ch
        i += 1
    best = max(best, run, key=len)
    return (best, fold) if best and best.isascii() else None


def screened(test: Callable[[bytes], bool], pattern: str, want: bool) -> Callable[[bytes], bool]:
    """test (whether pattern matches the UTF-8 bytes, == want), answered without RE2 when the bytes lack the
    pattern's required literal. Folded case is only decided so on ASCII text: RE2 folds k to the Kelvin sign and
    s to the long s, which a lower-cased byte string can't see."""
    if (lit := required_literal(pattern)) is None:
        return test
    text, fold = lit
    needle = text.lower().encode() if fold else text.encode()
    if fold:
        return lambda b: test(b) if not b.isascii() or needle in b.lower() else not want
    return lambda b: test(b) if needle in b else not want
