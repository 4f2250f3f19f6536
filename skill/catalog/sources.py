"""Evidence sources a verdict leans on beyond what every diagnosis reads: when one is absent, the diagnosis says so."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class VerdictSource:
    """A log whose absence weakens the verdicts that name it in FailureClass.leans_on."""

    key: str
    log_prefix: str = ""  # the source is present when a log id seen starts with this ...
    log_contains: str = ""  # ... or contains this
    gap: str = ""

    def present(self, logs_seen: set[str]) -> bool:
        return any((self.log_prefix and log.startswith(self.log_prefix)) or (self.log_contains and self.log_contains in log)
                   for log in logs_seen)


VERDICT_SOURCES: dict[str, VerdictSource] = {s.key: s for s in (
    VerdictSource("serial_console", log_prefix="serialconsole",
                  gap="no serial console output: kernel messages (PCIe/AER, driver errors) of the nodes could not be checked"),
    VerdictSource("autoscaler", log_contains="cluster-autoscaler",
                  gap="no cluster autoscaler visibility log (container.googleapis.com/cluster-autoscaler-visibility): whether "
                      "a scale-up was tried and why it failed (quota, stockout, reservation), or why a node was scaled down, "
                      "is taken from events only"),
    VerdictSource("gce_audit", log_prefix="cloudaudit.googleapis.com",
                  gap="no Compute Engine audit logs (cloudaudit.googleapis.com/system_event): whether the VM was preempted, "
                      "hit a host error or was stopped for host maintenance is inferred from the node, not confirmed"),
)}
