"""The signature catalog: every taxonomy class, declared as data, one module per family."""

from __future__ import annotations

from . import images, infra, lifecycle, runtime, scheduling, storage
from .symptoms import MILESTONES, SYMPTOMS
from .types import FailureClass, Fix, Milestone, Pattern, Symptom

CLASSES: tuple[FailureClass, ...] = (
    scheduling.FAMILY + images.FAMILY + storage.FAMILY + runtime.FAMILY + infra.FAMILY + lifecycle.FAMILY
)
BY_ID: dict[str, FailureClass] = {c.id: c for c in CLASSES}

__all__ = ["BY_ID", "CLASSES", "MILESTONES", "SYMPTOMS", "FailureClass", "Fix", "Milestone", "Pattern", "Symptom"]
