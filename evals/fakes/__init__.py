"""Loopback fakes of Cloud Logging (REST) and the Kubernetes API, packaged on purpose: the fault matrix and load runs
(`python -m pathways_workload.evals.reliability`), the benchmark and the tests all drive live diagnoses against them."""
