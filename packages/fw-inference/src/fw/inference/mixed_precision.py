"""``convert_to_mixed_precision``: rewrite a saved model so that it computes in
float16 or bfloat16 (Paddle Inference's model converter).

The rewrite works on the loaded program (fw's ``.fwmodel``, or a Paddle model
through ``paddle_format``) and writes fw's model file:

- every op not in `black_list` whose floating operands are float32 runs in the
  low precision: its float32 operands get a ``cast`` to it first (one cast per
  value, shared by all its users) and its results take the low dtype (the op's
  ``infer`` re-derives them);
- an op in `black_list` keeps float32: low-precision operands are cast back;
- a float32 weight (param/const) whose users all run low is stored in the low
  dtype (half the bytes); one with a float32 user stays float32 and is cast
  where a low op reads it;
- ``keep_io_types=True`` keeps the feed inputs and the fetched outputs float32
  (casts at the edges); False makes float32 inputs and outputs low-precision.

Ops inside control flow (``cond``/``while`` blocks) are left in float32 (the
casts are placed around the control-flow op). ``white_list`` ops are converted
even if they are in the default float32 set (`KEEP_FP32`: ops whose result
depends on a sum over many elements in a way float16 overflows or loses,
following Paddle's AMP black list: softmax with cross entropy, norms of whole
tensors, exp and log). Layer and batch norms run low (the BERT-style fixture's
layer norms stay within the tested tolerance; black-list them if yours do not).
"""
from __future__ import annotations

import os

import numpy as np

from fw.inference.enums import PlaceType, PrecisionType

__all__ = ["convert_to_mixed_precision", "KEEP_FP32"]

# following Paddle's AMP "black list" (ops kept in float32 by default): losses and
# reductions whose float16 result overflows or loses precision
KEEP_FP32 = frozenset({"cross_entropy_with_softmax", "binary_cross_entropy",
                       "binary_cross_entropy_with_logits", "log_softmax", "exp", "expm1", "log",
                       "log1p", "pow", "square", "sum", "nansum", "mean", "nanmean", "cumsum",
                       "logsumexp", "logcumsumexp", "vector_norm", "matrix_norm"})
_FLOAT32 = "float32"

# Paddle op names in black/white lists -> the fw ops the Paddle importer makes of them
# (paddle_format/ops.py); fw's own op names are taken as they are
PADDLE_ALIASES = {"conv2d": ("conv",), "depthwise_conv2d": ("conv",),
                  "conv2d_transpose": ("conv_transpose",), "pool2d": ("max_pool", "avg_pool"),
                  "matmul_v2": ("matmul",), "mul": ("matmul",), "fc": ("matmul", "add"),
                  "elementwise_add": ("add",), "elementwise_sub": ("subtract",),
                  "elementwise_mul": ("multiply",), "elementwise_div": ("divide",),
                  "lookup_table_v2": ("embedding",), "batch_norm": ("batch_norm",),
                  "reshape2": ("reshape",), "transpose2": ("transpose",),
                  "flatten_contiguous_range": ("flatten",)}


def _op_names(names, what, fn):
    """fw op names of a black/white list (Paddle's names translated); an unknown name
    is an error."""
    from fw.core.ops import OPS

    out = set()
    for n in names or ():
        if n in PADDLE_ALIASES:
            out.update(PADDLE_ALIASES[n])
        elif n in OPS:
            out.add(n)
        else:
            raise ValueError(f"{fn}: {what} names {n!r}, which is neither an fw op nor a "
                             f"Paddle op fw knows the name of")
    return out


def _low_dtype(mixed_precision):
    if mixed_precision in (PrecisionType.Half, "float16", "fp16"):
        return "float16"
    if mixed_precision in (PrecisionType.Bfloat16, "bfloat16", "bf16"):
        return "bfloat16"
    raise ValueError(f"convert_to_mixed_precision: mixed_precision must be PrecisionType.Half "
                     f"or PrecisionType.Bfloat16, got {mixed_precision!r}")


