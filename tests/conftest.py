"""Test configuration: hypothesis runs a fixed, reproducible set of examples in CI.

``pytest --hypothesis-profile=explore`` draws fresh random examples instead (to hunt for new
counterexamples locally); a failure found there should become a regression test.
"""

from __future__ import annotations

from hypothesis import settings

settings.register_profile("default", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("explore", derandomize=False, deadline=None, max_examples=200)
settings.load_profile("default")


def _isolated_answer_cache() -> None:
    """The suite's certified answers go to one cache folder of this test session (shared by the
    xdist workers and the CLI subprocesses it starts), never to the user's cache directory: a
    test always starts cold, and an answer a session computes twice is computed once."""
    import atexit
    import os
    import shutil
    import tempfile
    from pathlib import Path

    from accounting.answers import CACHE_DIR_ENV

    if CACHE_DIR_ENV not in os.environ:
        # xdist workers inherit the controller's environment: the controller picks the folder
        folder = Path(tempfile.mkdtemp(prefix="dpcert-test-answers-"))
        os.environ[CACHE_DIR_ENV] = str(folder)
        atexit.register(shutil.rmtree, folder, ignore_errors=True)


_isolated_answer_cache()
