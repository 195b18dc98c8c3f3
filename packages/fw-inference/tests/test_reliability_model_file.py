"""Predictors and hostile or damaged model files: state updates refused (or
stripped on request), read-only weights, clones in threads, checksums, a lying
result type, and the load limits of the Config. docs/reliability.md, "Model
files: integrity and purity", cites these tests."""

import logging
import threading

import numpy as np
import pytest

import fw.inference as infer
from fw.core.errors import InvalidArgumentError
from fw.core.ir import TensorType, building, load, run, save
from fw.core.ir.serialize import LoadLimits, ModelFormatError, ModelLimitError
from fw.core.ops import OPS

X = np.linspace(-1, 1, 16, dtype=np.float32).reshape(2, 8)


def echo_program():
    """y = x + last; last <- x: run as written, each request returns the previous
    request's input (added to its own)."""
    from fw.core.tensor import wrap

    last = wrap(np.zeros(4, np.float32))
    last.name, last.persistable = "last", True
    with building() as b:
        x = b.add_input(TensorType([4], "float32"), "x")
        y = x + last
        b.record_update(last, x * 1.0)
        b.set_outputs([y])
    return b.program


@pytest.fixture
def echo_file(tmp_path):
    path = tmp_path / "echo.fwmodel"
    save(echo_program(), path)
    return path


def test_the_echo_file_leaks_one_request_into_the_next(echo_file):
    # what a predictor used to do with it: the hazard the checks below close
    q, _ = load(echo_file)
    a, b = np.full(4, 1.0, np.float32), np.full(4, 10.0, np.float32)
    run(q, a)
    np.testing.assert_array_equal(run(q, b).numpy(), a + b)


def test_a_model_with_state_updates_is_refused(echo_file):
    with pytest.raises(ModelFormatError) as info:
        infer.create_predictor(infer.Config(str(echo_file)))
    msg = str(info.value)
    assert str(echo_file) in msg and "state updates of ['last']" in msg
    assert "enable_strip_state_updates" in msg


def test_stripped_updates_two_clones_in_threads(echo_file, caplog):
    config = infer.Config(str(echo_file))
    config.enable_strip_state_updates()
    assert config.strip_state_updates_enabled()
    assert "strip_state_updates" in config.summary()
    with caplog.at_level(logging.WARNING, logger="fw.core.ir"):
        base = infer.create_predictor(config)
    assert any("['last']" in r.getMessage() for r in caplog.records if r.name == "fw.core.ir")
    assert "update" not in str(base.program)
    errors, start = [], threading.Barrier(2)

    def work(k):
        pr = base.clone()
        h, o = pr.get_input_handle("x"), pr.get_output_handle("output_0")
        start.wait()
        try:
            for i in range(300):
                x = np.full(4, 1000.0 * k + i + 1, np.float32)
                h.copy_from_cpu(x)
                pr.run()
                np.testing.assert_array_equal(o.copy_to_cpu(), x)  # its own input, only
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:1]


@pytest.mark.parametrize("ir_optim", [True, False])
def test_weights_are_read_only(mlp_file, ir_optim):
    _, path = mlp_file
    config = infer.Config(path)
    config.switch_ir_optim(ir_optim)
    pr = infer.create_predictor(config)
    arrays = [t._data for t in pr.program.captured.values()]
    assert arrays and not any(a.flags.writeable for a in arrays)
    with pytest.raises(ValueError, match="read-only"):
        arrays[0][...] = 0


def test_a_kernel_writing_into_a_weight_raises_instead_of_corrupting(mlp_file, monkeypatch):
    p, path = mlp_file
    want = run(p, X).numpy()
    orig = OPS["linear"].kernel("cpu")

    def scribbling_linear(x, w, b=None, **kw):
        np.multiply(w, 2.0, out=w)  # a buggy in-place kernel
        return orig(x, w, b, **kw)

    config = infer.Config(path)
    config.switch_ir_optim(False)  # keep the linear ops
    monkeypatch.setitem(OPS["linear"].kernels, "cpu", scribbling_linear)
    pr = infer.create_predictor(config)
    monkeypatch.undo()
    before = {k: t._data.copy() for k, t in pr.program.captured.items()}
    with pytest.raises(InvalidArgumentError, match="linear: failed while running.*read-only"):
        pr.run([X])
    for k, t in pr.program.captured.items():
        np.testing.assert_array_equal(t._data, before[k])
    np.testing.assert_array_equal(infer.create_predictor(config).run([X])[0].numpy(), want)


def _flip(path, needle, offset, out):
    data = bytearray(path.read_bytes())
    data[bytes(data).index(needle) + offset] ^= 0x01
    out.write_bytes(bytes(data))
    return out


def test_damaged_files_are_refused_by_the_predictor(mlp_file, tmp_path):
    p, path = mlp_file
    w = p.captured["fc0.weight"].numpy()
    bad = _flip(path, w.tobytes()[:16], 1, tmp_path / "w.fwmodel")
    with pytest.raises(ModelFormatError, match="tensor 'fc0.weight'.*does not match its "
                                               "checksum") as info:
        infer.create_predictor(infer.Config(str(bad)))
    assert str(bad) in str(info.value)
    bad = _flip(path, b"relu(", 1, tmp_path / "p.fwmodel")
    with pytest.raises(ModelFormatError, match="the program does not match its checksum"):
        infer.create_predictor(infer.Config(str(bad)))
    (tmp_path / "t.fwmodel").write_bytes(path.read_bytes()[:-2])
    with pytest.raises(ModelFormatError, match="truncated"):
        infer.create_predictor(infer.Config(str(tmp_path / "t.fwmodel")))


def test_a_lying_result_type_names_the_file_not_a_pass(mlp_file, tmp_path):
    from safetensors import safe_open
    from safetensors.numpy import save_file

    from fw.core.ir import serialize

    _, path = mlp_file
    with safe_open(str(path), framework="np") as h:
        meta = dict(h.metadata())
        ts = {k: h.get_tensor(k) for k in h.keys()}
    old = "relu(%0) : f32[-1,16]"
    assert old in meta["program"]
    meta["program"] = meta["program"].replace(old, "relu(%0) : f32[5,16]")
    meta["checksum"] = serialize._checksums(meta["program"], meta["tensors"], ts)
    save_file(ts, str(tmp_path / "lie.fwmodel"), metadata=meta)
    with pytest.raises(ModelFormatError) as info:
        infer.create_predictor(infer.Config(str(tmp_path / "lie.fwmodel")))
    msg = str(info.value)
    assert str(tmp_path / "lie.fwmodel") in msg and "pass" not in msg
    assert "relu(%0) : f32[5,16]" in msg and "operand types give f32[-1,16]" in msg, msg


def test_config_model_limits(mlp_file):
    _, path = mlp_file
    config = infer.Config(path)
    assert config.model_limits() == LoadLimits()
    config.set_model_limits(max_ops=2)
    assert config.model_limits().max_ops == 2 and "max_ops" in config.summary()
    copy = infer.Config(config)
    with pytest.raises(ModelLimitError, match=r"operations \(3\) exceeds the limit max_ops=2"):
        infer.create_predictor(copy)
    config.set_model_limits(max_ops=3)
    infer.create_predictor(config).run([X])
    with pytest.raises(InvalidArgumentError, match="has no"):
        config.set_model_limits(max_operations=3)