def _load(model_file, params_file):
    """The program of a saved model (fw or Paddle format), weights attached."""
    from fw.core.ir import load
    from fw.inference.config import Config
    from fw.inference.paddle_format import load_paddle_model
    from fw.inference.predictor import _replace_weights

    config = Config(model_file, params_file) if params_file else Config(model_file)
    paddle = load_paddle_model(config)
    if paddle is not None:
        return paddle[0]
    path = config.model_file()
    program, _ = load(path, for_inference=True, limits=config.model_limits())
    params = config.params_file()
    if params and os.path.abspath(params) != os.path.abspath(path):
        _replace_weights(program, params)
    return program


def _is_float(v, name):
    return v is not None and v.type.dtype.name == name


def convert_to_mixed_precision(model_file, params_file, mixed_model_file, mixed_params_file,
                               mixed_precision, backend, keep_io_types=True, black_list=None,
                               **kwargs):
    """Convert a saved float32 model to float16 or bfloat16 computation.

    Writes `mixed_model_file` (fw's model file: program and weights) and
    `mixed_params_file` (the weights alone, safetensors; ``Config(mixed_model_file,
    mixed_params_file)`` reads both). Load it with ``fw.inference.Config`` and run it
    in a `Predictor` like the original.

    Args:
        model_file (str): the model (``.fwmodel``, or Paddle's ``.json``/``.pdmodel``).
        params_file (str): its weights (Paddle's ``.pdiparams``; for an ``.fwmodel`` a
            params file of `Config`, or "" for none).
        mixed_model_file (str): where to write the converted model.
        mixed_params_file (str): where to write its weights ("" for none).
        mixed_precision (PrecisionType): ``PrecisionType.Half`` (float16) or
            ``PrecisionType.Bfloat16``.
        backend (PlaceType): the device it will run on: ``PlaceType.CPU`` or
            ``PlaceType.GPU`` (fw's kernels compute both dtypes on either; Paddle's
            converter refuses CPU).
        keep_io_types (bool, optional): keep float32 inputs and outputs, casting at
            the edges. Default: True.
        black_list (set[str], optional): ops kept in float32: fw op names, or Paddle's
            (``conv2d``, ``matmul_v2``, ... are translated, `PADDLE_ALIASES`).
            Default: None.
        **kwargs: ``white_list`` (set[str]): ops converted even if fw keeps them in
            float32 by default (`KEEP_FP32`).

    Returns:
        None.

    Examples:
        >>> import fw
        >>> import numpy as np
        >>> import fw.inference as infer
        >>> from fw.static import InputSpec
        >>> net = fw.nn.Sequential(fw.nn.Linear(4, 8), fw.nn.ReLU(), fw.nn.Linear(8, 2))
        >>> path = fw.jit.save(net, "mlp", input_spec=[InputSpec([None, 4], "float32", "x")])
        >>> infer.convert_to_mixed_precision(path, "", "mlp_fp16.fwmodel", "mlp_fp16.safetensors",
        ...                                  infer.PrecisionType.Half, infer.PlaceType.CPU)
        >>> pred = infer.create_predictor(infer.Config("mlp_fp16.fwmodel"))
        >>> x = np.ones((3, 4), np.float32)
        >>> y = pred.run([x])[0].numpy()
        >>> y.dtype, bool(np.allclose(y, net(fw.to_tensor(x)).numpy(), atol=1e-2))
        (dtype('float32'), True)
    """
    fn = "convert_to_mixed_precision"
    low = _low_dtype(mixed_precision)
    if backend not in (PlaceType.CPU, PlaceType.GPU):
        raise ValueError(f"{fn}: backend must be PlaceType.CPU or PlaceType.GPU, got {backend!r}")
    unknown = sorted(set(kwargs) - {"white_list"})
    if unknown:
        raise TypeError(f"{fn}: unknown arguments {unknown} (only white_list)")
    black = _op_names(black_list, "black_list", fn)
    white = _op_names(kwargs.get("white_list"), "white_list", fn)
    both = sorted(black & white)
    if both:
        raise ValueError(f"{fn}: ops {both} are in both black_list and white_list")
    for what, v in (("model_file", model_file), ("mixed_model_file", mixed_model_file)):
        if not isinstance(v, (str, os.PathLike)) or not os.fspath(v):
            raise ValueError(f"{fn}: {what} must be a path, got {v!r}")
    program = _load(os.fspath(model_file), os.fspath(params_file or ""))
    fp32_ops = (KEEP_FP32 | black) - white
    _rewrite(program, low, keep_io_types, fp32_ops)
    from fw.core.ir import save

    out = os.fspath(mixed_model_file)
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    save(program, out)
    if mixed_params_file:
        from safetensors.numpy import save_file

        from fw.core.atomic_io import atomic_path

        arrays = {a.label: np.ascontiguousarray(np.asarray(program.captured[a.label]._data))
                  for a in program.params()}
        p = os.fspath(mixed_params_file)
        with atomic_path(p, make_parents=True) as tmp:
            save_file(arrays, tmp)
    return None


