"""The weight-only loss targets of issue 13 on a *trained* model: the char-level GPT of
examples/char_gpt.py (its defaults, 800 steps on examples/data/tales.txt; weights in
fixtures/char_gpt_tales.npz, made by fixtures/make_char_gpt.py) keeps its language-model
loss within 1 % of float32 with int8 weights and within 3 % with int4 with fw's
defaults (``clip="mse"`` scales); Paddle's absmax scales (``clip="absmax"``) miss it on
this small model, which is checked too, as the README records. Deterministic: fixed
weights, fixed windows."""

import importlib.util
import pathlib
import sys

import numpy as np
import pytest

import fw
from fw.quantization import weight_only_quantize

ROOT = pathlib.Path(__file__).resolve().parents[3]
FIXTURE = pathlib.Path(__file__).with_name("fixtures") / "char_gpt_tales.npz"


def _example():
    if "_fw_char_gpt_example" not in sys.modules:
        spec = importlib.util.spec_from_file_location("_fw_char_gpt_example",
                                                      ROOT / "examples" / "char_gpt.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules["_fw_char_gpt_example"] = mod
        spec.loader.exec_module(mod)
    return sys.modules["_fw_char_gpt_example"]


@pytest.fixture(scope="module")
def trained():
    cg = _example()
    with open(cg.DATA, encoding="utf-8") as f:
        text = f.read()
    vocab = cg.CharVocab(text)
    data = vocab.encode(text)
    held_out = data[int(0.9 * len(data)):]
    model = cg.CharGPT(len(vocab), 64, 2, 64, 4, 0.0, tied=True)
    state = np.load(FIXTURE)
    model.set_state_dict({k: fw.to_tensor(state[k].astype(np.float32)) for k in state.files})
    model.eval()
    # 8 fixed batches of 16 windows of 64 characters from the held-out tenth
    rng = np.random.default_rng(1)
    batches = [cg.get_batch(held_out, 64, 16, rng) for _ in range(8)]

    def loss(m):
        with fw.no_grad():
            return float(np.mean([float(cg.lm_loss(m, x, y)) for x, y in batches]))

    base = loss(model)
    return model, loss, np.log(len(vocab)), base


def test_trained_fixture_is_trained(trained):
    _, _, ln_vocab, base = trained
    # a uniform guess scores ln V (about 3.9 here): the fixture learned the text
    assert base < 0.6 * ln_vocab


@pytest.mark.parametrize("algo,group,clip,bound", [
    ("weight_only_int8", -1, "absmax", 0.01),
    ("weight_only_int8", -1, "mse", 0.01),
    ("weight_only_int4", -1, "mse", 0.03),
    ("weight_only_int4", 64, "mse", 0.03),
])
def test_loss_within_target(trained, algo, group, clip, bound):
    model, loss, _, base = trained
    q = weight_only_quantize(model, algo=algo, group_size=group, clip=clip)
    got = loss(q)
    assert abs(got / base - 1) <= bound, (algo, group, clip, base, got)
    assert got != base  # the Linears really run on codes


@pytest.mark.parametrize("algo,bound", [("weight_only_int8", 0.01), ("weight_only_int4", 0.03)])
def test_defaults_meet_target(trained, algo, bound):
    """The issue's bounds from fw's entry point with nothing but ``algo`` given: the
    default is ``clip="mse"``, per channel, and it equals that explicit config."""
    import inspect

    assert inspect.signature(weight_only_quantize).parameters["clip"].default == "mse"
    model, loss, _, base = trained
    q = weight_only_quantize(model, algo=algo)
    got = loss(q)
    assert abs(got / base - 1) <= bound, (algo, base, got)
    mse = weight_only_quantize(model, algo=algo, clip="mse")
    absmax = weight_only_quantize(model, algo=algo, clip="absmax")
    differ = 0
    for (name, a), (_, b), (_, c) in zip(q.named_sublayers(), mse.named_sublayers(),
                                         absmax.named_sublayers()):
        if isinstance(a, fw.nn.quant.WeightOnlyLinear):
            np.testing.assert_array_equal(a.weight.numpy(), b.weight.numpy(), err_msg=name)
            np.testing.assert_array_equal(a.weight_scale.numpy(), b.weight_scale.numpy())
            differ += not np.array_equal(a.weight_scale.numpy(), c.weight_scale.numpy())
    # int4's 15 levels: mse clips every layer's outliers (int8's ratio is often 1)
    if algo.endswith("int4"):
        assert differ == 8, differ


def test_int4_absmax_misses_3_percent(trained):
    """Why int4 needs clip="mse" on this model: with Paddle's absmax scales one scale per
    output channel (or per 64 rows) of these 64-wide layers costs more than 3 % (the
    README records it; a change that meets it should update both)."""
    model, loss, _, base = trained
    for group in (-1, 64):
        got = loss(weight_only_quantize(model, algo="weight_only_int4", group_size=group,
                                        clip="absmax"))
        assert got / base - 1 > 0.025, (group, base, got)


def test_mse_clip_codes_against_numpy():
    """clip="mse": per column, the scale is ratio * absmax / 7 for a ratio of the grid,
    no ratio of the grid reconstructs that column better, and the stored codes are the
    rounded, clipped weight / scale (the kernel's dequantization gives back those)."""
    from fw.core.ops.quant import unpack_int4

    rng = np.random.default_rng(5)
    w = rng.standard_normal((32, 6)).astype(np.float32)
    w[3, 2] = 9.0  # an outlier: absmax would waste most of column 2's levels on it
    w[:, 5] = 0.0  # a zero column: scale 0, codes 0 (weight_quantize's convention)
    lin = fw.nn.Linear(32, 6)
    lin.weight.set_value(fw.to_tensor(w))
    q = weight_only_quantize(fw.nn.Sequential(lin), algo="weight_only_int4", clip="mse")[0]
    codes = unpack_int4(q.weight.numpy()).T.astype(np.float64)  # [k, n]
    s = q.weight_scale.numpy().astype(np.float64)
    assert s[5] == 0 and not codes[:, 5].any()
    amax = np.abs(w).max(axis=0).astype(np.float64)
    ratios = np.linspace(1.0, 0.5, 26)
    for j in range(5):
        r = s[j] * 7 / amax[j]
        assert np.isclose(ratios, r, rtol=1e-6).any(), (j, r)
        np.testing.assert_array_equal(codes[:, j], np.clip(np.rint(w[:, j] / np.float32(s[j])),
                                                            -7, 7))
        err = ((codes[:, j] * s[j] - w[:, j]) ** 2).sum()
        for rr in ratios:
            sc = rr * amax[j] / 7
            e = ((np.clip(np.rint(w[:, j] / sc), -7, 7) * sc - w[:, j]) ** 2).sum()
            assert err <= e * (1 + 1e-6), (j, rr)
    assert s[2] * 7 < amax[2]  # the outlier is clipped (the error-minimising ratio < 1)
    with pytest.raises(ValueError, match="'clip' must be one of"):
        weight_only_quantize(fw.nn.Sequential(lin), clip="max")


PADDLE_WOQ = FIXTURE.with_name("paddle_woq_tales.npz")


def _paddle_linears(model):
    return {name: sub for name, sub in model.named_sublayers()
            if isinstance(sub, fw.nn.Linear)}


@pytest.mark.parametrize("tag,qmax,max_diff", [("int8", 127, 0.02), ("int4", 7, 0.002)])
def test_codes_against_real_paddle(tag, qmax, max_diff):
    """Paddle's defaults (per-channel absmax, ``group_size=-1``), exactly, from real
    Paddle 3.3.1's codes for every Linear weight of the trained char GPT
    (fixtures/paddle_woq_tales.npz, made by fixtures/make_paddle_woq.py, which undoes
    Paddle's CUDA layout): ``clip(round_half_away(w / s), -qmax, qmax)`` with ``s`` the
    per-column ``absmax / qmax`` *stored in the weight's dtype* (float16 here) — a
    symmetric grid (int4: -7..7, no zero point, no -8). fw's op (float32 scales, round
    half to even) gives the same codes but for values that lie within the float16
    rounding of the scale of a rounding boundary: a few, each one step off."""
    from fw.core.ops.quant import unpack_int4

    ref = np.load(PADDLE_WOQ)
    state = np.load(FIXTURE)
    names = sorted({k.rsplit(".", 2)[0] for k in ref.files if k.endswith(".codes")})
    assert len(names) == 8  # qkv, proj, mlp.0, mlp.2 of two blocks
    diff = total = 0
    for name in names:
        w = state[name].astype(np.float32)  # [k, n], float16 values
        pc = ref[f"{name}.{tag}.codes"].astype(np.int64)  # [n, k]
        ps = ref[f"{name}.{tag}.scale"]
        assert ps.dtype == np.float16
        amax = np.abs(w).max(axis=0)
        np.testing.assert_array_equal(ps, (amax / qmax).astype(np.float16), err_msg=name)
        t = w.T / ps.astype(np.float32)[:, None]
        away = np.sign(t) * np.floor(np.abs(t) + 0.5)
        np.testing.assert_array_equal(pc, np.clip(away, -qmax, qmax), err_msg=name)
        q, s = fw.nn.quant.weight_quantize(fw.to_tensor(w), algo=f"weight_only_{tag}")
        codes = (q.numpy() if tag == "int8" else unpack_int4(q.numpy())).astype(np.int64)
        np.testing.assert_allclose(s.numpy(), amax / qmax, rtol=1e-6)
        assert np.abs(codes - pc).max() <= 1, name
        diff += int((codes != pc).sum())
        total += codes.size
    assert 0 < diff <= max_diff * total, (diff, total)


def test_int4_miss_is_paddles_own(trained):
    """The int4 absmax miss is Paddle's scheme, not fw's implementation: the model with
    real Paddle's int4 codes and float16 scales (dequantized into float Linears) loses
    as much as fw's WeightOnlyLinear model (measured: +3.19 % against fw's +3.16 %),
    more than 3 %."""
    model, loss, _, base = trained
    ref = np.load(PADDLE_WOQ)
    fw_loss = loss(weight_only_quantize(model, algo="weight_only_int4", clip="absmax"))
    import copy

    pm = copy.deepcopy(model)
    for name, lin in _paddle_linears(pm).items():
        codes = ref[f"{name}.weight.int4.codes"].astype(np.float32)  # [n, k]
        scale = ref[f"{name}.weight.int4.scale"].astype(np.float32)  # [n]
        lin.weight.set_value(fw.to_tensor((codes * scale[:, None]).T.copy()))
    p_loss = loss(pm)
    assert p_loss / base - 1 > 0.03, (base, p_loss)
    assert abs(p_loss / fw_loss - 1) < 2e-3, (p_loss, fw_loss)
