"""The dynamic batcher of fw.inference.serving (`ModelRunner`) with stand-in
predictors that record every call: how jobs are grouped (row limit, delay, shapes,
order), that each job gets its own rows back, that one bad job does not fail the
others, the queue bound and shutdown. Jobs are queued before the runner starts, so
the grouping is deterministic."""

import logging
import threading

import numpy as np
import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from fw.inference.serving.batcher import ModelRunner  # noqa: E402
from fw.inference.serving.errors import RequestError  # noqa: E402
from fw.inference.serving.model import ModelSpec, TensorSpec  # noqa: E402
from fw.inference.serving.options import ServingOptions  # noqa: E402

F32 = np.dtype("float32")
WAIT_S = 30.0  # generous: the machine may be busy; nothing here should take long


class Recorder:
    """A stand-in Predictor: output_0 = 2x + 1 per row, output_1 = the row sums;
    records the shapes of every call (shared by its clones); raises for rows
    starting with 666."""

    def __init__(self, calls=None, reduce_rows=False):
        self.calls = [] if calls is None else calls
        self.reduce_rows = reduce_rows

    def clone(self):
        return Recorder(self.calls, self.reduce_rows)

    def get_input_names(self):
        return ["x"]

    def run(self, inputs):
        (x,) = inputs
        self.calls.append(x.shape)
        if (x[..., 0] == 666).any():
            raise ValueError("666 is not allowed")
        y = 2 * x + 1
        if self.reduce_rows:  # a model that mixes rows: one row for the whole batch
            return [y.sum(0, keepdims=True), x.sum(0, keepdims=True).sum(-1)]
        return [y, x.reshape(len(x), -1).sum(-1)]


def spec(shape=(-1, 3), out_lead=-1):
    return ModelSpec("rec", (TensorSpec("x", shape, F32),),
                     (TensorSpec("output_0", (out_lead,) + tuple(shape[1:]), F32),
                      TensorSpec("output_1", (out_lead,), F32)))


class Results:
    """Collects what each job is answered; `wait` bounds the wait."""

    def __init__(self):
        self.done = {}
        self.cond = threading.Condition()

    def callback(self, key):
        def on_done(outs, error):
            with self.cond:
                assert key not in self.done, f"job {key} answered twice"
                self.done[key] = (outs, error)
                self.cond.notify_all()
        return on_done

    def wait(self, keys):
        with self.cond:
            ok = self.cond.wait_for(lambda: all(k in self.done for k in keys), WAIT_S)
        assert ok, f"jobs {[k for k in keys if k not in self.done]} not answered in {WAIT_S} s"
        return [self.done[k] for k in keys]


def runner_with(jobs, pred=None, sp=None, **opts):
    """A runner with `jobs` (arrays) queued before it starts; returns it, the
    recorder and the answers in job order."""
    pred = pred or Recorder()
    o = dict(max_batch_size=8, batch_timeout_ms=20.0)
    o.update(opts)
    r = ModelRunner("rec", pred, sp or spec(), ServingOptions(**o))
    res = Results()
    for k, x in enumerate(jobs):
        r.submit(r.job([x], res.callback(k)))
    r.start()
    try:
        answers = res.wait(range(len(jobs)))
    finally:
        assert r.close(WAIT_S)
    return r, pred, answers


def rows(n, start=0, width=3):
    return (np.arange(n * width, dtype=np.float32).reshape(n, width) + 100 * start)


def check_alone(x, outs):
    assert len(outs) == 2
    assert np.array_equal(outs[0], 2 * x + 1) and outs[0].shape == x.shape
    assert np.array_equal(outs[1], x.reshape(len(x), -1).sum(-1))


def test_queued_jobs_are_batched_up_to_the_row_limit_in_order():
    xs = [rows(n, k) for k, n in enumerate([3, 2, 3, 4, 1])]
    _, pred, answers = runner_with(xs)
    assert pred.calls == [(8, 3), (5, 3)]  # 3+2+3 fills 8 rows; 4+1 after the delay
    for x, (outs, err) in zip(xs, answers):
        assert err is None
        check_alone(x, outs)


def test_jobs_with_other_trailing_shapes_go_in_another_batch():
    xs = [rows(2, 0, 3), rows(2, 1, 3), rows(1, 2, 4), rows(1, 3, 4)]
    _, pred, answers = runner_with(xs, sp=spec((-1, -1)))
    assert pred.calls == [(4, 3), (2, 4)]
    for x, (outs, err) in zip(xs, answers):
        assert err is None
        check_alone(x, outs)


