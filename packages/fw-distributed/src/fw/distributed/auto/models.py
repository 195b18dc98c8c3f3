"""Symbolic programs of published models, for estimating what cannot be allocated.

`gpt_program` and `resnet50_program` build the forward + loss of one micro-batch
directly in fw's IR with *symbolic* parameters (block arguments of role "param",
no storage), so a 1-trillion-parameter GPT can be priced on a laptop. They use
the same fw functional ops as the eager layers, so `estimate` sees the op mix the
real model runs. `estimate` appends the backward.
"""

from __future__ import annotations

__all__ = ["gpt_program", "resnet50_program"]


def _param(b, shape, name, dtype="float32"):
    from fw.core.ir import TensorType

    v = b.program.block.add_arg(TensorType(list(shape), dtype), "param", name)
    v.stop_gradient = False
    return v


def gpt_program(layers, hidden, heads, seq, vocab, batch=1, ffn=None):
    """The GPT of Radford et al. / Megatron-LM (pre-norm blocks, GELU MLP of width
    4h, a head tied to the token embedding) for one micro-batch, as a Program whose
    output is the mean cross-entropy loss.

    Args:
        layers (int), hidden (int), heads (int): the transformer's depth and widths.
        seq (int): sequence length. vocab (int): vocabulary size.
        batch (int): sequences per micro-batch. ffn (int, optional): MLP width (4h).

    Returns:
        Program

    Examples:
        .. code-block:: python

            >>> import fw
            >>> from fw.distributed.auto.models import gpt_program
            >>> p = gpt_program(layers=2, hidden=64, heads=4, seq=16, vocab=50)
            >>> sum(v.type.numel() for v in p.parameters()) > 0
            True
    """
    import fw
    import fw.nn.functional as F
    from fw.core.ir import TensorType, building

    if hidden % heads:
        raise ValueError(f"gpt_program: hidden {hidden} is not a multiple of heads {heads}")
    ffn = ffn or 4 * hidden
    with building() as b:
        ids = b.add_input(TensorType([batch, seq], "int64"), "ids")
        labels = b.add_input(TensorType([batch, seq], "int64"), "labels")
        wte = _param(b, [vocab, hidden], "wte")
        wpe = _param(b, [seq, hidden], "wpe")
        h = F.embedding(ids, wte) + F.embedding(fw.arange(seq, dtype="int64"), wpe)
        for i in range(layers):
            p = {n: _param(b, s, f"h{i}.{n}") for n, s in (
                ("ln1.w", [hidden]), ("ln1.b", [hidden]), ("qkv.w", [hidden, 3 * hidden]),
                ("qkv.b", [3 * hidden]), ("proj.w", [hidden, hidden]), ("proj.b", [hidden]),
                ("ln2.w", [hidden]), ("ln2.b", [hidden]), ("fc1.w", [hidden, ffn]),
                ("fc1.b", [ffn]), ("fc2.w", [ffn, hidden]), ("fc2.b", [hidden]))}
            x = F.layer_norm(h, [hidden], p["ln1.w"], p["ln1.b"])
            qkv = F.linear(x, p["qkv.w"], p["qkv.b"]).reshape(
                [batch, seq, heads, 3, hidden // heads])
            q, k, v = fw.unbind(qkv, 3)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            h = h + F.linear(a.reshape([batch, seq, hidden]), p["proj.w"], p["proj.b"])
            x = F.layer_norm(h, [hidden], p["ln2.w"], p["ln2.b"])
            h = h + F.linear(F.gelu(F.linear(x, p["fc1.w"], p["fc1.b"]), approximate=True),
                             p["fc2.w"], p["fc2.b"])
        h = F.layer_norm(h, [hidden], _param(b, [hidden], "lnf.w"), _param(b, [hidden], "lnf.b"))
        logits = fw.matmul(h, wte, transpose_y=True)
        loss = F.cross_entropy(logits.reshape([-1, vocab]), labels.reshape([-1]))
        b.set_outputs(loss)
    return b.program


def resnet50_program(batch=1, num_classes=1000, image=224):
    """ResNet-50 v1.5 (He et al. 2016; the stride-2 3x3 convolution in each
    downsampling bottleneck, as NVIDIA's and Paddle's v1.5) for one micro-batch of
    `image` x `image` RGB images, training-mode batch norm, softmax cross-entropy.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> from fw.distributed.auto.models import resnet50_program
            >>> p = resnet50_program(batch=1, image=64)
            >>> round(sum(v.type.numel() for v in p.parameters()) / 1e6, 1)
            25.6
    """
    import fw.nn.functional as F
    from fw.core.ir import TensorType, building

    count = [0]

    def conv_bn(b, x, cin, cout, k, stride, relu=True):
        count[0] += 1
        i = count[0]
        w = _param(b, [cout, cin, k, k], f"conv{i}.w")
        g, be = _param(b, [cout], f"bn{i}.w"), _param(b, [cout], f"bn{i}.b")
        from fw.core.ir import TensorType as _T

        mean = b.program.block.add_arg(_T([cout], "float32"), "const", f"bn{i}.mean")
        var = b.program.block.add_arg(_T([cout], "float32"), "const", f"bn{i}.var")
        y = F.batch_norm(F.conv2d(x, w, stride=stride, padding=k // 2), mean, var, g, be,
                         training=True)
        return F.relu(y) if relu else y

    with building() as b:
        x = b.add_input(TensorType([batch, 3, image, image], "float32"), "images")
        labels = b.add_input(TensorType([batch], "int64"), "labels")
        h = conv_bn(b, x, 3, 64, 7, 2)
        h = F.max_pool2d(h, 3, 2, padding=1)
        cin = 64
        for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
            for j in range(blocks):
                s = stride if j == 0 else 1
                y = conv_bn(b, h, cin, width, 1, 1)
                y = conv_bn(b, y, width, width, 3, s)  # v1.5: the stride is here
                y = conv_bn(b, y, width, 4 * width, 1, 1, relu=False)
                if j == 0:
                    h = conv_bn(b, h, cin, 4 * width, 1, s, relu=False)
                h = F.relu(y + h)
                cin = 4 * width
        h = F.adaptive_avg_pool2d(h, 1).reshape([batch, cin])
        w = _param(b, [cin, num_classes], "fc.w")
        logits = F.linear(h, w, _param(b, [num_classes], "fc.b"))
        b.set_outputs(F.cross_entropy(logits, labels))
    return b.program
