"""The text spool: every verbatim textPayload of a file, one per line, searched by a regex in bulk.

Replay's index pass writes here the UTF-8 of each entry's textPayload that the file holds verbatim (no escapes, so no
raw newline in it), one per line, beside the entry's number. When every query a route can match tests only the text
with a regex, the query pass asks the spool which lines have a match starting in them: one RE2 search per match over
16 MiB blocks instead of one call per entry, and Python then touches only those entries (and evaluates them exactly as
before). The search can only over-report: a text that matches on its own matches at the same place in the spool,
since `^`/`$` under (?m) and `\\b` see the newline between two texts as they see the ends of one (patterns whose
anchors would not, `\\A`, `\\z`, or `^`/`$` without a leading (?m), are never searched here). Each line is
searched from its own start at least once, so a match that runs on into the next line can't hide that line's own.
"""

from __future__ import annotations

import re
import tempfile
from array import array
from bisect import bisect_right
from collections.abc import Sequence
from itertools import accumulate, islice, repeat
from operator import add

import re2

from ..query import compile_regex

SPOOL_BLOCK = 16 << 20  # bytes searched at a time
_M_OFF = re.compile(r"\(\?[a-zA-Z]*-[a-zA-Z]*m")  # a group that turns multi-line off again


def bulk_patterns(patterns: Sequence[str | None]) -> tuple[str, ...] | None:
    """The distinct patterns for searches over the spool, or None when one is absent or its anchors would read the
    spool's lines differently from a single text."""
    if not patterns or None in patterns:
        return None
    present = [p for p in patterns if p is not None]
    for p in present:
        if "\\A" in p or "\\z" in p or _M_OFF.search(p):
            return None
        if ("^" in p or "$" in p) and not p.startswith("(?m)"):
            return None
    return tuple(dict.fromkeys(present))


class TextSpool:
    """The verbatim texts of one file's entries, in entry order, in a temporary file; line i belongs to entry
    ordinals[i] and starts at offsets[i]."""

    def __init__(self) -> None:
        self.f = tempfile.TemporaryFile(prefix="pw-spool-")
        self.ordinals, self.offsets = array("q"), array("q")
        self.size = 0

    def extend(self, ordinals: list[int], texts: list[bytes]) -> None:
        """Add the texts of these entries (the index pass hands them over in batches, so the work per text is C's)."""
        if not texts:
            return
        self.ordinals.extend(ordinals)
        starts = accumulate(map(add, map(len, texts), repeat(1)), initial=self.size)
        self.offsets.extend(islice(starts, len(texts)))
        data = b"\n".join(texts) + b"\n"
        self.f.write(data)
        self.size += len(data)

    def extend_quoted(self, ordinals: list[int], quoted: list) -> bool:
        """Add texts given as their JSON string literals (quotes included, no escapes, so no `"` or newline inside):
        joined and unquoted in C. False, adding nothing, when one of them is not such a literal."""
        if not quoted:
            return True
        data = b"\n".join(quoted)
        # In valid JSON `"` newline `"` occurs only where one string literal ends and the next begins (nothing but
        # `,` `:` `}` `]` follows a string, and no string holds a raw newline): n - 1 of them, a quote at either end
        # and no backslash make every literal a string without escapes, hence without a quote inside.
        if b"\\" in data or data[:1] != b'"' or data[-1:] != b'"' or data.count(b'"\n"') != len(quoted) - 1:
            return False
        self.ordinals.extend(ordinals)
        starts = accumulate(map(add, map(len, quoted), repeat(-1)), initial=self.size)  # text + newline: len - 1
        self.offsets.extend(islice(starts, len(quoted)))
        data = data[1:].replace(b'"\n"', b"\n")[:-1] + b"\n"
        self.f.write(data)
        self.size += len(data)
        return True

    def candidates(self, pattern: str, block_size: int = SPOOL_BLOCK, lines: tuple[int, int] | None = None) -> array:
        """The entry ordinals whose line has a match of pattern starting in it (every line that matches alone), of
        every line or of lines [lo, hi).

        Lines are the entries' spans (offsets), not newlines: a text written verbatim may itself hold one."""
        rx, unanchored = compile_regex(pattern)._regexp, re2._Anchor.UNANCHORED
        out, offsets = array("q"), self.offsets
        lo, n = lines or (0, len(offsets))
        stop = self.size if n >= len(offsets) else offsets[n]  # where line n - 1 ends
        self.f.flush()
        base, line = (offsets[lo] if lo < len(offsets) else self.size), lo  # the block's offset, its first line
        while line < n:
            self.f.seek(base)
            block = self.f.read(min(block_size, stop - base))
            while True:
                end = base + len(block)
                # lines [line, last) end inside the block; the one starting at or before its end may not
                last = n if end >= stop else bisect_right(offsets, end, line) - 1
                if last > line:
                    break
                block += self.f.read(min(block_size, stop - end))  # one line longer than a block
            cut = (stop if last == n else offsets[last]) - base
            pos = 0
            while pos < cut:
                start = rx.Match(unanchored, block, pos, cut)[0][0]
                if start == -1:
                    break
                k = bisect_right(offsets, base + start, line, last) - 1
                out.append(self.ordinals[k])
                pos = offsets[k + 1] - base if k + 1 < last else cut  # on at the next line
            base, line = base + cut, last
        return out

    def close(self) -> None:
        self.f.close()
