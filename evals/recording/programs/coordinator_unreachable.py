"""jax.distributed.initialize to a coordinator that cannot be reached, as process 1 of 2 (timeout 20 s)."""

import jax

from _common import note

address = "10.84.3.17:8476"  # a pod IP of a coordinator that is gone
print(f"initializing jax.distributed: coordinator {address}, process 1 of 2")
note("initialization_timeout=20 (default 300) so the recording ends in time")
jax.distributed.initialize(coordinator_address=address, num_processes=2, process_id=1, local_device_ids=[0],
                           initialization_timeout=20)
print(f"devices: {jax.devices()}")
