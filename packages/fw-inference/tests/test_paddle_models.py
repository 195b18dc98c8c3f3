"""Models exported by real Paddle (3.3.1, tests/fixtures/paddle, made by its
gen_fixtures.py): fw.inference loads both program formats and reproduces Paddle
Inference's outputs; the Config forms of Paddle 3.3 work; bad files get clear
errors naming the file."""

from __future__ import annotations

import os
import shutil
import struct
import sys

import numpy as np
import pytest

import fw
import fw.inference as infer
from fw.core.ir.serialize import ModelFormatError, ModelLimitError
from fw.inference.paddle_format import UnknownPaddleOpError
from fw.inference.paddle_format.pdiparams import read_pdiparams

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "paddle")
PIR = ("lenet", "resnet_mini", "mobilenet_mini", "bert_mini", "ops_mix")
LEGACY = ("lenet", "resnet_mini", "mobilenet_mini")
CASES = [("pir", n, ".json") for n in PIR] + [("legacy", n, ".pdmodel") for n in LEGACY]


def _prefix(fmt, name):
    return os.path.join(FIXTURES, fmt, name)


def _expected(fmt, name):
    io = np.load(_prefix(fmt, name) + ".npz")
    return io["x"], io["out"]


def _close(out, ref):
    assert out.shape == ref.shape
    assert out.dtype == ref.dtype
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4 * max(1.0, np.abs(ref).max()))


@pytest.mark.parametrize("ir_optim", [True, False], ids=["passes", "no_passes"])
@pytest.mark.parametrize("fmt,name,ext", CASES, ids=[f"{f}-{n}" for f, n, _ in CASES])
def test_matches_paddle_inference(fmt, name, ext, ir_optim):
    prefix = _prefix(fmt, name)
    config = infer.Config(prefix + ext, prefix + ".pdiparams")
    config.switch_ir_optim(ir_optim)
    predictor = infer.create_predictor(config)
    x, ref = _expected(fmt, name)
    (out,) = predictor.run([x])
    _close(out.numpy(), ref)


def test_passes_fold_the_batch_norms_of_a_paddle_model():
    # the program goes through the same passes as a native model: batch norms
    # folded, convs fused with their bias and activation
    prefix = _prefix("pir", "resnet_mini")
    predictor = infer.create_predictor(infer.Config(prefix + ".json", prefix + ".pdiparams"))
    text = str(predictor.program)
    assert "batch_norm" not in text
    assert "fused_conv" in text


@pytest.mark.parametrize("fmt", ["pir", "legacy"])
def test_config_forms_of_paddle(fmt):
    prefix = _prefix(fmt, "lenet")
    ext = ".json" if fmt == "pir" else ".pdmodel"
    x, ref = _expected(fmt, "lenet")
    forms = [infer.Config(prefix + ext, prefix + ".pdiparams"),   # (prog_file, params_file)
             infer.Config(os.path.dirname(prefix), "lenet"),      # (model_dir, prefix)
             infer.Config(prefix)]                                # fw: the prefix
    c = infer.Config()
    c.set_prog_file(prefix + ext)
    c.set_params_file(prefix + ".pdiparams")
    forms.append(c)
    for config in forms:
        assert config.prog_file() == prefix + ext
        assert config.params_file() == prefix + ".pdiparams"
        (out,) = infer.create_predictor(config).run([x])
        _close(out.numpy(), ref)


# a Paddle Inference script as Paddle's documentation writes it; only the import
# of `paddle` differs (bound to fw by the test)
SCRIPT = """
import numpy as np
import paddle
import paddle.inference as paddle_infer

config = paddle_infer.Config(prefix + ".json", prefix + ".pdiparams")
config.disable_glog_info()
config.set_cpu_math_library_num_threads(1)
predictor = paddle_infer.create_predictor(config)
input_names = predictor.get_input_names()
input_handle = predictor.get_input_handle(input_names[0])
input_handle.reshape(x.shape)
input_handle.copy_from_cpu(x)
predictor.run()
output_names = predictor.get_output_names()
output_handle = predictor.get_output_handle(output_names[0])
result = output_handle.copy_to_cpu()
config2 = paddle.inference.Config(model_dir, "bert_mini")
result2 = paddle.inference.create_predictor(config2).run([paddle.to_tensor(x)])[0].numpy()
"""


def test_a_paddle_inference_script_runs_unchanged(monkeypatch):
    assert fw.inference is infer
    monkeypatch.setitem(sys.modules, "paddle", fw)
    monkeypatch.setitem(sys.modules, "paddle.inference", infer)
    x, ref = _expected("pir", "bert_mini")
    env = {"prefix": _prefix("pir", "bert_mini"), "model_dir": os.path.join(FIXTURES, "pir"),
           "x": x}
    exec(compile(SCRIPT, "paddle_script.py", "exec"), env)
    _close(env["result"], ref)
    _close(env["result2"], ref)


# ------------------------------------------------------------ bad files
def _copy(tmp_path, fmt, name):
    for f in os.listdir(os.path.join(FIXTURES, fmt)):
        if f.startswith(name + "."):
            shutil.copy(os.path.join(FIXTURES, fmt, f), tmp_path / f)
    return str(tmp_path / name)


