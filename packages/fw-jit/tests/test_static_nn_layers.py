"""fw.static.nn layer functions and the paddle.static extras: Executor.run values
against real Paddle 3.3 (fixtures/paddle_static_nn.npz, made by
fixtures/gen_paddle_static_nn.py) and against fw's dygraph layers with the same weights."""

import os

import numpy as np
import pytest

import fw

FIX = np.load(os.path.join(os.path.dirname(__file__), "fixtures", "paddle_static_nn.npz"))


@pytest.fixture
def static():
    fw.enable_static()
    try:
        yield
    finally:
        fw.disable_static()


def attr(a):
    return fw.ParamAttr(initializer=fw.nn.initializer.Assign(np.asarray(a)))


def run_static(key, build, n_in=1):
    feeds = [FIX[f"{key}/in{i}"] for i in range(n_in)]
    main = fw.static.Program()
    with fw.static.program_guard(main, fw.static.Program()):
        vs = [fw.static.data(f"in{i}", list(a.shape), str(a.dtype)) for i, a in enumerate(feeds)]
        y = build(*vs)
    exe = fw.static.Executor(fw.CPUPlace())
    exe.run(fw.static.default_startup_program())
    (out,) = exe.run(main, feed={f"in{i}": a for i, a in enumerate(feeds)}, fetch_list=[y])
    return out, main


def P(key, n):
    return FIX[f"{key}/{n}"]


CASES = {
    "conv2d": lambda x: fw.static.nn.conv2d(x, 4, 3, stride=2, padding=1,
                                            param_attr=attr(P("conv2d", "w")),
                                            bias_attr=attr(P("conv2d", "b")), act="relu"),
    "conv2d_transpose": lambda x: fw.static.nn.conv2d_transpose(
        x, 2, filter_size=3, stride=2, param_attr=attr(P("conv2d_transpose", "w")),
        bias_attr=attr(P("conv2d_transpose", "b"))),
    "conv3d": lambda x: fw.static.nn.conv3d(x, 3, 2, param_attr=attr(P("conv3d", "w")),
                                            bias_attr=attr(P("conv3d", "b"))),
    "conv3d_transpose": lambda x: fw.static.nn.conv3d_transpose(
        x, 3, filter_size=2, param_attr=attr(P("conv3d_transpose", "w")),
        bias_attr=attr(P("conv3d_transpose", "b"))),
    "batch_norm_test": lambda x: fw.static.nn.batch_norm(
        x, is_test=True, param_attr=attr(P("batch_norm_test", "w")),
        bias_attr=attr(P("batch_norm_test", "b"))),
    "batch_norm_train": lambda x: fw.static.nn.batch_norm(
        x, momentum=0.8, param_attr=attr(P("batch_norm_train", "w")),
        bias_attr=attr(P("batch_norm_train", "b")), moving_mean_name="bn_mm",
        moving_variance_name="bn_mv"),
    "embedding": lambda i: fw.static.nn.embedding(i, [10, 4], padding_idx=2,
                                                  param_attr=attr(P("embedding", "w"))),
    "group_norm": lambda x: fw.static.nn.group_norm(x, 3, param_attr=attr(P("group_norm", "w")),
                                                    bias_attr=attr(P("group_norm", "b"))),
    "instance_norm": lambda x: fw.static.nn.instance_norm(
        x, param_attr=attr(P("instance_norm", "w")), bias_attr=attr(P("instance_norm", "b"))),
    "layer_norm": lambda x: fw.static.nn.layer_norm(
        x, begin_norm_axis=1, param_attr=attr(P("layer_norm", "w")),
        bias_attr=attr(P("layer_norm", "b"))),
    "prelu_channel": lambda x: fw.static.nn.prelu(x, "channel",
                                                  param_attr=attr(P("prelu_channel", "w"))),
    "prelu_element": lambda x: fw.static.nn.prelu(x, "element",
                                                  param_attr=attr(P("prelu_element", "w"))),
    "row_conv": lambda x: fw.static.nn.row_conv(x, 2, param_attr=attr(P("row_conv", "w"))),
    "fc": lambda x: fw.static.nn.fc(x, 5, num_flatten_dims=2, weight_attr=attr(P("fc", "w")),
                                    bias_attr=attr(P("fc", "b"))),
}


