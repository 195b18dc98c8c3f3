"""fw.static: Paddle-style static programs on fw's IR."""

import numpy as np
import pytest

import fw
from fw import static


@pytest.fixture
def static_mode():
    fw.enable_static()
    try:
        yield
    finally:
        fw.disable_static()


def test_mode_switches():
    assert fw.in_dynamic_mode()
    fw.enable_static()
    try:
        assert not fw.in_dynamic_mode()
        # eager code keeps working in static mode
        assert float(fw.to_tensor([1.0, 2.0]).sum()) == 3.0
    finally:
        fw.disable_static()
    assert fw.in_dynamic_mode()


def test_data_layers_executor(static_mode):
    main, start = static.Program(), static.Program()
    with static.program_guard(main, start):
        x = static.data("x", [None, 4], "float32")
        h = static.nn.fc(x, 8, activation="relu")
        out = fw.nn.functional.softmax(static.nn.fc(h, 3))
    assert static.default_main_program() is not main
    assert main.num_blocks == 1
    assert [v.name for v in main.list_vars()][0] == "x"
    assert len(main.all_parameters()) == 4
    exe = static.Executor(fw.CPUPlace())
    assert exe.run(start) == []
    xv = np.random.RandomState(0).randn(5, 4).astype("float32")
    (r,) = exe.run(main, feed={"x": xv}, fetch_list=[out])
    assert r.shape == (5, 3)
    np.testing.assert_allclose(r.sum(axis=1), np.ones(5), rtol=1e-5)
    # the same computation eagerly, from the captured parameters
    w1, b1, w2, b2 = [main.captured[a.label] for a in main.all_parameters()]
    ref = fw.nn.functional.softmax(fw.nn.functional.relu(fw.to_tensor(xv) @ w1 + b1) @ w2 + b2)
    np.testing.assert_allclose(r, ref.numpy(), rtol=1e-5, atol=1e-6)
    (t,) = exe.run(main, feed={"x": xv}, fetch_list=[out], return_numpy=False)
    assert isinstance(t, fw.Tensor)


def test_missing_feed_and_bad_feed(static_mode):
    main = static.Program()
    with static.program_guard(main):
        x = static.data("x", [2], "float32")
        y = x * 2
    exe = static.Executor()
    with pytest.raises(fw.core.errors.InvalidArgumentError, match="'x'"):
        exe.run(main, feed={}, fetch_list=[y])
    with pytest.raises(fw.core.errors.InvalidArgumentError, match="shape"):
        exe.run(main, feed={"x": np.ones(3, np.float32)}, fetch_list=[y])


def test_fetch_by_name_and_only_needed_inputs(static_mode):
    main = static.Program()
    with static.program_guard(main):
        x = static.data("x", [2], "float32")
        z = static.data("z", [2], "float32")
        y = x + 1
        y.name = "y"
        w = z * 3
    exe = static.Executor()
    (r,) = exe.run(main, feed={"x": np.ones(2, np.float32)}, fetch_list=["y"])
    np.testing.assert_allclose(r, [2.0, 2.0])
    (r2,) = exe.run(main, feed={"z": np.ones(2, np.float32)}, fetch_list=[w])
    np.testing.assert_allclose(r2, [3.0, 3.0])


def test_cond_and_while_loop(static_mode):
    main = static.Program()
    with static.program_guard(main):
        x = static.data("x", [], "float32")
        y = static.nn.cond(x > 0, lambda: x * 2, lambda: x - 1)
        i, s = static.nn.while_loop(lambda i, s: i < x, lambda i, s: [i + 1, s + i],
                                    [fw.full([], 0.0), fw.full([], 0.0)])
    text = str(main)
    assert "cond(" in text and "while(" in text
    exe = static.Executor()
    for v, ey, es in ((3.0, 6.0, 3.0), (-2.0, -3.0, 0.0)):
        ry, rs = exe.run(main, feed={"x": np.float32(v)}, fetch_list=[y, s])
        assert float(ry) == ey and float(rs) == es


def test_append_backward_and_gradients(static_mode):
    main = static.Program()
    with static.program_guard(main):
        x = static.data("x", [None, 3], "float32")
        loss = static.nn.fc(x, 1).mean()
        pg = static.append_backward(loss)
        (gx,) = static.gradients([loss], [x])
    assert [list(g.shape) for _, g in pg] == [[3, 1], [1]]
    exe = static.Executor()
    xv = np.ones((4, 3), np.float32)
    gw, gxv = exe.run(main, feed={"x": xv}, fetch_list=[pg[0][1], gx])
    np.testing.assert_allclose(gw, np.ones((3, 1)), rtol=1e-6)
    w = main.captured[pg[0][0].label].numpy()
    np.testing.assert_allclose(gxv, np.tile(w.T / 4, (4, 1)), rtol=1e-6)


