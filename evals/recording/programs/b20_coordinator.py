"""jax.distributed.initialize as process 3 of 4 to a coordinator named by a headless-service DNS name that does not
resolve here (no network), with a 12 s initialization timeout."""

import jax

from _common import note

address = "rl-actor-v5e-coord-0-0.rl-actor-v5e:8476"
print(f"jax.distributed.initialize(coordinator_address={address!r}, num_processes=4, process_id=3)")
note("initialization_timeout=12 (default 300) so the recording ends in time")
jax.distributed.initialize(coordinator_address=address, num_processes=4, process_id=3, local_device_ids=[0],
                           initialization_timeout=12)
print(f"devices: {jax.devices()}")
