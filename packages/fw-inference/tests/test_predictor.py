"""Predictor and handles: names, copy/zero-copy inputs, outputs, run() in both styles,
clone() under threads, clear errors, memory release, versions and enums."""

import threading

import numpy as np
import pytest

import fw
import fw.inference as infer
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ir import run
from fw.core.ir.serialize import ModelFormatError

X = np.linspace(-1, 1, 16, dtype=np.float32).reshape(2, 8)


@pytest.fixture
def pred(mlp_file):
    p, path = mlp_file
    return p, infer.create_predictor(infer.Config(path))


def test_names_and_handles(pred):
    _, pr = pred
    assert pr.get_input_names() == ["x"] and pr.get_output_names() == ["output_0"]
    h = pr.get_input_handle("x")
    assert h is pr.get_input_handle("x")
    assert h.name == "x" and h.name() == "x"
    assert h.type() is infer.DataType.FLOAT32 and h.dtype == np.float32
    assert h.shape() == [-1, 8] and h.lod() == []
    o = pr.get_output_handle("output_0")
    assert o.shape() == [-1, 4] and o.type() is infer.DataType.FLOAT32
    assert pr.get_input_tensor_shape() == {"x": [-1, 8]}
    assert "input 'x'" in repr(h) and "output_0" in repr(pr)
    with pytest.raises(InvalidArgumentError, match=r"no input named 'y'; its inputs are \['x'\]"):
        pr.get_input_handle("y")
    with pytest.raises(InvalidArgumentError, match=r"no output named 'x'; its outputs are "
                                                   r"\['output_0'\]"):
        pr.get_output_handle("x")


def test_copy_from_cpu_run_copy_to_cpu(pred):
    p, pr = pred
    want = run(p, X).numpy()
    h, o = pr.get_input_handle("x"), pr.get_output_handle("output_0")
    src = X.copy()
    h.reshape([2, 8])
    assert h.shape() == [2, 8]
    h.copy_from_cpu(src)
    src[:] = 100.0  # copied: later changes are not seen
    assert pr.run() is None
    got = o.copy_to_cpu()
    np.testing.assert_array_equal(got, want)
    assert o.shape() == [2, 4]
    got[:] = 0  # a copy: the handle's data is unchanged
    np.testing.assert_array_equal(o.copy_to_cpu(), want)
    np.testing.assert_array_equal(h.copy_to_cpu(), X)
    # lists and fw Tensors are accepted; a declared shape reshapes data of its size
    h.copy_from_cpu(X.tolist())
    pr.run()
    np.testing.assert_array_equal(o.copy_to_cpu(), want)
    h.reshape([2, 8])
    h.copy_from_cpu(fw.to_tensor(X.reshape(16)))
    pr.run()
    np.testing.assert_array_equal(o.copy_to_cpu(), want)


def test_share_external_data_is_zero_copy(pred):
    p, pr = pred
    h, o = pr.get_input_handle("x"), pr.get_output_handle("output_0")
    buf = X.copy()
    h.share_external_data(buf)
    pr.run()
    first = o.copy_to_cpu()
    buf *= 2.0  # seen by the next run: the predictor reads the caller's memory
    pr.run()
    np.testing.assert_array_equal(o.copy_to_cpu(), run(p, X * 2.0).numpy())
    assert not np.array_equal(first, o.copy_to_cpu())
    t = fw.to_tensor(X.copy())
    h.share_external_data(t)
    assert h.copy_to_cpu().tolist() == X.tolist()
    t.numpy()[0, 0] = 5.0  # the Tensor's array itself is used
    pr.run()
    assert pr._in[0] is t.numpy() or np.shares_memory(pr._in[0], t.numpy())
    with pytest.raises(InvalidTypeError, match="needs an array it can use in place"):
        h.share_external_data(X.tolist())


def test_share_external_data_through_dlpack(pred):
    torch = pytest.importorskip("torch")
    p, pr = pred
    t = torch.from_numpy(X.copy())
    pr.get_input_handle("x").share_external_data(t)
    assert np.shares_memory(pr._in[0], t.numpy())
    pr.run()
    np.testing.assert_array_equal(pr.get_output_handle("output_0").copy_to_cpu(),
                                  run(p, X).numpy())