def test_minimize_trains(static_mode):
    main, start = static.Program(), static.Program()
    rng = np.random.RandomState(0)
    xs = rng.randn(64, 4).astype("float32")
    ys = (xs @ np.array([[1.0], [-2.0], [0.5], [3.0]], np.float32) + 0.3).astype("float32")
    with static.program_guard(main, start):
        x = static.data("x", [None, 4])
        y = static.data("y", [None, 1])
        pred = static.nn.fc(x, 1)
        loss = fw.nn.functional.mse_loss(pred, y)
        opt = fw.optimizer.Adam(learning_rate=0.1)
        opt.minimize(loss)  # fw-nn's optimizers call fw-core's value_hooks.minimize
    assert "adam(" in str(main) and main.updates
    exe = static.Executor()
    exe.run(start)
    losses = [float(exe.run(main, feed={"x": xs, "y": ys}, fetch_list=[loss])[0])
              for _ in range(60)]
    assert losses[-1] < 0.05 * losses[0]
    # clone(for_test=True) drops the updates: evaluating changes nothing
    test_prog = main.clone(for_test=True)
    assert not test_prog.updates
    w = main.all_parameters()[0]
    before = main.captured[w.label].numpy().copy()
    exe.run(test_prog, feed={"x": xs, "y": ys}, fetch_list=["x"])
    np.testing.assert_array_equal(before, main.captured[w.label].numpy())
    exe.run(main, feed={"x": xs, "y": ys}, fetch_list=["x"])  # the step runs whatever is fetched
    assert not np.array_equal(before, main.captured[w.label].numpy())


def test_optimizer_minimize_hook(static_mode):
    """fw-nn's Optimizer.minimize on a symbolic loss goes through fw-core's hook."""
    from fw.core.ir.core import value_hooks

    assert value_hooks.minimize is not None
    main = static.Program()
    with static.program_guard(main):
        x = static.data("x", [None, 2])
        loss = static.nn.fc(x, 1).mean()
        opt = fw.optimizer.SGD(learning_rate=0.1)
        _, pg = value_hooks.minimize(opt, loss)
    assert len(pg) == 2 and "sgd(" in str(main)


def test_save_and_load_inference_model(static_mode, tmp_path):
    main = static.Program()
    with static.program_guard(main):
        img = static.data("img", [None, 6], "float32")
        label = static.data("label", [None, 1], "int64")
        pred = static.nn.fc(img, 3, activation="softmax")
        loss = fw.nn.functional.cross_entropy(pred, label)
    exe = static.Executor()
    prefix = str(tmp_path / "infer")
    path = static.save_inference_model(prefix, [img], [pred], exe, program=main)
    assert path.endswith(".fwmodel")
    prog, feeds, fetches = static.load_inference_model(prefix, exe)
    assert feeds == ["img"] and len(fetches) == 1
    assert "label" not in str(prog) and "cross_entropy" not in str(prog)
    xv = np.random.RandomState(1).randn(2, 6).astype("float32")
    (r1,) = exe.run(prog, feed={"img": xv}, fetch_list=fetches)
    (r2,) = exe.run(main, feed={"img": xv}, fetch_list=[pred])
    np.testing.assert_allclose(r1, r2, rtol=1e-6)
    norm = static.normalize_program(main, [img], [pred])
    assert [a.label for a in norm.inputs()] == ["img"] and not norm.updates
    del loss


def test_places_and_scope():
    assert len(static.cpu_places()) == 1 and len(static.cpu_places(3)) == 3
    assert isinstance(static.cuda_places(), list)
    p = static.Program()
    with static.program_guard(p):
        x = static.data("x", [None, 2])
        fw.enable_static()
        try:
            y = static.nn.fc(x, 2, name="myfc")
        finally:
            fw.disable_static()
    del y
    with static.program_guard(p):
        t = static.global_scope().find_var("myfc.w_0")
    assert t is not None and t.get_tensor().shape == [2, 2]


def test_layers_created_in_static_mode_initialise_eagerly(static_mode):
    lin = fw.nn.Linear(3, 2)
    assert isinstance(lin.weight, fw.Tensor) and lin.weight.numpy().shape == (3, 2)
    main = static.Program()
    with static.program_guard(main):
        x = static.data("x", [None, 3])
        y = lin(x)
    (r,) = static.Executor().run(main, feed={"x": np.ones((1, 3), np.float32)},
                                 fetch_list=[y])
    np.testing.assert_allclose(r, (np.ones((1, 3)) @ lin.weight.numpy() +
                                   lin.bias.numpy()), rtol=1e-6)
