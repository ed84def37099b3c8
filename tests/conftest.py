"""Test configuration: hypothesis runs a fixed, reproducible set of examples in CI.

``pytest --hypothesis-profile=explore`` draws fresh random examples instead (to hunt for new
counterexamples locally); a failure found there should become a regression test.
"""

from __future__ import annotations

from hypothesis import settings

settings.register_profile("default", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("explore", derandomize=False, deadline=None, max_examples=200)
settings.load_profile("default")
