"""Understanding: what the records say about this workload.

The second stage. `model` rebuilds the workload (JobSet, attempts, roles, pods, nodes, times) from records;
`signals` matches the catalog's patterns into signals; `facts` reads what a line states (codes, devices, sizes) in
context; `status` names the run's state from an ordered table; `queries` derives what to ask a live source for from
the catalog; `digest` condenses the evidence for an agent. Imports reading and the catalog, never judging or telling.
"""