def test_a_job_over_the_row_limit_runs_alone_and_order_is_kept():
    xs = [rows(2, 0), rows(20, 1), rows(2, 2)]
    _, pred, answers = runner_with(xs)
    assert pred.calls == [(2, 3), (20, 3), (2, 3)]
    for x, (outs, err) in zip(xs, answers):
        assert err is None
        check_alone(x, outs)


@pytest.mark.parametrize("why", ["static batch dim", "batching off"])
def test_without_batching_each_job_runs_alone(why):
    xs = [rows(2, k) for k in range(3)]
    if why == "static batch dim":
        _, pred, answers = runner_with(xs, sp=spec((2, 3), out_lead=2))
    else:
        _, pred, answers = runner_with(xs, max_batch_size=1)
    assert pred.calls == [(2, 3)] * 3
    for x, (outs, err) in zip(xs, answers):
        assert err is None
        check_alone(x, outs)


def test_a_job_that_makes_the_model_raise_fails_alone():
    xs = [rows(1, 0), rows(2, 1), rows(1, 2)]
    xs[1][1, 0] = 666
    _, pred, answers = runner_with(xs)
    assert pred.calls[0] == (4, 3)  # tried together first, then one by one
    assert sorted(pred.calls[1:]) == [(1, 3), (1, 3), (2, 3)]
    check_alone(xs[0], answers[0][0])
    check_alone(xs[2], answers[2][0])
    outs, err = answers[1]
    assert outs is None and isinstance(err, RequestError) and err.status == 500
    assert err.message == ("model 'rec' failed on this request: ValueError: 666 is not "
                           "allowed")


def test_a_model_that_mixes_rows_stops_batching(caplog):
    xs = [rows(1, 0), rows(2, 1), rows(1, 2)]
    with caplog.at_level(logging.WARNING, logger="fw.inference.serving"):
        r, pred, answers = runner_with(xs, pred=Recorder(reduce_rows=True))
    assert not r.batching and "dynamic batching is off" in caplog.text
    assert pred.calls == [(4, 3), (1, 3), (2, 3), (1, 3)]
    for x, (outs, err) in zip(xs, answers):
        assert err is None
        assert np.array_equal(outs[0], (2 * x + 1).sum(0, keepdims=True))


def test_the_queue_is_bounded_and_cancelled_jobs_are_skipped():
    r = ModelRunner("rec", Recorder(), spec(), ServingOptions(max_queue=2))
    res = Results()
    jobs = [r.job([rows(1, k)], res.callback(k)) for k in range(3)]
    r.submit(jobs[0])
    r.submit(jobs[1])
    with pytest.raises(RequestError) as e:
        r.submit(jobs[2])
    assert e.value.status == 503 and "2 requests waiting" in e.value.message
    jobs[0].cancelled = True  # its client gave up: the model never sees it
    r.start()
    ((outs, err),) = res.wait([1])
    check_alone(rows(1, 1), outs)
    assert r.close(WAIT_S)
    assert 0 not in res.done
    with pytest.raises(RequestError, match="shutting down") as e:
        r.submit(jobs[2])
    assert e.value.status == 503


def test_close_answers_every_queued_job_first():
    pred = Recorder()
    r = ModelRunner("rec", pred, spec(), ServingOptions(max_batch_size=2, batch_timeout_ms=0,
                                                        threads_per_model=2))
    res = Results()
    xs = [rows(1, k) for k in range(9)]
    for k, x in enumerate(xs):
        r.submit(r.job([x], res.callback(k)))
    r.start()
    assert r.close(WAIT_S)
    assert sorted(res.done) == list(range(9))
    for k, x in enumerate(xs):
        check_alone(x, res.done[k][0])
    assert sum(s[0] for s in pred.calls) == 9 and max(s[0] for s in pred.calls) <= 2


def test_concurrent_submitters_each_get_their_own_rows():
    pred = Recorder()
    r = ModelRunner("rec", pred, spec(), ServingOptions(max_batch_size=16, batch_timeout_ms=1,
                                                        threads_per_model=2))
    r.start()
    res = Results()
    xs = {k: rows(1 + k % 5, k) for k in range(200)}

    def client(keys):
        for k in keys:
            r.submit(r.job([xs[k]], res.callback(k)))

    threads = [threading.Thread(target=client, args=(range(i, 200, 4),)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT_S)
    answers = res.wait(range(200))
    assert r.close(WAIT_S)
    for k, (outs, err) in enumerate(answers):
        assert err is None
        check_alone(xs[k], outs)
