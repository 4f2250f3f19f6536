"""`python -m pathways_workload.evals.builder`: the builder's command line."""

import sys

from .cli import main

sys.exit(main())
