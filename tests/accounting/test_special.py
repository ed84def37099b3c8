"""The certified special functions of :mod:`accounting.special`."""

from __future__ import annotations

from mpmath import iv, mp

from accounting.certified import lower, precision, upper
from accounting.special import erfc


def test_erfc_enclosure_against_higher_precision() -> None:
    """The one trust placed in :func:`mpmath.erfc` (no interval erfc exists): checked at 3x the bits."""
    for u in ("0.001", "0.7", "3.3", "9.5", "27.1", "100.3", "1e4"):
        with precision(30):
            got = erfc(iv.mpf(u))
            width = upper(got) - lower(got)
            with mp.workprec(3 * iv.prec):
                exact = mp.erfc(mp.mpf(u))
            assert lower(got) <= exact <= upper(got)
            assert width <= exact * mp.ldexp(1, -100)


def test_erfc_over_a_wide_interval_holds_both_ends() -> None:
    """The spread over ``u`` is bounded by the derivative: the enclosure holds erfc at both ends."""
    with precision(30):
        got = erfc(iv.mpf(["0.5", "0.75"]))
        with mp.workprec(3 * iv.prec):
            ends = (mp.erfc(mp.mpf("0.5")), mp.erfc(mp.mpf("0.75")))
        assert all(lower(got) <= e <= upper(got) for e in ends)
        assert lower(got) >= 0
        assert upper(got) <= 2
