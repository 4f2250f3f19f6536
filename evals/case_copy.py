"""A case read into memory, as the shape transformations and the renaming change it (transforms, rename)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Copy:
    """A case read into memory: the logs export, the other JSON documents, the answer key, the other files."""

    name: str
    logs: list[dict]
    logs_file: str = "logs.json"
    docs: dict[str, object] = field(default_factory=dict)
    expected: dict = field(default_factory=dict)
    extra: dict[str, bytes] = field(default_factory=dict)
    id_map: dict[str, str] = field(default_factory=dict)  # insertIds folded into another entry: old -> new
