"""Log text as a diagnosis quotes it: stripped, redacted and clipped at a word boundary."""

from __future__ import annotations

from ..redact import redact

EXCERPT = 300


def clip(text: str, limit: int) -> str:
    """The text in at most `limit` characters, cut at a word boundary and marked with "…" when cut."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space >= limit // 2 else cut).rstrip(" ,;:") + "…"


def excerpt(text: str) -> str:
    return clip(redact(text.strip()), EXCERPT)