def _load(prog, params=None):
    config = infer.Config(prog, params)
    return infer.create_predictor(config)


def test_unknown_pir_ops_are_listed(tmp_path):
    prefix = _copy(tmp_path, "pir", "resnet_mini")
    with open(prefix + ".json") as f:
        text = f.read()
    n_relu = text.count('"1.relu"')
    text = text.replace('"1.relu"', '"1.swirl"').replace('"1.flatten"', '"1.unroll"')
    with open(prefix + ".json", "w") as f:
        f.write(text)
    with pytest.raises(UnknownPaddleOpError) as e:
        _load(prefix + ".json", prefix + ".pdiparams")
    assert e.value.ops == {"swirl": n_relu, "unroll": 1}
    msg = str(e.value)
    assert prefix + ".json" in msg and f"swirl (x{n_relu})" in msg and "unroll (x1)" in msg


def test_unknown_legacy_ops_are_listed(tmp_path):
    prefix = _copy(tmp_path, "legacy", "lenet")
    with open(prefix + ".pdmodel", "rb") as f:
        raw = f.read()
    # OpDesc.type (field 3, length 4): rename both relus, same length
    assert raw.count(b"\x1a\x04relu") == 2
    with open(prefix + ".pdmodel", "wb") as f:
        f.write(raw.replace(b"\x1a\x04relu", b"\x1a\x04relx"))
    with pytest.raises(UnknownPaddleOpError, match=r"relx \(x2\)") as e:
        _load(prefix + ".pdmodel", prefix + ".pdiparams")
    assert e.value.ops == {"relx": 2}


def test_a_json_that_is_not_a_pir_program(tmp_path):
    prog = tmp_path / "model.json"
    prog.write_text('{"layers": [1, 2, 3]}')
    (tmp_path / "model.pdiparams").write_bytes(b"")
    with pytest.raises(ModelFormatError, match=r"model\.json: a JSON file but not a Paddle "
                                               r"PIR program.*'layers'"):
        _load(str(prog))


def test_a_json_given_to_the_fw_model_loader_says_what_it_is(tmp_path):
    prefix = _copy(tmp_path, "pir", "lenet")
    from fw.core.ir import load

    with pytest.raises(ModelFormatError, match=r"lenet\.json: a JSON file, not an fw model "
                                               r"file.*fw\.inference\.Config"):
        load(prefix + ".json")


def test_a_damaged_pdmodel(tmp_path):
    prog = tmp_path / "m.pdmodel"
    prog.write_bytes(b"\x0a\xff\xff\xff\x0f garbage")
    (tmp_path / "m.pdiparams").write_bytes(b"")
    with pytest.raises(ModelFormatError, match=r"m\.pdmodel: not a Paddle ProgramDesc"):
        _load(str(prog))


def test_a_truncated_pdiparams(tmp_path):
    prefix = _copy(tmp_path, "pir", "lenet")
    raw = (tmp_path / "lenet.pdiparams").read_bytes()
    (tmp_path / "lenet.pdiparams").write_bytes(raw[:-10])
    with pytest.raises(ModelFormatError, match=r"lenet\.pdiparams: truncated: the data of "
                                               r"tensor 'linear_2.w_0'"):
        _load(prefix + ".json")


def test_extra_bytes_after_the_params(tmp_path):
    prefix = _copy(tmp_path, "pir", "lenet")
    with open(prefix + ".pdiparams", "ab") as f:
        f.write(b"\0" * 7)
    with pytest.raises(ModelFormatError, match=r"7 bytes follow the last of the 10 tensors"):
        _load(prefix + ".json")


def test_a_wrong_dtype_enum(tmp_path):
    prefix = _copy(tmp_path, "pir", "lenet")
    raw = bytearray((tmp_path / "lenet.pdiparams").read_bytes())
    # the first tensor: version (4) + LoD levels (8, zero) + tensor version (4) + desc size
    # (4), then the TensorDesc: field 1 (0x08) holds the data type (5: float32)
    assert raw[20:22] == b"\x08\x05"
    raw[21] = 99
    (tmp_path / "lenet.pdiparams").write_bytes(bytes(raw))
    with pytest.raises(ModelFormatError, match=r"lenet\.pdiparams: tensor 'conv2d_0.b_0': "
                                               r"unknown data type enum 99"):
        _load(prefix + ".json")


def test_params_of_another_model(tmp_path):
    prefix = _copy(tmp_path, "pir", "lenet")
    shutil.copy(os.path.join(FIXTURES, "pir", "resnet_mini.pdiparams"),
                tmp_path / "lenet.pdiparams")
    with pytest.raises(ModelFormatError, match=r"lenet\.pdiparams"):
        _load(prefix + ".json")


@pytest.mark.parametrize("limit,value", [("max_ops", 5), ("max_value_bytes", 1000),
                                         ("max_header_bytes", 1000), ("max_tensors", 3)])
