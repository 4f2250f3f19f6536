"""Recording real runtime output on a Cloud TPU: the scenario manifest, the on-device driver and the splitter."""