def test_run_with_a_list(convbn_file):
    p, path = convbn_file
    pr = infer.create_predictor(infer.Config(path))
    assert pr.get_input_names() == ["image", "scale"]
    assert pr.get_output_names() == ["output_0", "output_1"]
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 6)).astype(np.float32)
    s = np.array([1.0, -0.5, 2.0], np.float32)
    outs = pr.run([x, fw.to_tensor(s)])
    assert all(isinstance(o, fw.Tensor) for o in outs) and len(outs) == 2
    want = run(p, x, s)
    for o, w in zip(outs, want):
        np.testing.assert_allclose(o.numpy(), w.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(pr.get_output_handle("output_1").copy_to_cpu(),
                                  outs[1].numpy())
    with pytest.raises(InvalidArgumentError, match=r"takes 2 input\(s\) \['image', 'scale'\], "
                                                   r"got 1"):
        pr.run([x])
    with pytest.raises(InvalidTypeError, match="one array per input"):
        pr.run(x)


def test_outputs_never_alias_inputs_or_weights(tmp_path):
    from fw.core.ir import TensorType, save, trace

    w = fw.to_tensor(np.ones((2, 2), np.float32))
    w.name, w.persistable, w.trainable = "w", True, True
    p = trace(lambda x: (x, w, w.reshape([4])), [TensorType([2, 2], "float32")], ["x"])
    save(p, tmp_path / "alias.fwmodel")
    pr = infer.create_predictor(infer.Config(tmp_path / "alias.fwmodel"))
    x = np.zeros((2, 2), np.float32)
    a, b, c = pr.run([x])
    a.numpy()[:] = 7
    b.numpy()[:] = 7
    c.numpy()[:] = 7
    assert x.sum() == 0
    assert pr.run([x])[1].numpy().tolist() == [[1.0, 1.0], [1.0, 1.0]]


def test_clear_errors(pred, tmp_path):
    _, pr = pred
    h = pr.get_input_handle("x")
    with pytest.raises(InvalidArgumentError, match=r"input\(s\) \['x'\] have no data"):
        pr.run()
    with pytest.raises(InvalidArgumentError, match="output 'output_0' has no data: call "
                                                   r"predictor.run\(\) first"):
        pr.get_output_handle("output_0").copy_to_cpu()
    with pytest.raises(InvalidArgumentError, match="input 'x' has no data yet"):
        h.copy_to_cpu()
    with pytest.raises(InvalidTypeError, match=r"input 'x' expects float32 data, got float64 "
                                               r"\(convert it first"):
        h.copy_from_cpu(X.astype(np.float64))
    with pytest.raises(InvalidArgumentError, match=r"input 'x' expects shape \[-1, 8\] \(-1: any "
                                                   r"size\), got \[2, 7\]"):
        h.copy_from_cpu(np.zeros((2, 7), np.float32))
    with pytest.raises(InvalidArgumentError, match=r"expects shape \[-1, 8\].*got \[16\]"):
        pr.run([X.reshape(16)])
    with pytest.raises(InvalidArgumentError, match=r"\[3, 8, 1\] does not fit"):
        h.reshape([3, 8, 1])
    h.reshape([4, 8])
    with pytest.raises(InvalidArgumentError, match=r"declared \[4, 8\] by reshape\(\) but the "
                                                   r"data has shape \[2, 8\]"):
        h.copy_from_cpu(X)
    with pytest.raises(InvalidArgumentError, match="reshape applies to input handles"):
        pr.get_output_handle("output_0").reshape([2, 4])
    bad = tmp_path / "bad.fwmodel"
    bad.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json at all}")
    with pytest.raises(ModelFormatError, match="bad.fwmodel"):
        infer.create_predictor(infer.Config(bad))


def test_kernel_failures_name_the_op(tmp_path):
    from fw.core.ir import TensorType, save, trace
    from fw.core.ops import call

    p = trace(lambda x, i: call("gather", x, i), [TensorType([3], "float32"),
                                                  TensorType([2], "int64")], ["x", "i"])
    save(p, tmp_path / "g.fwmodel")
    pr = infer.create_predictor(infer.Config(tmp_path / "g.fwmodel"))
    with pytest.raises(InvalidArgumentError, match="gather"):
        pr.run([np.zeros(3, np.float32), np.array([0, 7])])


def test_clone_shares_the_compiled_program(pred):
    p, pr = pred
    c = pr.clone()
    assert c._s.compiled is pr._s.compiled and c.program is pr.program
    assert c.get_input_handle("x") is not pr.get_input_handle("x")
    pr.get_input_handle("x").copy_from_cpu(X)
    with pytest.raises(InvalidArgumentError, match="have no data"):
        c.run()  # its own input slots


def test_clones_run_concurrently_from_threads(convbn_file):
    p, path = convbn_file
    base = infer.create_predictor(infer.Config(path))
    rng = np.random.default_rng(1)
    cases = [(rng.standard_normal((n, 3, 6, 6)).astype(np.float32),
              rng.standard_normal(3).astype(np.float32)) for n in (1, 2, 3, 4)]
    want = [[o.numpy() for o in base.run(list(c))] for c in cases]
    errors, start = [], threading.Barrier(len(cases))

    def work(k):
        pr = base.clone()
        hi, hs = pr.get_input_handle("image"), pr.get_input_handle("scale")
        outs = [pr.get_output_handle(n) for n in pr.get_output_names()]
        start.wait()
        try:
            for _ in range(50):
                hi.copy_from_cpu(cases[k][0])
                hs.copy_from_cpu(cases[k][1])
                pr.run()
                for o, w in zip(outs, want[k]):
                    np.testing.assert_array_equal(o.copy_to_cpu(), w)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(cases))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_try_shrink_memory_and_clear_intermediates(pred):
    _, pr = pred
    pr.run([X])
    pr.clear_intermediate_tensor()
    assert pr.try_shrink_memory() == 2 * 4 * 4
    assert pr.try_shrink_memory() == 0
    with pytest.raises(InvalidArgumentError, match="has no data"):
        pr.get_output_handle("output_0").copy_to_cpu()


def test_version_and_enums():
    v = infer.get_version()
    assert v.startswith(f"fw-inference {infer.__version__}, fw-core ")
    assert infer.get_num_bytes_of_data_type(infer.DataType.FLOAT32) == 4
    assert infer.get_num_bytes_of_data_type(infer.DataType.BFLOAT16) == 2
    assert infer.DataType.of("int64") is infer.DataType.INT64
    assert infer.DataType.of(np.float16) is infer.DataType.FLOAT16
    assert infer.DataType.INT8.numpy_dtype == np.int8
    with pytest.raises(InvalidTypeError):
        infer.get_num_bytes_of_data_type("float32")
    assert infer.PrecisionType.Bf16 is infer.PrecisionType.Bfloat16
    assert {p.name for p in infer.PrecisionType} >= {"Float32", "Half", "Int8", "Bfloat16"}
    assert infer.PlaceType.CPU.name == "CPU" and infer.PlaceType.UNK.value == -1


def test_fw_facade_resolves_the_package():
    assert fw.inference is infer