def _rewrite(program, low, keep_io_types, fp32_ops):
    from fw.core.ir.passes.rewrite import Rewriter
    from fw.core.ir.types import TensorType
    from fw.core.tensor import wrap

    rw = Rewriter(program)
    block = program.block
    casts = {}      # (value id, dtype) -> cast result, one cast per value and dtype

    def cast(v, dtype, before):
        key = (id(v), dtype)
        c = casts.get(key)
        if c is None:
            c = rw.create("cast", [v], {"dtype": dtype}, before=before).results[0]
            casts[key] = c
        return c

    def runs_low(op):
        if op.name in fp32_ops or op.name == "cast" or op.blocks:
            return False
        return any(_is_float(v, _FLOAT32) for v in op.operands)

    ops = list(block.ops)
    low_ops = {id(op) for op in ops if runs_low(op)}
    # weights: stored low when every user runs low
    for a in program.params():
        if not _is_float(a, _FLOAT32) or a.label in program.updates.labels:
            continue
        users = rw.users(a)
        if users and all(hasattr(u[0], "opdef") and id(u[0]) in low_ops for u in users):
            t = program.captured[a.label]
            arr = np.asarray(t._data).astype(TensorType([], low).dtype.np)
            w = wrap(arr)
            w.name = a.label
            w.persistable = True
            program.captured[a.label] = w
            a.type = a.type.with_dtype(low)
    if not keep_io_types:
        for a in program.inputs():
            if _is_float(a, _FLOAT32):
                a.type = a.type.with_dtype(low)
    for op in ops:
        if id(op) in low_ops:
            for i, v in enumerate(list(op.operands)):
                if _is_float(v, _FLOAT32):
                    rw.set_operand(op, i, cast(v, low, op))
            new = rw.create(op.name, list(op.operands), dict(op.attrs), before=op)
            rw.replace_op(op, new.results)
        else:
            changed = False
            for i, v in enumerate(list(op.operands)):
                if _is_float(v, low) and op.name != "cast":
                    rw.set_operand(op, i, cast(v, _FLOAT32, op))
                    changed = True
            if changed and not op.blocks:
                new = rw.create(op.name, list(op.operands), dict(op.attrs), before=op)
                rw.replace_op(op, new.results)
    # outputs: float32 again at the edge (keep_io_types), else as computed
    outs = list(block.outputs)
    for i, v in enumerate(outs):
        if keep_io_types and _is_float(v, low):
            c = rw.create("cast", [v], {"dtype": _FLOAT32}, block=block).results[0]
            block.outputs[i] = c
        elif not keep_io_types and _is_float(v, _FLOAT32):
            c = rw.create("cast", [v], {"dtype": low}, block=block).results[0]
            block.outputs[i] = c
    from fw.core.ir.passes import PassManager

    PassManager(["dce"]).run(program)