@pytest.mark.parametrize("key", sorted(CASES))
def test_layer_matches_paddle(static, key):
    out, main = run_static(key, CASES[key])
    ref = FIX[f"{key}/out"]
    assert out.shape == ref.shape
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)
    # the parameters were captured by the program, not baked in as constants
    assert main.all_parameters()
    if key == "batch_norm_train":  # the moving statistics one run leaves
        np.testing.assert_allclose(main.captured["bn_mm"].numpy(), P(key, "mean"), rtol=1e-5,
                                   atol=1e-6)
        np.testing.assert_allclose(main.captured["bn_mv"].numpy(), P(key, "var"), rtol=1e-5,
                                   atol=1e-6)


def test_bilinear_tensor_product_matches_paddle(static):
    k = "bilinear_tensor_product"
    out, _ = run_static(k, lambda x, y: fw.static.nn.bilinear_tensor_product(
        x, y, 2, param_attr=attr(P(k, "w")), bias_attr=attr(P(k, "b"))), n_in=2)
    np.testing.assert_allclose(out, FIX[f"{k}/out"], rtol=1e-4, atol=1e-4)


def test_static_matches_dygraph_layers(static):
    """The static layer functions and fw.nn's dygraph layers agree given the same weights."""
    x = FIX["conv2d/in0"]
    main = fw.static.Program()
    with fw.static.program_guard(main):
        xv = fw.static.data("x", list(x.shape), "float32")
        c = fw.static.nn.conv2d(xv, 4, 3, padding=1, name="c")
        bn = fw.static.nn.batch_norm(c, is_test=True, name="bn")
        ln = fw.static.nn.layer_norm(bn, begin_norm_axis=2, name="ln")
    exe = fw.static.Executor()
    got = exe.run(main, feed={"x": x}, fetch_list=[c, bn, ln])
    params = {p.name: p for p in main.captured.values()}
    fw.disable_static()
    conv = fw.nn.Conv2D(3, 4, 3, padding=1)
    conv.weight.set_value(params["c.w_0"].numpy())
    conv.bias.set_value(params["c.b_0"].numpy())
    bnl = fw.nn.BatchNorm2D(4)
    bnl.eval()
    lnl = fw.nn.LayerNorm([6, 6])
    lnl.weight.set_value(params["ln.w_0"].numpy())  # flat [36], as Paddle
    lnl.bias.set_value(params["ln.b_0"].numpy())
    ec = conv(fw.to_tensor(x))
    eb = bnl(ec)
    el = lnl(eb)
    for g, e in zip(got, (ec, eb, el)):
        np.testing.assert_allclose(g, e.numpy(), rtol=1e-5, atol=1e-5)
    fw.enable_static()


def test_paddle_parameter_names_and_shapes(static):
    main = fw.static.Program()
    with fw.static.program_guard(main):
        x = fw.static.data("x", [None, 3, 8, 8], "float32")
        fw.static.nn.conv2d(x, 5, 3, groups=1, name="cv")
        fw.static.nn.batch_norm(x, name="bnx")
        fw.static.nn.conv2d_transpose(x, 2, filter_size=2, name="ct")
    shapes = {p.name: list(p.shape) for p in main.captured.values()}
    assert shapes["cv.w_0"] == [5, 3, 3, 3] and shapes["cv.b_0"] == [5]
    assert shapes["ct.w_0"] == [3, 2, 2, 2]
    assert shapes["bnx.w_0"] == [3] and shapes["bnx.b_0"] == [3]


def test_accuracy_and_auc_match_paddle(static):
    main = fw.static.Program()
    with fw.static.program_guard(main):
        p = fw.static.data("p", [5, 2], "float32")
        lab = fw.static.data("l", [5, 1], "int64")
        acc = fw.static.accuracy(p, lab, k=1)
        auc = fw.static.auc(p, lab)[0]
    a, u = fw.static.Executor().run(main, feed={"p": FIX["metric/p"], "l": FIX["metric/l"]},
                                    fetch_list=[acc, auc])
    np.testing.assert_allclose(a, FIX["metric/acc"], rtol=1e-6)
    np.testing.assert_allclose(u, FIX["metric/auc"], rtol=1e-5)


