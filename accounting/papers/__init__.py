"""The recipes of each paper: theorem variants, their parameters (``g``, ``τ``, ``m``, σ0) and the
closed forms a paper states for its own protocols, built from the generic results of
:mod:`accounting` (noise, bounds, amplification, summation, composition).

One module per paper (the papers' notes are in ``papers/``):

* :mod:`accounting.papers.distributed_dp_mab` — Chowdhury & Zhou 2023 (ICLR), "Distributed
  differential privacy in multi-armed bandits": the protocol variants of Theorems 1–6, their
  per-batch parameters, the closed forms of Theorems 2 and 4, and Theorem 3's relaxed secure
  aggregation split;
* :mod:`accounting.papers.federated_lcb` — Zhou & Chowdhury 2024 (ICLR), "On differentially
  private federated linear contextual bandits": Lemma F.2 and the σ0 of Theorem 5.3.

The shuffle summation protocols that Li, Zhou & Ji 2022 (DP-DPE) and Zhou & Chowdhury 2024 run are
Cheu et al. 2021's, generic: :mod:`accounting.summation`. Imports point one way: these modules use
the generic ones, never the reverse; the :mod:`accounting` package root re-exports their names.
"""
