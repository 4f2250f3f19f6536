"""`python -m pathways_workload ARGS` is `pathways-workload ARGS`."""

import sys

from .cli import main

sys.exit(main())
