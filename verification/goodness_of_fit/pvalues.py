"""Exact p-values of the chi-square law, finite far below the float range.

``P(χ²_dof >= statistic)`` is the regularized upper incomplete gamma function
``Q(dof/2, statistic/2)`` (the chi-square survival function); scipy's ``logsf`` gives it to
about ``10^-300``, mpmath beyond, so a gross misfit still reports how far off it is.
"""

from __future__ import annotations

import math

from mpmath import mp

__all__ = ["format_p", "log10_chi2_sf"]


def log10_chi2_sf(statistic: float, dof: int) -> float:
    """``log10 P(χ²_dof >= statistic)``, finite far below the float range (mpmath when scipy underflows)."""
    import scipy.stats

    if math.isinf(statistic):
        return -math.inf
    log_sf = float(scipy.stats.chi2.logsf(statistic, dof))
    if math.isfinite(log_sf):
        return log_sf / math.log(10)
    with mp.workdps(20):
        return float(mp.log10(mp.gammainc(mp.mpf(dof) / 2, mp.mpf(statistic) / 2, mp.inf, regularized=True)))


def format_p(p_value: float, log10_p: float) -> str:
    """A p-value as a report prints it: ``0.0123``, or ``10^-412.3`` where the float underflows."""
    if p_value > 0:
        return f"{p_value:.3g}"
    return f"10^{log10_p:.1f}"
