"""The knowledge: every taxonomy class, declared as data, one module per family.

Between reading and understanding. Each family module (scheduling, images, storage, runtime, infra, lifecycle)
declares its classes: the signatures that name them (each with its provenance, a recording or a public source, and
an example line), the symptoms they explain, their precedence, fixes and next checks; `symptoms` holds the
milestones and symptoms shared by all, `release` the GA release, `types` the shapes. The catalog reads records
(`skill.reading.records`) and nothing above it.
"""

from __future__ import annotations

from . import images, infra, lifecycle, runtime, scheduling, storage
from .sources import VERDICT_SOURCES
from .symptoms import MILESTONES, SYMPTOMS
from .types import Absence, FailureClass, Fix, Milestone, Pattern, Symptom, Text

CLASSES: tuple[FailureClass, ...] = (
    scheduling.FAMILY + images.FAMILY + storage.FAMILY + runtime.FAMILY + infra.FAMILY + lifecycle.FAMILY
)
BY_ID: dict[str, FailureClass] = {c.id: c for c in CLASSES}
HEALTHY = lifecycle.NO_FAILURE_DETECTED.id  # the verdict when nothing failed
UNKNOWN = lifecycle.UNKNOWN_FAILURE.id  # the verdict when something failed and no class explains it
STALL = lifecycle.WORKLOAD_STALLED.id  # the verdict when the program stopped stepping (its absence rule, progress_stopped)
ABSENCE_CLASSES = frozenset(c.id for c in CLASSES if c.absence)  # decided from what is missing, not from signatures

__all__ = ["ABSENCE_CLASSES", "BY_ID", "CLASSES", "HEALTHY", "MILESTONES", "STALL", "SYMPTOMS", "UNKNOWN", "VERDICT_SOURCES", "Absence",
           "FailureClass", "Fix", "Milestone", "Pattern", "Symptom", "Text"]
