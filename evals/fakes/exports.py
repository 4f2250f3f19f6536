"""An export folder read for the fakes: its LogEntries (JSON arrays, as `gcloud logging read --format=json` writes
them) and its Kubernetes objects (`kubectl get ... -o json` lists and single objects)."""

from __future__ import annotations

import json
from pathlib import Path


def load_entries(case: Path) -> list[dict]:
    """Every LogEntry in a fixture's JSON files (arrays of entries), in file order."""
    out = []
    for path in sorted(Path(case).glob("*.json")):
        doc = json.loads(path.read_text())
        if isinstance(doc, list) and doc and isinstance(doc[0], dict) and "insertId" in doc[0]:
            out.extend(doc)
    return out


def project_of(entries: list[dict]) -> str:
    for e in entries:
        name = e.get("logName", "")
        if name.startswith("projects/"):
            return name.split("/")[1]
    return "p"


LIST_ITEM_KIND = {"PodList": "Pod", "EventList": "Event", "NodeList": "Node", "JobSetList": "JobSet"}


def load_objects(case: Path) -> list[dict]:
    """The Kubernetes objects of a fixture's JSON files (Lists flattened, item kinds filled in)."""
    out: list[dict] = []

    def take(doc, list_kind=None):
        if isinstance(doc, dict) and isinstance(doc.get("items"), list) and str(doc.get("kind", "")).endswith("List"):
            for item in doc["items"]:
                take(item, LIST_ITEM_KIND.get(doc["kind"]))
        elif isinstance(doc, dict) and (doc.get("kind") or list_kind) and "metadata" in doc:
            out.append(doc if doc.get("kind") else {**doc, "kind": list_kind, "apiVersion": "v1"})

    for path in sorted(Path(case).glob("*.json")):
        doc = json.loads(path.read_text())
        if isinstance(doc, dict):
            take(doc)
    return out
