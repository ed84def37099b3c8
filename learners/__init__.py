"""Reference private bandit learners.

* :mod:`learners.protocols` — the randomizer / secure aggregation / shuffler / analyzer template;
* :mod:`learners.environments` and :mod:`learners.datasets` — bandit instances (synthetic and
  clustered learning-to-rank data) on common random numbers;
* :mod:`learners.mab` — batched successive elimination in every trust model of the distributed
  MAB paper;
* :mod:`learners.experiment` and the ``dp-regret`` CLI — configs, seeded and resumable runs,
  results folders and plots.
"""
