"""Recurrent layers, attention, Transformer and beam search: shapes for the arguments,
one step of each cell against its NumPy formula, masking and caching semantics."""

import numpy as np
import pytest

import fw
import fw.nn as nn
from fw.core.errors import InvalidArgumentError


def rnd(*shape, seed=0):
    return fw.to_tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def sig(x):
    return 1 / (1 + np.exp(-x))


def test_lstm_cell_step_matches_numpy():
    cell = nn.LSTMCell(3, 4)
    x, h, c = rnd(2, 3), rnd(2, 4, seed=1), rnd(2, 4, seed=2)
    y, (h2, c2) = cell(x, (h, c))
    W, U = cell.weight_ih.numpy(), cell.weight_hh.numpy()
    gates = x.numpy() @ W.T + cell.bias_ih.numpy() + h.numpy() @ U.T + cell.bias_hh.numpy()
    i, f, g, o = np.split(gates, 4, axis=-1)
    c_ref = sig(f) * c.numpy() + sig(i) * np.tanh(g)
    h_ref = sig(o) * np.tanh(c_ref)
    np.testing.assert_allclose(c2.numpy(), c_ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h2.numpy(), h_ref, rtol=1e-5, atol=1e-6)
    assert y is h2
    # default states are zeros
    y0, (h0, c0) = cell(x)
    g0 = x.numpy() @ W.T + cell.bias_ih.numpy() + cell.bias_hh.numpy()
    i, f, g, o = np.split(g0, 4, axis=-1)
    np.testing.assert_allclose(c0.numpy(), sig(i) * np.tanh(g), rtol=1e-5, atol=1e-6)


def test_gru_and_simple_cells_match_numpy():
    cell = nn.GRUCell(3, 4)
    x, h = rnd(2, 3), rnd(2, 4, seed=1)
    y, h2 = cell(x, h)
    xg = x.numpy() @ cell.weight_ih.numpy().T + cell.bias_ih.numpy()
    hg = h.numpy() @ cell.weight_hh.numpy().T + cell.bias_hh.numpy()
    xr, xz, xc = np.split(xg, 3, -1)
    hr, hz, hc = np.split(hg, 3, -1)
    r, z = sig(xr + hr), sig(xz + hz)
    cand = np.tanh(xc + r * hc)
    np.testing.assert_allclose(h2.numpy(), z * h.numpy() + (1 - z) * cand, rtol=1e-5, atol=1e-6)
    s = nn.SimpleRNNCell(3, 4, activation="relu")
    y, h3 = s(x, h)
    ref = np.maximum(x.numpy() @ s.weight_ih.numpy().T + s.bias_ih.numpy()
                     + h.numpy() @ s.weight_hh.numpy().T + s.bias_hh.numpy(), 0)
    np.testing.assert_allclose(h3.numpy(), ref, rtol=1e-5, atol=1e-6)
    with pytest.raises(InvalidArgumentError, match="activation"):
        nn.SimpleRNNCell(3, 4, activation="gelu")


def test_cell_state_shapes_and_initial_states():
    lstm = nn.LSTMCell(16, 32)
    assert lstm.state_shape == ((32,), (32,))
    h, c = lstm.get_initial_states(rnd(4, 16))
    assert h.shape == [4, 32] and c.shape == [4, 32] and h.numpy().sum() == 0
    g = nn.GRUCell(16, 32).get_initial_states(rnd(5, 7, 16), batch_dim_idx=1, init_value=1.0)
    assert g.shape == [7, 32] and g.numpy().min() == 1.0
    proj = nn.LSTMCell(4, 8, proj_size=3)
    y, (h, c) = proj(rnd(2, 4))
    assert y.shape == [2, 3] and c.shape == [2, 8]


@pytest.mark.parametrize("cls", [nn.SimpleRNN, nn.LSTM, nn.GRU])
@pytest.mark.parametrize("direction", ["forward", "bidirect", "bidirectional"])
@pytest.mark.parametrize("time_major", [False, True])
def test_rnn_shapes(cls, direction, time_major):
    m = cls(16, 32, num_layers=2, direction=direction, time_major=time_major)
    d = 1 if direction == "forward" else 2
    x = rnd(23, 4, 16) if time_major else rnd(4, 23, 16)
    y, st = m(x)
    assert y.shape == ([23, 4, 32 * d] if time_major else [4, 23, 32 * d])
    states = st if cls is nn.LSTM else (st,)
    for s in states:
        assert s.shape == [2 * d, 4, 32]
    n_params = 4 * 2 * d
    assert len(m.parameters()) == n_params
    assert "weight_ih_l0" in m.state_dict() and ("weight_ih_l1_reverse" in m.state_dict()) == (
        d == 2)