def test_case_and_switch_case_in_program(static):
    main = fw.static.Program()
    with fw.static.program_guard(main):
        x = fw.static.data("x", [1], "float32")
        i = fw.static.data("i", [1], "int64")
        r = fw.static.nn.case([(x > 1.0, lambda: x * 10.0), (x > 0.0, lambda: x * 2.0)],
                              default=lambda: x - 5.0)
        s = fw.static.nn.switch_case(i, {0: lambda: x + 1.0, 2: lambda: x + 3.0},
                                     default=lambda: x * 0.0)
    exe = fw.static.Executor()
    for xv, want in ((2.0, 20.0), (0.5, 1.0), (-1.0, -6.0)):
        for iv, want_s in ((0, xv + 1), (2, xv + 3), (1, 0.0), (7, 0.0)):
            got_r, got_s = exe.run(main, feed={"x": np.array([xv], "float32"),
                                               "i": np.array([iv], "int64")},
                                   fetch_list=[r, s])
            np.testing.assert_allclose(got_r, [want])
            np.testing.assert_allclose(got_s, [want_s])


def test_ema_tracks_parameter_through_training(static):
    main = fw.static.Program()
    with fw.static.program_guard(main):
        x = fw.static.data("x", [4, 2], "float32")
        y = fw.static.nn.fc(x, 1, name="ema_fc", bias_attr=False)
        loss = fw.mean(y * y)
        fw.optimizer.SGD(0.1).minimize(loss)
        ema = fw.static.ExponentialMovingAverage(0.8)
        ema.update()
    w = [t for t in main.captured.values() if getattr(t, "name", "") == "ema_fc.w_0"][0]
    exe = fw.static.Executor()
    xs = np.random.default_rng(1).standard_normal((4, 2)).astype("float32")
    shadow = np.zeros_like(w.numpy())
    for _ in range(5):
        exe.run(main, feed={"x": xs}, fetch_list=[loss])
        shadow = 0.8 * shadow + 0.2 * w.numpy()  # the value after the step's update
    trained = w.numpy().copy()
    with ema.apply(exe):
        np.testing.assert_allclose(w.numpy(), shadow / (1 - 0.8 ** 5), rtol=1e-5)
    np.testing.assert_allclose(w.numpy(), trained)


def test_compiled_program_and_no_op_strategies(static):
    main = fw.static.Program()
    with fw.static.program_guard(main):
        x = fw.static.data("x", [3], "float32")
        y = fw.static.nn.prelu(x, "all")
    cp = fw.static.CompiledProgram(main, build_strategy=fw.static.BuildStrategy())
    (out,) = fw.static.Executor().run(cp, feed={"x": np.array([-4.0, 0.0, 2.0], "float32")},
                                      fetch_list=[y])
    np.testing.assert_allclose(out, [-1.0, 0.0, 2.0])
    with pytest.raises(TypeError, match="CompiledProgram"):
        fw.static.CompiledProgram("prog")


def test_create_global_var_and_parameter(static):
    main = fw.static.Program()
    with fw.static.program_guard(main):
        x = fw.static.data("x", [2], "float32")
        g = fw.static.create_global_var([2], 3.0, "float32", persistable=True, name="gv")
        w = fw.static.create_parameter([2], "float32", name="cp_w",
                                       default_initializer=fw.nn.initializer.Constant(0.5))
        y = x * g + w
    (out,) = fw.static.Executor().run(main, feed={"x": np.array([1.0, 2.0], "float32")},
                                      fetch_list=[y])
    np.testing.assert_allclose(out, [3.5, 6.5])
    assert g.stop_gradient and not w.stop_gradient


def test_unsupported_names_raise_clearly():
    for fn, match in ((fw.static.IpuStrategy, "not supported on this device"),
                      (lambda: fw.static.IpuCompiledProgram(), "not supported on this device"),
                      (fw.static.xpu_places, "not supported on this device"),
                      (lambda: fw.static.nn.sparse_embedding(fw.to_tensor([1]), [4, 2]),
                       "fw.distributed.ps"),
                      (lambda: fw.static.nn.sequence_pool(fw.ones([2, 3]), "sum"),
                       "LoD tensors are not supported")):
        with pytest.raises((RuntimeError, NotImplementedError), match=match):
            fn()


def test_bad_input_errors_name_layer_and_shapes(static):
    main = fw.static.Program()
    with fw.static.program_guard(main):
        x = fw.static.data("x", [2, 3, 4, 4], "float32")
        with pytest.raises(ValueError, match=r"static.nn.conv2d.*rank.*\[2, 3, 4\]"):
            fw.static.nn.conv2d(fw.static.data("y", [2, 3, 4], "float32"), 2, 3)
        with pytest.raises(ValueError, match=r"group_norm: channels \(3\).*groups \(2\)"):
            fw.static.nn.group_norm(x, 2)
        with pytest.raises(ValueError, match="prelu: mode"):
            fw.static.nn.prelu(x, "bogus")
        with pytest.raises(TypeError, match="embedding: input ids"):
            fw.static.nn.embedding(x, [4, 2])
        with pytest.raises(TypeError, match="switch_case: branch_index"):
            fw.static.nn.switch_case(x, [lambda: x])


