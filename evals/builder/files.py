"""The exported files' formats: which a case folder holds, how each is printed, and the ids they can cite."""

from __future__ import annotations

import json
from typing import Any


def ids_in(files: dict[str, Any]) -> set[str]:
    """Every citable id: LogEntry insertIds and metadata.uid of every exported object."""
    out: set[str] = set()
    for e in files.get("logs.json", []):
        out.add(e["insertId"])
    for name in ("events.json", "pods.json"):
        for o in files.get(name, {}).get("items", []):
            out.add(o["metadata"]["uid"])
    if "jobset.json" in files:
        out.add(files["jobset.json"]["metadata"]["uid"])
    out.update(s.point_id(t) for s in series_in(files).series for t, _ in s.points)
    return out


def series_in(files: dict[str, Any]) -> Any:
    """The series of the built metric files (skill.reading.sources.metrics.SeriesSet), read as the engine reads them."""
    from pathways_workload.skill.reading.sources.metrics import SeriesSet

    found = SeriesSet()
    for name in sorted(files):
        if name.startswith("metrics-"):
            found.take(files[name], name)
    return found


def dump(name: str, data: Any) -> str:
    """gcloud prints 2-space indent, kubectl 4-space; both sort keys (maps all the way down). Series: see metrics.py."""
    if name.startswith("metrics-"):
        from .metrics import dump as series_dump

        return series_dump(name, data)
    return json.dumps(data, indent=2 if name == "logs.json" else 4, sort_keys=True, ensure_ascii=False) + "\n"


GENERATED = ("logs.json", "events.json", "pods.json", "jobset.json", "metrics-duty-cycle.json", "metrics-hbm.json",
             "metrics-interruptions.json", "metrics-node-conditions.json", "metrics-jobset-restarts.json", "expected.yaml")
