"""``python -m agentdescent_sampling``: the ``agentdescent-sampling`` command."""

import sys

from .cli import main

sys.exit(main())
