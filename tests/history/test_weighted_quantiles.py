import math

import numpy as np
import pytest

from schedmate.history.predictor import calibration
from schedmate.history.retriever import estimate_from_log_samples, weighted_quantile
from schedmate.records import DurationEstimate


def test_equal_weights_give_the_midpoint_median():
    assert weighted_quantile([4, 1, 3, 2], [1, 1, 1, 1], 0.5) == pytest.approx(2.5)


def test_a_heavier_value_pulls_the_median_towards_it():
    # positions: 10 at (3/2)/4 = 0.375, 100 at (3 + 1/2)/4 = 0.875 -> q0.5 = 10 + (0.125/0.5) * 90
    assert weighted_quantile([10, 100], [3, 1], 0.5) == pytest.approx(32.5)


def test_quantiles_beyond_the_outer_midpoints_are_clamped_to_the_extremes():
    q = weighted_quantile([1, 2, 3, 4], [1, 1, 1, 1], [0.0, 0.1, 0.9, 1.0])
    assert q.tolist() == pytest.approx([1.0, 1.0, 4.0, 4.0])


def test_zero_weight_values_are_ignored():
    assert weighted_quantile([1, 50, 1000], [0, 1, 0], [0.1, 0.5, 0.9]).tolist() == [50, 50, 50]


def test_bad_weights_are_refused_with_a_clear_error():
    with pytest.raises(ValueError, match="no values"):
        weighted_quantile([], [], 0.5)
    with pytest.raises(ValueError, match="all weights are zero"):
        weighted_quantile([1, 2], [0, 0], 0.5)
    with pytest.raises(ValueError, match=">= 0"):
        weighted_quantile([1, 2], [1, -1], 0.5)


def test_an_estimate_from_log_samples_is_ordered_and_maps_back_to_seconds():
    est = estimate_from_log_samples(np.log1p([100.0, 100.0, 100.0]), [1, 2, 3])
    assert est.p10 == pytest.approx(100.0) and est.p50 == pytest.approx(100.0) and est.p90 == pytest.approx(100.0)
    est = estimate_from_log_samples(np.log1p([10.0, 1000.0]), [1, 1])
    assert est.p10 < est.p50 < est.p90
    # the median of two equally weighted values in log(1+s) is their geometric mean (in 1+s)
    assert est.p50 == pytest.approx(math.sqrt(11 * 1001) - 1)


def test_calibration_counts_truths_below_each_quantile():
    preds = [DurationEstimate(p10=10, p50=20, p90=30), None, DurationEstimate(p10=1, p50=2, p90=3)]
    cal = calibration(preds, [25.0, 7.0, 0.5])
    assert cal == {"coverage": pytest.approx(2 / 3), "below_p10": 0.5, "below_p50": 0.5, "below_p90": 1.0}
