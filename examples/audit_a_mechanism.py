"""Audit a mechanism from samples, with sample-size guidance and the exact ε beside the bound.

Run: ``python examples/audit_a_mechanism.py`` (about 20 s). The auditor's ε_lb is a lower bound
that holds with 95% confidence; the Accountant's ε is the exact (certified) value it approaches.
A broken mechanism (the noise scale of the released code, ten times too small) is caught.
"""

from __future__ import annotations

import math

from scipy import stats

from accounting import AdditiveNoise, DiscreteLaplace
from verification.audit import additive_pair, audit

SCALE, CLAIM = 10.0, 0.1  # Lap_Z(b = 10) on a sensitivity-1 count is exactly 0.1-DP
exact = float(AdditiveNoise(DiscreteLaplace(SCALE)).epsilon(1e-12))
print(f"exact ε of Lap_Z({SCALE:g}): {exact:.6f} (certified)")

# Sample-size guidance: with n samples per side, the best event {y >= 1} has P = 1/(1+q) and
# Q = q/(1+q) (q = e^{-1/b}); Clopper-Pearson at 95% then bounds ε from below by about
# ln((P - z sqrt(P(1-P)/n)) / (Q + z sqrt(Q(1-Q)/n))).
q = math.exp(-1 / SCALE)
p_event, q_event = 1 / (1 + q), q / (1 + q)
z = stats.norm.ppf(0.975)
for n in (10**4, 10**5, 10**6, 10**7):
    p_low = p_event - z * math.sqrt(p_event * (1 - p_event) / n)
    q_high = q_event + z * math.sqrt(q_event * (1 - q_event) / n)
    print(f"  n = {n:>8}: expected ε_lb ≈ {max(0.0, math.log(p_low / q_high)):.4f}")

result = audit(additive_pair(DiscreteLaplace(SCALE)), claimed_epsilon=CLAIM, samples=1_000_000, seed=0)
print(f"correct mechanism: ε_lb = {result.epsilon_lower:.4f} <= exact {exact:.4f}: {result.verdict}")

broken = audit(additive_pair(DiscreteLaplace(SCALE / 10)), claimed_epsilon=CLAIM, samples=200_000, seed=1)
print(f"10x too small a scale, claiming ε = {CLAIM}: ε_lb = {broken.epsilon_lower:.4f}: {broken.verdict}")
assert result.verdict == "consistent"
assert broken.verdict == "violation"
