"""``python -m learners`` is the ``dp-regret`` command."""

import sys

from learners.cli import main

sys.exit(main())
