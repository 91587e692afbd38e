"""The one rounding helper of profile and queue figures (issue 8)."""

from __future__ import annotations

import math

from gpudecide.jobs.figures import rounded


def test_rounds_floats_to_the_digits_asked() -> None:
    assert rounded(2.0 / 3.0) == 0.667  # profile: 3 digits by default
    assert rounded(1234.5678, 1) == 1234.6  # queue: seconds to 1 digit


def test_nan_and_none_become_none_for_json() -> None:
    assert rounded(math.nan) is None
    assert rounded(float("nan"), 1) is None
    assert rounded(None) is None


def test_counts_stay_integers() -> None:
    assert rounded(7) == 7 and isinstance(rounded(7), int)
    assert rounded(True) is True


def test_numpy_floats_are_rounded() -> None:
    import numpy as np

    assert rounded(np.float64(0.123456)) == 0.123
    assert isinstance(rounded(np.float64(0.5)), float)
