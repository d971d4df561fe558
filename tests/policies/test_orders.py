"""Queue orders read annotations only, and degrade to submission order without them."""

import math

import pytest
from helpers import job

from schedmate.policies import ORDERS
from schedmate.records import Annotation, DurationEstimate
from schedmate.sim.state import JobState, Status


def waiting(id: str, t: float, gpus: int, predicted: float | None, truth: float = 1000.0) -> JobState:
    ann = Annotation(job_id=id, predicted_duration=DurationEstimate.point(predicted) if predicted else None)
    return JobState(job=job(id, t, gpus, truth), idx=0, annotation=ann, status=Status.waiting)


CASES = [
    ("fifo goes by submission time", "fifo", ["b", "a", "c"]),
    ("sjf goes by predicted duration", "sjf", ["c", "a", "b"]),
    ("qssf goes by predicted GPU-time", "qssf", ["c", "b", "a"]),
    ("srtf goes by predicted remaining time", "srtf", ["c", "a", "b"]),
]


@pytest.mark.parametrize("name,order,expected", CASES)
def test_order_table(name, order, expected):
    jobs = [waiting("a", 10, 8, 100), waiting("b", 5, 1, 500), waiting("c", 20, 2, 10)]
    o = ORDERS.create(order)
    assert [js.job.id for js in sorted(jobs, key=lambda j: o.key(j, 30))] == expected, name


def test_orders_never_read_the_true_duration():
    """Same predictions, wildly different truths: the order does not change."""
    a = [waiting("a", 1, 1, 100, truth=1), waiting("b", 2, 1, 50, truth=10_000)]
    o = ORDERS.create("sjf")
    assert [js.job.id for js in sorted(a, key=lambda j: o.key(j, 5))] == ["b", "a"]


def test_jobs_without_a_prediction_sort_after_predicted_ones_in_submission_order():
    jobs = [waiting("x", 1, 1, None), waiting("y", 2, 1, 900), waiting("z", 0, 1, None)]
    o = ORDERS.create("sjf")
    assert [js.job.id for js in sorted(jobs, key=lambda j: o.key(j, 5))] == ["y", "z", "x"]
    assert o.key(jobs[0], 5)[0] == math.inf


def test_tiresias_levels_follow_attained_gpu_service():
    o = ORDERS.create("tiresias")
    js = waiting("a", 0, 4, None)
    js.status = Status.running
    js.last_start = 0
    assert o.level(js, 899) == 0 and o.level(js, 900) == 1  # 4 GPUs x 900 s = 3,600 GPU-s
    assert o.next_key_change(js, 100) == pytest.approx(900)


def test_tiresias_promotes_a_starving_job_back_to_the_top_queue():
    o = ORDERS.create("tiresias")
    js = waiting("a", 0, 1, None)
    js.executed_s = 5000  # queue 1
    js.eligible_since = 10_000
    assert o.level(js, 10_000) == 1
    assert o.next_key_change(js, 10_000) == 10_000 + 50_000
    assert o.level(js, 60_000) == 0


def test_an_unknown_order_name_is_a_clear_error():
    with pytest.raises(ValueError, match="Unknown queue order"):
        ORDERS.create("lottery")