def test_model_limits_apply(limit, value):
    prefix = _prefix("pir", "lenet")
    config = infer.Config(prefix + ".json", prefix + ".pdiparams")
    config.set_model_limits(**{limit: value})
    with pytest.raises(ModelLimitError, match=limit) as e:
        infer.create_predictor(config)
    assert e.value.limit == limit


def test_missing_params_file(tmp_path):
    prefix = _copy(tmp_path, "pir", "lenet")
    os.remove(prefix + ".pdiparams")
    with pytest.raises(FileNotFoundError, match=r"lenet\.pdiparams"):
        _load(prefix + ".json")


# ------------------------------------------------------------ the tensor stream
def _tensor(arr, code):
    desc = bytes([0x08, code]) + b"".join(
        bytes([0x10]) + _varint(d) for d in arr.shape)
    return (struct.pack("<IQI", 0, 0, 0) + struct.pack("<i", len(desc)) + desc
            + np.ascontiguousarray(arr).tobytes())


def _varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def test_pdiparams_reader_on_a_hand_made_stream(tmp_path):
    from fw.core.ir.serialize import DEFAULT_LIMITS

    a = np.arange(300, dtype=np.int64).reshape(3, 100)  # dims > 127: multi-byte varints
    b = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    c = np.array([True, False])
    path = tmp_path / "w.pdiparams"
    path.write_bytes(_tensor(a, 3) + _tensor(b, 5) + _tensor(c, 0))  # sorted: a, b, c

    def fail(msg):
        return ModelFormatError(msg)

    got = read_pdiparams(str(path), ["c", "a", "b"], DEFAULT_LIMITS, fail, None)
    for name, want in (("a", a), ("b", b), ("c", c)):
        assert got[name].dtype == want.dtype
        np.testing.assert_array_equal(got[name], want)


def test_a_malformed_pir_op(tmp_path):
    import json

    prefix = _copy(tmp_path, "pir", "lenet")
    with open(prefix + ".json") as f:
        doc = json.load(f)
    ops = doc["program"]["regions"][0]["blocks"][0]["ops"]
    i = next(k for k, o in enumerate(ops) if o["#"] == "1.relu")
    ops[i]["I"] = 7  # operands must be a list of {"%": id}
    with open(prefix + ".json", "w") as f:
        json.dump(doc, f)
    with pytest.raises(ModelFormatError, match=rf"lenet\.json: op {i} is malformed"):
        _load(prefix + ".json")


@pytest.mark.parametrize("target", ["pir/lenet.json", "legacy/lenet.pdmodel",
                                    "pir/lenet.pdiparams"])
def test_damaged_files_raise_model_format_errors_only(tmp_path, target):
    # random byte damage: a clear ModelFormatError (or a clean load when the damage
    # hits only bytes that do not matter), never another exception
    fmt, fname = target.split("/")
    prefix = _copy(tmp_path, fmt, "lenet")
    ext = ".json" if fmt == "pir" else ".pdmodel"
    path = tmp_path / fname
    raw = path.read_bytes()
    rng = np.random.default_rng(0)
    errors = 0
    for _ in range(30):
        damaged = bytearray(raw)
        for pos in rng.integers(0, len(raw), size=3):
            damaged[pos] = int(rng.integers(0, 256))
        if rng.random() < 0.3:
            damaged = damaged[: int(rng.integers(0, len(raw)))]
        path.write_bytes(bytes(damaged))
        try:
            _load(prefix + ext, prefix + ".pdiparams")
        except ModelFormatError as e:
            assert str(path) in str(e)
            errors += 1
    assert errors > 0


# ------------------------------------------------------------ single entries
def _run_graph(ops, feeds, fetches, weights=None, params=()):
    from fw.core.ir import run
    from fw.inference.paddle_format.convert import to_program
    from fw.inference.paddle_format.graph import PaddleGraph, Spec

    graph = PaddleGraph("hand.json", [(n, n, Spec(a.dtype.name, a.shape)) for n, a in feeds],
                        list(params), ops, fetches)
    program = to_program(graph, weights or {})
    return run(program, *[a for _, a in feeds]).numpy()


def test_legacy_elementwise_axis_aligns_y_from_axis():
    # 2.x elementwise_add(x [N,C,H,W], y [C], axis=1) adds y[c] along the channels,
    # which NumPy broadcasting alone would not do
    from fw.inference.paddle_format.graph import PaddleOp

    x = np.zeros((2, 3, 4, 5), np.float32)
    y = np.array([1.0, 2.0, 3.0], np.float32)
    out = _run_graph([PaddleOp("add", ["x", "y"], {"axis": 1}, ["z"])],
                     [("x", x), ("y", y)], ["z"])
    np.testing.assert_array_equal(out, x + y[None, :, None, None])


def test_an_op_that_needs_a_constant_says_so():
    from fw.inference.paddle_format.graph import PaddleOp

    x = np.zeros((2, 6), np.float32)
    shape = np.array([3, 4], np.int64)
    with pytest.raises(ModelFormatError, match=r"hand\.json: op 0 \(reshape.*the target shape "
                                               r"is computed at run time"):
        _run_graph([PaddleOp("reshape", ["x", "s"], {}, ["z"])], [("x", x), ("s", shape)],
                   ["z"])