def test_spectral_norm_matches_numpy():
    rng = np.random.default_rng(3)
    w = rng.standard_normal((4, 3, 2)).astype("float32")
    out = fw.static.nn.spectral_norm(fw.to_tensor(w), dim=1, power_iters=50).numpy()
    mat = np.transpose(w, (1, 0, 2)).reshape(3, -1)
    np.testing.assert_allclose(out, w / np.linalg.svd(mat, compute_uv=False)[0], rtol=1e-4)


@pytest.mark.parametrize("groups,dg,use_mask", [(1, 1, False), (2, 2, True), (1, 2, True)])
def test_deform_conv2d_static_matches_vision_op(static, groups, dg, use_mask):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 4, 6, 5)).astype("float32")
    off = (rng.standard_normal((2, 2 * dg * 6, 4, 3)) * 1.5).astype("float32")
    mask = rng.uniform(size=(2, dg * 6, 4, 3)).astype("float32") if use_mask else None
    w = rng.standard_normal((4, 4 // groups, 2, 3)).astype("float32")
    b = rng.standard_normal(4).astype("float32")
    main = fw.static.Program()
    with fw.static.program_guard(main):
        xv = fw.static.data("x", [None, 4, 6, 5], "float32")
        ov = fw.static.data("o", [None, 2 * dg * 6, 4, 3], "float32")
        mv = fw.static.data("m", [None, dg * 6, 4, 3], "float32") if use_mask else None
        y = fw.static.nn.deform_conv2d(xv, ov, mv, 4, [2, 3], stride=[2, 1], padding=[1, 0],
                                       groups=groups, deformable_groups=dg,
                                       weight_attr=attr(w), bias_attr=attr(b))
    feed = {"x": x, "o": off}
    if use_mask:
        feed["m"] = mask
    (out,) = fw.static.Executor().run(main, feed=feed, fetch_list=[y])
    fw.disable_static()
    try:
        ref = fw.vision.ops.deform_conv2d(
            fw.to_tensor(x), fw.to_tensor(off), fw.to_tensor(w), fw.to_tensor(b), stride=[2, 1],
            padding=[1, 0], deformable_groups=dg, groups=groups,
            mask=fw.to_tensor(mask) if use_mask else None).numpy()
    finally:
        fw.enable_static()
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)

def _trained_program():
    main = fw.static.Program()
    with fw.static.program_guard(main):
        x = fw.static.data("x", [4, 3], "float32")
        y = fw.static.nn.fc(x, 2, name="io_fc")
        loss = fw.mean(y * y)
        fw.optimizer.SGD(0.1).minimize(loss)
    return main, y


def test_save_load_round_trip_restores_state(static, tmp_path):
    main, y = _trained_program()
    xs = np.random.default_rng(2).standard_normal((4, 3)).astype("float32")
    exe = fw.static.Executor()
    exe.run(main, feed={"x": xs}, fetch_list=[y])
    before = exe.run(main, feed={"x": xs}, fetch_list=[y])[0]
    saved = {k: t.numpy().copy() for k, t in main.captured.items()}
    fw.static.save(main, str(tmp_path / "ck"))
    assert (tmp_path / "ck.pdparams").is_file() and (tmp_path / "ck.pdmodel").is_file()
    for t in main.captured.values():
        t.set_value(np.zeros(t.shape, t.numpy().dtype))
    fw.static.load(main, str(tmp_path / "ck"))
    for k, t in main.captured.items():
        np.testing.assert_array_equal(t.numpy(), saved[k])
    state = fw.static.load_program_state(str(tmp_path / "ck"))
    # the parameters and the optimizer's persistable learning rate, as Paddle saves
    assert {"io_fc.b_0", "io_fc.w_0"} <= set(state) and set(state) == set(saved) & set(state)
    np.testing.assert_array_equal(state["io_fc.w_0"], saved["io_fc.w_0"])
    fw.static.set_program_state(main, {"io_fc.w_0": np.ones([3, 2], "float32")})
    np.testing.assert_array_equal(main.captured["io_fc.w_0"].numpy(), np.ones([3, 2]))
    with pytest.raises(ValueError, match=r"io_fc.w_0.*\[3, 2\].*\[2, 2\]"):
        fw.static.set_program_state(main, {"io_fc.w_0": np.ones([2, 2], "float32")})
    assert before.shape == (4, 2)


def test_serialize_round_trips(static, tmp_path):
    main, y = _trained_program()
    x = main.inputs()[0]
    xs = np.ones((4, 3), "float32")
    exe = fw.static.Executor()
    exe.run(main, feed={"x": xs}, fetch_list=[y])  # one training step
    w = main.captured["io_fc.w_0"].numpy().copy()
    b = main.captured["io_fc.b_0"].numpy().copy()
    blob = fw.static.serialize_program([x], [y], program=main)
    fw.static.save_to_file(str(tmp_path / "p.bin"), blob)
    prog = fw.static.deserialize_program(fw.static.load_from_file(str(tmp_path / "p.bin")))
    got = exe.run(prog, feed={"x": xs}, fetch_list=list(prog.outputs))[0]
    # the inference program computes with the weights it was serialized with
    np.testing.assert_allclose(got, xs @ w + b, rtol=1e-5)
    pers = fw.static.serialize_persistables([x], [y], exe, program=main)
    main.captured["io_fc.w_0"].set_value(np.zeros_like(w))
    fw.static.deserialize_persistables(main, pers, exe)
    np.testing.assert_array_equal(main.captured["io_fc.w_0"].numpy(), w)
    with pytest.raises(TypeError, match="deserialize_program: data must be bytes"):
        fw.static.deserialize_program("nope")
    with pytest.raises(ValueError, match="not an fw state archive"):
        fw.static.deserialize_persistables(main, b"garbage", exe)


def test_ctr_metric_bundle_accumulates_like_paddle(static):
    main = fw.static.Program()
    with fw.static.program_guard(main):
        p = fw.static.data("cp", [3, 1], "float32")
        lab = fw.static.data("cl", [3, 1], "float32")
        accs = fw.static.ctr_metric_bundle(p, lab)
    exe = fw.static.Executor()
    cp, cl = FIX["ctr/p"], FIX["ctr/l"]
    exe.run(main, feed={"cp": cp, "cl": cl}, fetch_list=list(accs))
    exe.run(main, feed={"cp": cp[::-1].copy(), "cl": cl}, fetch_list=list(accs))
    got = np.concatenate([a.numpy().reshape(-1) for a in accs])  # the state after two runs
    np.testing.assert_allclose(got, FIX["ctr/out"], rtol=1e-5)


def test_static_pylayer_forward_and_custom_backward():
    x = fw.to_tensor([0.0, 1.0], stop_gradient=False)
    y = fw.static.nn.static_pylayer(fw.exp, [x], backward_fn=lambda dy: 2 * fw.exp(dy))
    y.sum().backward()
    np.testing.assert_allclose(y.numpy(), np.exp([0.0, 1.0]), rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([1.0, 1.0]), rtol=1e-6)  # dy = 1
    fw.enable_static()
    try:
        with fw.static.program_guard(fw.static.Program()):
            xv = fw.static.data("x", [2], "float32")
            with pytest.raises(NotImplementedError, match="static_pylayer: a custom backward"):
                fw.static.nn.static_pylayer(fw.exp, [xv], backward_fn=lambda d: d)
            with pytest.raises(NotImplementedError, match="py_func"):
                fw.static.nn.py_func(lambda a: a, xv, None)
    finally:
        fw.disable_static()


def test_nce_matches_paddle_with_deterministic_sampler(static):
    k = "nce"
    out, main = run_static(k, lambda x, y: fw.static.nn.nce(
        x, y, 5, param_attr=attr(P(k, "w")), bias_attr=attr(P(k, "b")), num_neg_samples=3,
        sampler="custom_dist", custom_dist=[0.0, 0.0, 1.0, 0.0, 0.0]), n_in=2)
    np.testing.assert_allclose(out, FIX["nce/out"], rtol=1e-4, atol=1e-5)
    assert len(main.all_parameters()) == 2  # the class weights and bias are trained


def test_nce_uniform_negatives_are_redrawn_each_run(static):
    main = fw.static.Program()
    with fw.static.program_guard(main):
        x = fw.static.data("x", [None, 4], "float32")  # a dynamic batch
        y = fw.static.data("y", [None, 1], "int64")
        cost = fw.static.nn.nce(x, y, 50, num_neg_samples=5)
    exe = fw.static.Executor()
    feed = {"x": np.ones((64, 4), "float32"), "y": np.zeros((64, 1), "int64")}
    a = exe.run(main, feed=feed, fetch_list=[cost])[0]
    b = exe.run(main, feed=feed, fetch_list=[cost])[0]
    assert a.shape == (64, 1) and np.isfinite(a).all()
    assert not np.array_equal(a, b)  # identical rows, fresh negatives per run and row


def test_fc_with_several_inputs_matches_paddle(static):
    k = "fc_multi"
    out, main = run_static(k, lambda a, b: fw.static.nn.fc(
        [a, b], 2, weight_attr=[attr(P(k, "w0")), attr(P(k, "w1"))], bias_attr=attr(P(k, "b"))),
        n_in=2)
    np.testing.assert_allclose(out, FIX[f"{k}/out"], rtol=1e-5, atol=1e-6)
    assert len(main.all_parameters()) == 3


def test_fetch_by_generated_name_and_scopes(static):
    main = fw.static.Program()
    with fw.static.program_guard(main):
        x = fw.static.data("x", [2], "float32")
        y = x * 2.0 + 1.0  # unnamed: its name is "%N"
    (out,) = fw.static.Executor().run(main, feed={"x": np.ones(2, "float32")},
                                      fetch_list=[y.name])
    np.testing.assert_allclose(out, [3.0, 3.0])
    scope = fw.static.Scope()
    with fw.static.scope_guard(scope):
        assert fw.static.global_scope() is scope
        fw.static.global_scope().var("d").get_tensor().set(np.full((2, 2), 4.0), None)
    assert fw.static.global_scope() is not scope
    np.testing.assert_array_equal(np.array(scope.find_var("d").get_tensor()), np.full((2, 2), 4.0))
    assert fw.static.global_scope().find_var("d") is None
    bs = fw.static.BuildStrategy()
    bs.reduce_strategy = fw.static.BuildStrategy.ReduceStrategy.Reduce
    assert bs.reduce_strategy == 1


def test_instance_norm_of_2d_input_is_the_bias():
    # Paddle 3.3 gives zeros (+ bias) for [N, C] input: nothing to normalise over
    y = fw.static.nn.instance_norm(fw.to_tensor(np.arange(12, dtype="float32").reshape(3, 4)),
                                   bias_attr=attr(np.arange(4, dtype="float32")))
    np.testing.assert_allclose(y.numpy(), np.tile(np.arange(4.0), (3, 1)), atol=1e-6)


def test_ema_with_thres_steps_schedules_the_decay(static):
    main = fw.static.Program()
    with fw.static.program_guard(main):
        x = fw.static.data("x", [4, 2], "float32")
        step = fw.static.data("step", [], "float32")
        y = fw.static.nn.fc(x, 1, name="ema2_fc", bias_attr=False)
        loss = fw.mean(y * y)
        fw.optimizer.SGD(0.1).minimize(loss)
        ema = fw.static.ExponentialMovingAverage(0.999, thres_steps=step)
        ema.update()
    w = main.captured["ema2_fc.w_0"]
    exe = fw.static.Executor()
    xs = np.random.default_rng(4).standard_normal((4, 2)).astype("float32")
    shadow = np.zeros_like(w.numpy())
    for t in range(3):
        exe.run(main, feed={"x": xs, "step": np.array(t, "float32")}, fetch_list=[loss])
        d = min(0.999, (1.0 + t) / (10.0 + t))
        shadow = d * shadow + (1 - d) * w.numpy()
    with ema.apply(exe):
        np.testing.assert_allclose(w.numpy(), shadow / (1 - d ** 3), rtol=1e-5)


def test_deform_conv2d_matches_paddle(static):
    k = "deform_conv2d"
    out, _ = run_static(k, lambda x, o, m: fw.static.nn.deform_conv2d(
        x, o, m, 4, [2, 3], stride=[2, 1], padding=[1, 0], groups=2, deformable_groups=2,
        weight_attr=attr(P(k, "w")), bias_attr=attr(P(k, "b"))), n_in=3)
    np.testing.assert_allclose(out, FIX[f"{k}/out"], rtol=1e-4, atol=1e-4)
