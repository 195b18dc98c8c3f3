"""Program.clone: an independent structural copy (fw.core.ir.core), equal in text
to the original, keeping what the text form does not carry (source locations,
stop_gradient flags) and sharing the captured tensors."""

import numpy as np

import fw
from fw.core.ir import TensorType, building, parse, run, trace
from fw.core.ir.control import cond


def _program():
    w = fw.to_tensor(np.array([1.0, 2.0], np.float32))
    w.name, w.persistable, w.stop_gradient = "w", True, False

    def f(x):
        y = fw.scale(x * w, scale=2.0)
        z = cond(y.sum() > 0, lambda: y + 1, lambda: y - 1)
        return fw.concat([z, y], axis=0)

    return trace(f, [TensorType([2], fw.float32)]), w


def test_clone_prints_the_same_and_runs_the_same():
    p, _ = _program()
    q = p.clone()
    assert str(q) == str(p) and q == p
    assert str(parse(str(q))) == str(p)
    x = np.array([0.5, -3.0], np.float32)
    np.testing.assert_array_equal(run(q, x).numpy(), run(p, x).numpy())


def test_clone_is_independent_of_the_original():
    p, w = _program()
    before = str(p)
    q = p.clone()
    assert q.captured["w"] is w  # parameters are shared, not copied
    qops, pops = list(q.walk()), list(p.walk())
    assert all(a is not b for a, b in zip(qops, pops))
    assert not {id(v) for op in qops for v in op.results} & \
        {id(v) for op in pops for v in op.results}
    scale = next(op for op in qops if op.name == "scale")
    scale.attrs["scale"] = 5.0
    q.block.ops.pop()  # editing the copy leaves the original as it was
    assert str(p) == before


def test_clone_keeps_locations_and_stop_gradient():
    p, _ = _program()
    q = p.clone()
    for a, b in zip(p.walk(), q.walk()):
        assert a.loc == b.loc and a.loc is not None
        assert [r._sg for r in a.results] == [r._sg for r in b.results]
    assert [a._sg for a in p.block.args] == [a._sg for a in q.block.args]
    assert any(not r._sg for op in q.walk() for r in op.results)  # w requires grad


def test_clone_keeps_state_updates_on_the_copied_values():
    w = fw.to_tensor(np.array([1.0], np.float32))
    w.name, w.persistable = "w", True
    with building() as b:
        w.set_value(w * 3)
        b.set_outputs([w + 0])
    q = b.program.clone()
    (label, v), = list(q.updates)
    assert label == "w" and v.owner in list(q.walk())
