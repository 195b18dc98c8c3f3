"""`summary`: a table of a network's layers, output shapes and parameter counts."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from fw.core import dtypes as _dt
from fw.core.tensor import Tensor

__all__ = ["summary"]


def _is_shape(x):
    return isinstance(x, (list, tuple)) and all(isinstance(d, (int, np.integer)) or d is None
                                                for d in x)


def _make_inputs(input_size, dtypes):
    import fw

    if _is_shape(input_size):
        sizes, single = [input_size], True
    else:
        sizes, single = list(input_size), False
    if dtypes is None:
        dtypes = ["float32"] * len(sizes)
    elif isinstance(dtypes, str):
        dtypes = [dtypes] * len(sizes)
    dtypes = list(dtypes)
    if len(dtypes) != len(sizes):
        raise ValueError(f"summary: {len(sizes)} input sizes but {len(dtypes)} dtypes")
    xs = []
    for s, d in zip(sizes, dtypes):
        if not _is_shape(s):
            raise TypeError(f"summary: an input size must be a tuple of ints, got {s!r}")
        shape = [1 if (v is None or v < 0) else int(v) for v in s]
        dt = _dt.convert_dtype(d)
        xs.append(fw.rand(shape).astype(dt) if dt.is_floating_point else
                  fw.zeros(shape, dtype=dt))
    return xs, single


def _shapes(x):
    if isinstance(x, Tensor):
        return list(x.shape)
    if isinstance(x, (list, tuple)):
        return [_shapes(v) for v in x]
    if isinstance(x, dict):
        return {k: _shapes(v) for k, v in x.items()}
    return []


def _numel(x):
    if isinstance(x, Tensor):
        return int(np.prod(x.shape))
    if isinstance(x, (list, tuple)):
        return sum(_numel(v) for v in x)
    if isinstance(x, dict):
        return sum(_numel(v) for v in x.values())
    return 0


def summary(net, input_size=None, dtypes=None, input=None):  # noqa: A002
    """Print a table of `net`'s layers (type, input and output shapes, parameters)
    after one forward pass, and return the parameter counts.

    Args:
        net: an `fw.nn.Layer`.
        input_size: the input shape (a tuple; None/-1 dims become 1) or a list of
            shapes for several inputs.
        dtypes: the input dtype(s) (default float32).
        input: example input (a Tensor, or a list/dict of them) instead of sizes.

    Returns:
        ``{"total_params": int, "trainable_params": int}``.

    Examples:
        >>> import fw
        >>> net = fw.nn.Sequential(fw.nn.Linear(8, 16), fw.nn.ReLU(), fw.nn.Linear(16, 2))
        >>> info = fw.summary(net, (1, 8))
        ----------------------------------------------------
          Layer (type)  Input Shape  Output Shape  Param #
        ====================================================
            Linear-1      [[1, 8]]     [1, 16]       144
             ReLU-1      [[1, 16]]     [1, 16]        0
            Linear-2     [[1, 16]]      [1, 2]        34
        ====================================================
        Total params: 178
        Trainable params: 178
        Non-trainable params: 0
        ----------------------------------------------------
        Input size (MB): 0.00
        Forward/backward pass size (MB): 0.00
        Params size (MB): 0.00
        Estimated Total Size (MB): 0.00
        ----------------------------------------------------
        >>> info
        {'total_params': 178, 'trainable_params': 178}
    """
    from fw.autograd import no_grad

    if input is None and input_size is None:
        raise ValueError("summary: give input_size or input")
    rows = OrderedDict()
    hooks = []
    counter = {}
    seen = set()

    def register(layer, is_root):
        from fw.nn import LayerList, Sequential

        if isinstance(layer, (Sequential, LayerList)) or (is_root and
                                                          list(layer.children())):
            return

        def hook(lyr, inputs, output):
            cls = type(lyr).__name__
            counter[cls] = counter.get(cls, 0) + 1
            key = f"{cls}-{counter[cls]}"
            own = [p for p in lyr.parameters(include_sublayers=False)]
            n = sum(int(np.prod(p.shape)) for p in own)
            trainable = sum(int(np.prod(p.shape)) for p in own if not p.stop_gradient)
            if id(lyr) in seen:  # a shared layer counts its parameters once
                n = trainable = 0
            seen.add(id(lyr))
            rows[key] = {"input": _shapes(list(inputs)), "output": _shapes(output),
                         "params": n, "trainable": trainable, "out_numel": _numel(output)}

        hooks.append(layer.register_forward_post_hook(hook))

    for layer in net.sublayers(include_self=True):
        register(layer, layer is net)
    was_training = net.training
    net.eval()
    try:
        with no_grad():
            if input is not None:
                net(input)  # a Tensor, or the list/dict the network's forward takes
                in_bytes = _numel(input) * 4
            else:
                xs, _ = _make_inputs(input_size, dtypes)
                net(*xs)
                in_bytes = sum(int(np.prod(x.shape)) * x.element_size() for x in xs)
    finally:
        for h in hooks:
            h.remove()
        if was_training:
            net.train()
    total = sum(int(np.prod(p.shape)) for p in net.parameters())
    trainable = sum(int(np.prod(p.shape)) for p in net.parameters() if not p.stop_gradient)
    w = [max([len("Layer (type)")] + [len(k) for k in rows]) + 2,
         max([len("Input Shape")] + [len(str(r["input"])) for r in rows.values()]) + 2,
         max([len("Output Shape")] + [len(str(r["output"])) for r in rows.values()]) + 2,
         max([len("Param #")] + [len(f"{r['params']:,}") for r in rows.values()]) + 2]
    width = sum(w) + 2
    lines = ["-" * width,
             " " + "Layer (type)".center(w[0]) + "Input Shape".center(w[1]) +
             "Output Shape".center(w[2]) + "Param #".center(w[3]),
             "=" * width]
    for k, r in rows.items():
        lines.append(" " + k.center(w[0]) + str(r["input"]).center(w[1]) +
                     str(r["output"]).center(w[2]) + f"{r['params']:,}".center(w[3]))
    mib = 1024.0 ** 2
    fwd = sum(r["out_numel"] for r in rows.values()) * 4 * 2 / mib  # outputs and gradients
    psize = total * 4 / mib
    lines += ["=" * width, f"Total params: {total:,}", f"Trainable params: {trainable:,}",
              f"Non-trainable params: {total - trainable:,}", "-" * width,
              f"Input size (MB): {in_bytes / mib:.2f}",
              f"Forward/backward pass size (MB): {fwd:.2f}",
              f"Params size (MB): {psize:.2f}",
              f"Estimated Total Size (MB): {in_bytes / mib + fwd + psize:.2f}", "-" * width]
    print("\n".join(lines))
    return {"total_params": total, "trainable_params": trainable}
