"""pathways-workload: root-cause diagnosis of Pathways-on-Cloud (JAX on TPU) workloads on GKE."""

__version__ = "0.1.0"