def test_rnn_initial_states_and_errors():
    m = nn.LSTM(16, 32, 2)
    h0, c0 = rnd(2, 4, 32), rnd(2, 4, 32, seed=1)
    y, (h, c) = m(rnd(4, 23, 16), (h0, c0))
    y2, _ = m(rnd(4, 23, 16))
    assert not np.allclose(y.numpy(), y2.numpy())
    with pytest.raises(InvalidArgumentError, match="must have shape"):
        m(rnd(4, 23, 16), (rnd(1, 4, 32), c0))
    with pytest.raises(InvalidArgumentError, match="direction"):
        nn.GRU(3, 4, direction="both")
    with pytest.raises(InvalidArgumentError, match="inputs must be"):
        nn.GRU(3, 4)(rnd(2, 5, 6))


def test_sequence_length_masks_outputs_and_freezes_states():
    m = nn.GRU(3, 5)
    x = rnd(2, 6, 3)
    y, h = m(x, sequence_length=fw.to_tensor([6, 2]))
    assert np.all(y.numpy()[1, 2:] == 0)  # padded steps give zeros
    # the final state of the short sequence is the state after its 2nd step
    y_short, h_short = m(x[1:2, :2])
    np.testing.assert_allclose(h.numpy()[:, 1], h_short.numpy()[:, 0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(y.numpy()[1, :2], y_short.numpy()[0], rtol=1e-5, atol=1e-6)
    # the reverse direction starts at each sequence's last valid step
    bi = nn.LSTM(3, 4, direction="bidirect")
    yb, _ = bi(x, sequence_length=fw.to_tensor([6, 2]))
    yb_short, _ = bi(x[1:2, :2])
    np.testing.assert_allclose(yb.numpy()[1, :2], yb_short.numpy()[0], rtol=1e-5, atol=1e-6)


def test_dropout_between_layers_only_in_training():
    fw.seed(0)
    m = nn.LSTM(4, 8, num_layers=3, dropout=0.5)
    x = rnd(2, 5, 4)
    m.eval()
    a, _ = m(x)
    b, _ = m(x)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    m.train()
    c, _ = m(x)
    assert not np.allclose(a.numpy(), c.numpy())
    # "between layers": a one-layer network has no dropout even while training, and
    # the input of the first layer is never dropped
    one = nn.GRU(4, 8, num_layers=1, dropout=0.9)
    one.eval()
    e, _ = one(x)
    one.train()
    np.testing.assert_array_equal(one(x)[0].numpy(), e.numpy())


def test_rnn_and_birnn_wrappers():
    cell = nn.SimpleRNNCell(3, 4)
    rnn = nn.RNN(cell)
    x = rnd(2, 5, 3)
    y, h = rnn(x)
    assert y.shape == [2, 5, 4] and h.shape == [2, 4]
    # unrolling by hand gives the same
    state = cell.get_initial_states(x)
    outs = []
    for t in range(5):
        out, state = cell(x[:, t], state)
        outs.append(out.numpy())
    np.testing.assert_allclose(y.numpy(), np.stack(outs, 1), rtol=1e-6)
    rev, h_rev = nn.RNN(cell, is_reverse=True, time_major=True)(x.transpose([1, 0, 2]))
    assert rev.shape == [5, 2, 4]
    bi = nn.BiRNN(nn.LSTMCell(3, 4), nn.LSTMCell(3, 4))
    y, (sf, sb) = bi(x, sequence_length=fw.to_tensor([5, 3]))
    assert y.shape == [2, 5, 8] and sf[0].shape == [2, 4] and sb[1].shape == [2, 4]


def test_rnn_gradients_flow_to_every_parameter():
    m = nn.GRU(3, 4, num_layers=2, direction="bidirect")
    y, h = m(rnd(2, 5, 3))
    (y.sum() + h.sum()).backward()
    for name, p in m.named_parameters():
        assert p.grad is not None and np.abs(p.grad.numpy()).sum() > 0, name


# ---------------------------------------------------------------- attention
def test_multi_head_attention_shapes_weights_and_masks():
    mha = nn.MultiHeadAttention(128, 2)
    q = rnd(2, 4, 128)
    assert mha(q, None, None, attn_mask=rnd(2, 2, 4, 4)).shape == [2, 4, 128]
    kv = nn.MultiHeadAttention(16, 4, kdim=8, vdim=6, need_weights=True)
    out, w = kv(rnd(3, 5, 16), rnd(3, 7, 8), rnd(3, 7, 6))
    assert out.shape == [3, 5, 16] and w.shape == [3, 4, 5, 7]
    np.testing.assert_allclose(w.numpy().sum(-1), 1.0, rtol=1e-5)
    # a bool mask that blocks a key gives it zero weight; the float equivalent agrees
    keep = np.ones([1, 1, 5, 7], bool)
    keep[..., 3] = False
    q, k = rnd(3, 5, 16), rnd(3, 7, 8)
    v = rnd(3, 7, 6)
    _, wb = kv(q, k, v, attn_mask=fw.to_tensor(keep))
    assert np.all(wb.numpy()[..., 3] < 1e-6)
    add = np.where(keep, 0.0, -np.inf).astype(np.float32)
    ob, _ = kv(q, k, v, attn_mask=fw.to_tensor(keep))
    of, _ = kv(q, k, v, attn_mask=fw.to_tensor(add))
    np.testing.assert_allclose(ob.numpy(), of.numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(InvalidArgumentError, match="divide"):
        nn.MultiHeadAttention(10, 3)


def test_multi_head_attention_incremental_cache_equals_full_causal():
    mha = nn.MultiHeadAttention(8, 2)
    x = rnd(2, 4, 8)
    causal = nn.Transformer.generate_square_subsequent_mask(4)
    full = mha(x, x, x, attn_mask=causal)
    cache = mha.gen_cache(x)
    assert cache.k.shape == [2, 2, 0, 4]
    steps = []
    for t in range(4):
        out, cache = mha(x[:, t:t + 1], x[:, t:t + 1], x[:, t:t + 1], None, cache)
        steps.append(out.numpy())
    assert cache.k.shape == [2, 2, 4, 4]
    np.testing.assert_allclose(np.concatenate(steps, 1), full.numpy(), rtol=1e-5, atol=1e-6)
    mem = rnd(2, 6, 8, seed=1)
    static = mha.gen_cache(mem, type=nn.MultiHeadAttention.StaticCache)
    out, same = mha(x, None, None, None, static)
    assert same is static
    np.testing.assert_allclose(out.numpy(), mha(x, mem, mem).numpy(), rtol=1e-5, atol=1e-6)


def test_generate_square_subsequent_mask():
    m = nn.Transformer.generate_square_subsequent_mask(3).numpy()
    assert m.dtype == np.float32
    assert np.all(m[np.tril_indices(3)] == 0) and np.all(np.isneginf(m[np.triu_indices(3, 1)]))


@pytest.mark.parametrize("normalize_before", [False, True])
def test_transformer_layers(normalize_before):
    enc_layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, activation="gelu",
                                           normalize_before=normalize_before)
    enc = nn.TransformerEncoder(enc_layer, 3, norm=nn.LayerNorm(16))
    assert len(enc.layers) == 3 and enc.layers[0] is enc_layer
    # the stacked copies have their own parameters
    assert not np.allclose(enc.layers[0].linear1.weight.numpy(),
                           enc.layers[1].linear1.weight.numpy())
    src = rnd(2, 5, 16)
    mem = enc(src, src_mask=rnd(2, 2, 5, 5))
    assert mem.shape == [2, 5, 16]
    dec_layer = nn.TransformerDecoderLayer(16, 2, 32, dropout=0.0,
                                           normalize_before=normalize_before)
    dec = nn.TransformerDecoder(dec_layer, 2)
    tgt = rnd(2, 4, 16, seed=1)
    mask = nn.Transformer.generate_square_subsequent_mask(4)
    out = dec(tgt, mem, tgt_mask=mask)
    assert out.shape == [2, 4, 16]
    # incremental decoding with caches reproduces the causal full pass
    cache = dec.gen_cache(mem)
    steps = []
    for t in range(4):
        o, cache = dec(tgt[:, t:t + 1], mem, None, None, cache)
        steps.append(o.numpy())
    np.testing.assert_allclose(np.concatenate(steps, 1), out.numpy(), rtol=1e-4, atol=1e-5)
    zipped = dec.gen_cache(mem, do_zip=True)
    assert len(zipped) == 2 and len(zipped[0]) == 2


def test_transformer_model():
    t = nn.Transformer(128, 2, 4, 4, 512)
    out = t(rnd(2, 4, 128), rnd(2, 6, 128), rnd(2, 2, 4, 4), rnd(2, 2, 6, 6), rnd(2, 2, 6, 4))
    assert out.shape == [2, 6, 128]
    assert len(t.encoder.layers) == 4 and len(t.decoder.layers) == 4
    assert isinstance(t.encoder.norm, nn.LayerNorm)
    t2 = nn.Transformer(16, 2, 1, 1, 32, weight_attr=[fw.ParamAttr(), fw.ParamAttr(),
                                                      fw.ParamAttr()])
    assert t2(rnd(1, 3, 16), rnd(1, 2, 16)).shape == [1, 2, 16]


def test_beam_search_decoder():
    fw.seed(0)
    emb = nn.Embedding(100, 32)
    out_layer = nn.Linear(32, 100)
    cell = nn.GRUCell(32, 32)
    dec = nn.BeamSearchDecoder(cell, start_token=0, end_token=1, beam_size=4,
                               embedding_fn=emb, output_fn=out_layer)
    enc = fw.ones([4, 8, 32])
    ids, states = nn.dynamic_decode(dec, inits=cell.get_initial_states(enc), max_step_num=10)
    assert ids.shape[0] == 4 and ids.shape[2] == 4 and 1 <= ids.shape[1] <= 11
    assert ids.dtype == fw.int64
    ids_t, _, lens = nn.dynamic_decode(dec, cell.get_initial_states(enc), max_step_num=5,
                                       output_time_major=True, return_length=True)
    assert ids_t.shape[1:] == [4, 4] and lens.shape == [4, 4]
    # scores of the final beams are sorted (best first)
    assert np.all(np.diff(states.log_probs.numpy(), axis=1) <= 1e-6)


def test_gather_tree():
    ids = fw.to_tensor([[[2, 3]], [[4, 5]], [[6, 7]]])  # [time, batch, beam]
    parents = fw.to_tensor([[[0, 0]], [[1, 0]], [[1, 0]]])
    out = nn.functional.gather_tree(ids, parents).numpy()[:, 0]
    # beam 0 at t=2 came from beam 1 at t=1, which came from beam 0 at t=0; beam 1 at
    # t=2 from beam 0 at t=1, which came from beam 1 at t=0
    assert out[:, 0].tolist() == [2, 5, 6] and out[:, 1].tolist() == [3, 4, 7]


@pytest.mark.parametrize("make,shapes", [
    (lambda: nn.LSTM(4, 6, 2, direction="bidirect"), [[3, 5, 4]]),
    (lambda: nn.RNN(nn.GRUCell(4, 6)), [[3, 5, 4]]),
    (lambda: nn.BiRNN(nn.LSTMCell(4, 6), nn.LSTMCell(4, 6)), [[3, 5, 4]]),
    (lambda: nn.TransformerEncoderLayer(8, 2, 16), [[2, 5, 8]]),
    (lambda: nn.TransformerDecoderLayer(8, 2, 16), [[2, 4, 8], [2, 5, 8]]),
    (lambda: nn.MultiHeadAttention(8, 2), [[2, 5, 8]]),
])
def test_traced_with_dynamic_batch_equals_eager(make, shapes):
    from fw.core.ir import TensorType, run, trace

    fw.seed(0)
    m = make()
    m.eval()
    prog = trace(m, [TensorType([-1] + s[1:], "float32") for s in shapes])
    args = [rnd(*s, seed=i) for i, s in enumerate(shapes)]
    got, want = run(prog, *args), m(*args)
    got = got[0] if isinstance(got, tuple) else got
    want = want[0] if isinstance(want, tuple) else want
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)


def test_transformer_one_element_attr_list_applies_everywhere():
    # Paddle's nn.Transformer: a weight_attr list of length 1 is used for every
    # attention and feed-forward weight of the encoder and the decoder
    attr = fw.ParamAttr(initializer=nn.initializer.Constant(0.5))
    m = nn.Transformer(8, 2, 1, 1, 8, weight_attr=[attr])
    ws = [p for n, p in m.named_parameters() if "norm" not in n and len(p.shape) == 2]
    assert len(ws) == 16 and all(np.all(p.numpy() == 0.5) for p in ws)
    # fw also reads a one-element list so in a single encoder/decoder layer (Paddle
    # asserts one attr per part there)
    layer = nn.TransformerDecoderLayer(8, 2, 8, weight_attr=[attr])
    ws = [p for n, p in layer.named_parameters() if "norm" not in n and len(p.shape) == 2]
    assert len(ws) == 10 and all(np.all(p.numpy() == 0.5) for p in ws)
