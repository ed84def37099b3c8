"""``python -m verification`` is the ``dp-audit`` command."""

import sys

from verification.cli import main

sys.exit(main())
