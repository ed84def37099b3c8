"""How much noise for a target (ε, δ)? Certified answers for the discrete noise real systems add.

Run: ``python examples/noise_for_target.py`` (seconds). Every number printed is certified: a
calibrated noise level is rounded toward more noise, and the ε it achieves is an upper bound.
"""

from __future__ import annotations

from fractions import Fraction

from accounting import Accountant, AdditiveNoise, DistributedSum, Gaussian, Skellam, calibrate, subsampling

EPSILON, DELTA, USERS = 1.0, 1e-6, 4096

# 1. Distributed noise under secure aggregation: each of 4096 users adds a Skellam share.
skellam = calibrate("skellam", EPSILON, DELTA, users=USERS)
print(f"Skellam: total variance {skellam.value:.6g}, each user adds {skellam.share}")
print(f"  certified ε = {float(skellam.epsilon)!r} <= {EPSILON} (route {skellam.route})")

# 2. The same target with discrete Gaussian shares (their sum is not a discrete Gaussian: its
#    exact privacy comes from the exact convolution).
dgauss = calibrate("discrete-gaussian", EPSILON, DELTA, users=16)
print(f"discrete Gaussian: σ per user {dgauss.value:.6g} for 16 users, ε = {float(dgauss.epsilon)!r}")

# 3. The neighbouring relation matters: under add-remove a removed user takes their share along,
#    so the variance changes too, and no amount of noise brings ε below a floor (about 0.59 at
#    δ = 1e-6 for 16 users): compare the two relations on the same release.
release = DistributedSum(Skellam(Fraction(10_000, 16)), users=16)
for relation in ("replace-one", "add-remove"):
    eps = Accountant(relation).compose(release).epsilon(DELTA)
    print(f"16 Skellam shares, total variance 1e4, {relation}: ε = {float(eps):.4f}")


# 4. Any mechanism: the least σ of a Poisson-subsampled Gaussian (q = 0.01) over 1000 steps.
def dp_sgd(sigma: float) -> Accountant:
    release = subsampling.PoissonSampled(AdditiveNoise(Gaussian(sigma)), 0.01)
    return Accountant("add-remove").compose(release, 1000)


sgd = calibrate(dp_sgd, EPSILON, 1e-5, rtol=1e-4, guess=1.0)
print(f"DP-SGD (q = 0.01, 1000 steps): σ = {sgd.value:.6g}, certified ε = {float(sgd.epsilon)!r}")
