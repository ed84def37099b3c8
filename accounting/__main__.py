"""``python -m accounting`` is the ``dp-account`` command."""

import sys

from accounting.cli import main

sys.exit(main())
