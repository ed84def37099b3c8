"""``python -m accounting.cli`` is the ``dp-account`` command (as ``python -m accounting``)."""

import sys

from accounting.cli import main

sys.exit(main())
