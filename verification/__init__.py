"""dpcert verification: the library checked against itself and against samples.

* :mod:`verification.goodness_of_fit` — samplers against their exact PMFs (chi-square, G-test,
  moments);
* :mod:`verification.exactness` — every published closed form against the exact value;
* :mod:`verification.audit` — a black-box empirical ε lower bound (Clopper–Pearson on held-out
  samples), chunked, optionally on a Dask cluster;
* :mod:`verification.symbolic` — sympy proofs of the identities the accounting relies on;
* :mod:`verification.broken` — mechanisms with known defects, which the auditor must flag;
* :mod:`verification.federated` — the federated LinUCB audits of Zhou & Chowdhury 2024: Dubey &
  Pentland 2020's schedule side channel (Example 3.1), the aggregate tree noise, the tree's exact
  accounting, within-batch adaptivity.

The command line is ``dp-audit`` (``python -m verification``).
"""
