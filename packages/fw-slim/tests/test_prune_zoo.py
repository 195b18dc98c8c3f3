"""The zoo's LeNet, ResNet-18 and MobileNetV2 (depthwise convs) with 50 % of their
conv channels pruned: every prunable group halves, the pruned model equals the
zeroed original, and it saves (fw.jit.save) and serves (fw.inference) with the
eager values."""

import sys
from pathlib import Path

import numpy as np
import pytest

import fw
import fw.jit
import fw.slim as slim

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests"))
import zoo  # noqa: E402


@pytest.mark.parametrize("name,hw", [("lenet", 28), ("resnet18", 32), ("mobilenet_v2", 32)])
def test_zoo_prune_save_serve(tmp_path, name, hw):
    infer = pytest.importorskip("fw.inference")
    from fw.jit import InputSpec, save

    fw.seed(0)
    model = zoo.build(fw, name)
    c = zoo.INPUTS[name][0][0]
    x = zoo.example_input(fw, name, batch=2, hw=hw)
    pruner = slim.FPGMFilterPruner(model, [1, c, hw, hw])
    groups = {g.name: g.channels for g in pruner.prunable_groups()}
    # LeNet: both convs; ResNet-18: the stem/residual groups and each block's inner conv;
    # MobileNetV2: each block's expansion (with its depthwise conv) and the residual chains
    assert len(groups) == {"lenet": 2, "resnet18": 12, "mobilenet_v2": 25}[name]
    plan = pruner.plan(0.5)
    with pruner.zeroed(plan):
        want = model(x).numpy()
    def conv_widths():
        return {n: int(m.weight.shape[0]) for n, m in model.named_sublayers()
                if isinstance(m, fw.nn.Conv2D)}

    before = conv_widths()
    pruner.prune(0.5)
    after = conv_widths()
    # every conv of these two models produces a prunable group: each one halves
    assert after == {n: w - round(w * 0.5) for n, w in before.items()}
    for gname, ch in groups.items():
        assert len(plan[gname]) == round(ch * 0.5)
    got = model(x).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)

    path = tmp_path / "pruned"
    save(model, str(path), input_spec=[InputSpec([-1, c, hw, hw], "float32")])
    pred = infer.create_predictor(infer.Config(str(path)))
    (served,) = pred.run([x.numpy()])
    np.testing.assert_allclose(np.asarray(served), got, rtol=1e-4, atol=1e-4)
    # a pruned model prunes again (the groups were analysed afresh)
    assert {g.channels for g in pruner.prunable_groups()} <= {ch - round(ch * 0.5)
                                                             for ch in groups.values()}


def test_zoo_bert_ffn_widths():
    """prune_linear=True on the zoo's BERT-style encoder: each layer's feed-forward
    width (linear1 -> gelu -> linear2) is a group; attention (head reshapes) and
    the residual stream (layer norms) stay fixed, with their reasons."""
    fw.seed(0)
    model = zoo.build(fw, "bert_encoder", layers=2, seq=16)
    ids = fw.to_tensor(np.random.default_rng(0).integers(0, zoo.BERT_VOCAB, (2, 16)))
    from fw.jit import InputSpec

    pruner = slim.ChannelPruner(model, [InputSpec([-1, 16], "int64")], prune_linear=True)
    names = [g.name for g in pruner.prunable_groups()]
    assert names == [f"encoder.layers.{i}.linear1.weight" for i in range(2)]
    q = pruner.group("encoder.layers.0.self_attn.q_proj")
    assert "reshape" in " ".join(q.reasons)
    plan = pruner.plan(0.5)
    with pruner.zeroed(plan):
        want = model(ids).numpy()
    pruner.prune(0.5)
    np.testing.assert_allclose(model(ids).numpy(), want, rtol=1e-4, atol=1e-4)
    layer = model.encoder.layers[0]
    assert layer.linear1.weight.shape == [256, 512] and layer.linear2.weight.shape == [512, 256]


def test_flops_lenet_by_hand():
    fw.seed(0)
    model = zoo.build(fw, "lenet")
    # conv1: 6 x 28x28 outputs x (1*3*3); conv2: 16 x 10x10 x (6*5*5); fc: 400*120+120*84+84*10
    want = 6 * 784 * 9 + 16 * 100 * 150 + 400 * 120 + 120 * 84 + 84 * 10
    total, rows = slim.flops(model, [1, 1, 28, 28], detail=True)
    assert total == want and [n for n, _ in rows] == ["conv", "conv", "linear", "linear", "linear"]
    slim.L1NormFilterPruner(model, [1, 1, 28, 28]).prune(0.5)
    assert slim.flops(model, [1, 1, 28, 28]) == \
        3 * 784 * 9 + 8 * 100 * 75 + 200 * 120 + 120 * 84 + 84 * 10
    with pytest.raises(ValueError, match="dynamic output shape"):
        slim.flops(model, [fw.jit.InputSpec([-1, 1, -1, -1])])
