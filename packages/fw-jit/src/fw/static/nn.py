"""``fw.static.nn``: control flow and the classic ``fc`` layer for static programs.

`cond` and `while_loop` are fw.core.ir.control's builders: on symbolic values they
emit ``cond``/``while`` ops into the values' program, on concrete tensors they run
as Python control flow.
"""

from __future__ import annotations

import numpy as np

from fw.core.internal import build_state
from fw.core.ir import control as _control
from fw.core.ir.core import Value
from fw.static._layers import (  # noqa: F401 - re-exported
    batch_norm,
    bilinear_tensor_product,
    conv2d,
    conv2d_transpose,
    conv3d,
    conv3d_transpose,
    deform_conv2d,
    embedding,
    group_norm,
    instance_norm,
    layer_norm,
    nce,
    prelu,
    row_conv,
    sparse_embedding,
    spectral_norm,
)

__all__ = ["cond", "while_loop", "fc", "case", "switch_case", "batch_norm",
           "bilinear_tensor_product", "conv2d", "conv2d_transpose", "conv3d",
           "conv3d_transpose", "deform_conv2d", "embedding", "group_norm", "instance_norm",
           "layer_norm", "prelu", "row_conv", "sparse_embedding", "spectral_norm",
           "sequence_conv", "sequence_expand", "sequence_first_step", "sequence_last_step",
           "sequence_pool", "sequence_softmax", "py_func", "static_pylayer", "nce"]


def _first_value(xs):
    for x in xs:
        if type(x) is Value:
            return x
        if isinstance(x, (list, tuple)):
            v = _first_value(x)
            if v is not None:
                return v
    return None


def cond(pred, true_fn=None, false_fn=None, name=None, return_names=None):
    """Run ``true_fn()`` if `pred` is true, else ``false_fn()``.

    With a concrete `pred` (eager mode) it simply calls one branch; with a symbolic
    `pred` (a program being built) it records a ``cond`` op holding both branches, whose
    outputs must match in structure, shape and dtype.

    Args:
        pred (Tensor|bool): a boolean scalar.
        true_fn (callable, optional): called when `pred` is true. Default: None (returns
            None).
        false_fn (callable, optional): called when `pred` is false. Default: None.
        name (str, optional): unused, for Paddle compatibility. Default: None.
        return_names (list, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        The chosen branch's outputs (Tensor, or a nested structure of them).

    Examples:
        >>> import fw
        >>> x = fw.to_tensor(3.0)
        >>> float(fw.static.nn.cond(x > 2, lambda: x * 2, lambda: x - 1))
        6.0
    """
    if type(pred) is Value and build_state.builder is None:
        from fw.static._mode import builder_for

        with builder_for(pred):
            return _control.cond(pred, true_fn, false_fn, name)
    return _control.cond(pred, true_fn, false_fn, name)


def while_loop(cond, body, loop_vars, is_test=False, name=None):
    """Run ``while cond(*loop_vars): loop_vars = body(*loop_vars)``.

    Eagerly a Python loop; with a symbolic loop variable (a program being built) a
    ``while`` op whose body keeps each variable's shape and dtype.

    Args:
        cond (callable): takes the loop variables, returns a boolean scalar Tensor.
        body (callable): takes the loop variables, returns their new values (a list of
            the same length).
        loop_vars (list|tuple): the initial values.
        is_test (bool, optional): unused, for Paddle compatibility. Default: False.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        list: the final loop variables.

    Examples:
        >>> import fw
        >>> i, s = fw.static.nn.while_loop(lambda i, s: i < 3, lambda i, s: [i + 1, s + i],
        ...                                [fw.to_tensor(0), fw.to_tensor(0)])
        >>> int(i), int(s)
        (3, 3)
    """
    v = _first_value(list(loop_vars))
    if v is None and build_state.builder is None:
        # concrete starting values: the loop is symbolic when its condition is
        c = cond(*loop_vars)
        v = c if type(c) is Value else None
    if v is not None and build_state.builder is None:
        from fw.static._mode import builder_for

        with builder_for(v):
            return _control.while_loop(cond, body, loop_vars, is_test, name)
    return _control.while_loop(cond, body, loop_vars, is_test, name)


_FC_COUNT = [0]


def fc(x, size, num_flatten_dims=1, weight_attr=None, bias_attr=None, activation=None,
       name=None):
    """A fully connected layer on `x`, creating its weight and bias.

    The dims of `x` from `num_flatten_dims` on are flattened into the input features;
    the result keeps `x`'s leading dims and has `size` features. The weight
    ``[in_features, size]`` and bias ``[size]`` are initialised now (eagerly) and named
    ``<name or fc_N>.w_0`` / ``.b_0``. With a list of inputs each gets its own weight
    (``.w_0``, ``.w_1``, …; `weight_attr` may be a list) and their products are summed
    before the one bias, as in Paddle.

    Args:
        x (Tensor|list[Tensor]): the input(s).
        size (int): the number of output features.
        num_flatten_dims (int, optional): how many leading dims are kept. Default: 1.
        weight_attr (ParamAttr|list, optional): the weight's attributes. Default: None.
        bias_attr (ParamAttr|bool, optional): the bias's attributes; False for no bias.
            Default: None.
        activation (str, optional): the name of an ``fw.nn.functional`` activation
            ("relu", "softmax", …) applied to the result. Default: None.
        name (str, optional): the parameters' name prefix. Default: None.

    Returns:
        Tensor: the output, ``x.shape[:num_flatten_dims] + [size]``.

    Examples:
        >>> import fw
        >>> out = fw.static.nn.fc(fw.ones([2, 3]), size=4)
        >>> out.shape
        [2, 4]
        >>> two = fw.static.nn.fc([fw.ones([2, 3]), fw.ones([2, 5])], size=4, activation="relu")
        >>> two.shape
        [2, 4]
    """
    import fw
    from fw.nn import ParamAttr, create_parameter

    xs = list(x) if isinstance(x, (list, tuple)) else [x]
    if not xs:
        raise ValueError("fc: x must be a tensor or a non-empty list of tensors")
    if isinstance(weight_attr, (list, tuple)):
        if len(weight_attr) != len(xs):
            raise ValueError(f"fc: {len(weight_attr)} weight_attr for {len(xs)} inputs")
        was = list(weight_attr)
    else:
        if len(xs) > 1 and ParamAttr._to_attr(weight_attr).name is not None:
            raise ValueError("fc: one named weight_attr cannot be shared by several inputs; "
                             "give a list")
        was = [weight_attr] * len(xs)
    prefix = name or f"fc_{_FC_COUNT[0]}"
    _FC_COUNT[0] += 1
    out = None
    lead0 = None
    for i, (xi, wai) in enumerate(zip(xs, was)):
        shape = list(xi.shape)
        if not 1 <= num_flatten_dims < len(shape) + (1 if len(shape) == 1 else 0):
            if not (len(shape) >= 1 and num_flatten_dims == len(shape)):
                raise ValueError(f"fc: num_flatten_dims={num_flatten_dims} does not fit an "
                                 f"input of rank {len(shape)} (shape {shape})")
        feat = shape[num_flatten_dims:]
        if any(d < 0 for d in feat):
            raise ValueError(f"fc: the feature dims {feat} of the input must be known")
        in_features = int(np.prod(feat)) if feat else 1
        wa = ParamAttr._to_attr(wai)
        if wa.name is None:
            wa = ParamAttr(f"{prefix}.w_{i}", wa.initializer, wa.learning_rate, wa.regularizer,
                           wa.trainable, wa.do_model_average, wa.need_clip)
        w = create_parameter([in_features, size], xi.dtype, attr=wa)
        lead = shape[:num_flatten_dims]
        lead0 = lead if lead0 is None else lead0
        h = xi
        if len(feat) != 1:
            h = fw.reshape(xi, lead + [in_features] if all(d >= 0 for d in lead) else
                           [-1 if j == 0 else d for j, d in enumerate(lead)] + [in_features])
        y = fw.matmul(h, w)
        out = y if out is None else out + y
    if bias_attr is not False:
        ba = ParamAttr._to_attr(bias_attr)
        if ba.name is None:
            ba = ParamAttr(f"{prefix}.b_0", ba.initializer, ba.learning_rate, ba.regularizer,
                           ba.trainable, ba.do_model_average, ba.need_clip)
        b = create_parameter([size], xs[0].dtype, attr=ba, is_bias=True)
        out = out + b
    if activation is not None:
        fn = getattr(fw.nn.functional, activation, None)
        if fn is None:
            raise ValueError(f"fc: unknown activation {activation!r}")
        out = fn(out)
    return out

def case(pred_fn_pairs, default=None, name=None):
    """The fn of the first ``(pred, fn)`` pair whose `pred` is true, else `default`
    (Paddle's ``static.nn.case``; with no `default` the last pair's fn is the
    default). Built from nested `cond` ops when the predicates are symbolic.

    Args:
        pred_fn_pairs (list|tuple): ``(bool scalar Tensor, callable)`` pairs.
        default (callable, optional): called when no predicate holds.
        name (str, optional): unused.

    Returns:
        what the chosen fn returns.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor(0.3)
        >>> r = fw.static.nn.case([(x > 0.5, lambda: fw.to_tensor(1)),
        ...                        (x > 0.1, lambda: fw.to_tensor(2))],
        ...                       default=lambda: fw.to_tensor(3))
        >>> int(r)
        2
    """
    if not isinstance(pred_fn_pairs, (list, tuple)) or not pred_fn_pairs:
        raise TypeError("static.nn.case: pred_fn_pairs must be a non-empty list of "
                        "(pred, fn) pairs")
    for i, pair in enumerate(pred_fn_pairs):
        if not isinstance(pair, (list, tuple)) or len(pair) != 2 or not callable(pair[1]):
            raise TypeError(f"static.nn.case: pred_fn_pairs[{i}] must be a (pred, callable) "
                            f"pair, got {pair!r}")
    pairs = list(pred_fn_pairs)
    if default is None:
        default = pairs.pop()[1]
    elif not callable(default):
        raise TypeError(f"static.nn.case: default must be callable, got {type(default).__name__}")

    def chain(i):
        if i == len(pairs):
            return default
        pred, fn = pairs[i]
        return lambda: cond(pred, fn, chain(i + 1))

    return chain(0)()


def switch_case(branch_index, branch_fns, default=None, name=None):
    """The branch fn whose index equals `branch_index` (Paddle's
    ``static.nn.switch_case``); other indices run `default` (with none given, the
    branch with the largest index). Nested `cond` ops when the index is symbolic.

    Args:
        branch_index (Tensor): an int32/int64 scalar (or shape ``[1]``).
        branch_fns (dict|list|tuple): ``{index: fn}``, ``[(index, fn), ...]`` or
            ``[fn0, fn1, ...]``.
        default (callable, optional). name (str, optional): unused.

    Returns:
        what the chosen fn returns.

    Examples:
        >>> import fw
        >>> i = fw.to_tensor(1, dtype="int64")
        >>> r = fw.static.nn.switch_case(i, {0: lambda: fw.to_tensor(10),
        ...                                  1: lambda: fw.to_tensor(20)})
        >>> int(r)
        20
    """
    dt = str(getattr(branch_index, "dtype", "")).split(".")[-1]
    if dt not in ("int32", "int64"):
        raise TypeError(f"static.nn.switch_case: branch_index must be an int32/int64 tensor, "
                        f"got {type(branch_index).__name__} of dtype {dt or None}")
    if isinstance(branch_fns, dict):
        items = list(branch_fns.items())
    elif isinstance(branch_fns, (list, tuple)) and all(callable(f) for f in branch_fns):
        items = list(enumerate(branch_fns))
    elif isinstance(branch_fns, (list, tuple)):
        items = [tuple(p) for p in branch_fns]
    else:
        raise TypeError(f"static.nn.switch_case: branch_fns must be a dict, list or tuple, "
                        f"got {type(branch_fns).__name__}")
    seen = set()
    for k, f in items:
        if not isinstance(k, int) or not callable(f):
            raise TypeError(f"static.nn.switch_case: each branch must be (int, callable), got "
                            f"({k!r}, {f!r})")
        if k in seen:
            raise ValueError(f"static.nn.switch_case: branch index {k} is given twice")
        seen.add(k)
    items.sort(key=lambda p: p[0])
    if default is None:
        default = items.pop()[1]
    import fw

    idx = fw.reshape(branch_index, [])
    if not items:
        return default()
    return case([(idx == k, f) for k, f in items], default=default)


def _no_lod(fname):
    def f(*args, **kwargs):
        raise NotImplementedError(
            f"static.nn.{fname}: LoD tensors are not supported by fw (sequence ops work on "
            f"Paddle's LoD sequences); use padded [N, T, ...] batches with masks instead "
            f"(see docs/paddle_differences.md)")

    f.__name__ = fname
    f.__qualname__ = fname
    f.__doc__ = (f"Paddle's ``static.nn.{fname}`` works on LoD tensors, which fw does not "
                 f"have: it raises NotImplementedError (see docs/paddle_differences.md).\n\n"
                 f"    Returns:\n        None: it always raises.\n\n"
                 f"    Examples:\n"
                 f"        >>> import fw\n"
                 f"        >>> try:\n"
                 f"        ...     fw.static.nn.{fname}(fw.ones([2, 3]))\n"
                 f"        ... except NotImplementedError as e:\n"
                 f"        ...     print('padded' in str(e))\n"
                 f"        True\n")
    return f


sequence_conv = _no_lod("sequence_conv")
sequence_expand = _no_lod("sequence_expand")
sequence_first_step = _no_lod("sequence_first_step")
sequence_last_step = _no_lod("sequence_last_step")
sequence_pool = _no_lod("sequence_pool")
sequence_softmax = _no_lod("sequence_softmax")


def py_func(func, x, out, backward_func=None, skip_vars_in_backward_input=None):
    """Paddle's ``py_func`` inserts a Python callable as an operator of a static
    program. fw's compiled programs cannot call back into Python, so this raises
    `NotImplementedError`; run the Python part between `Executor.run` calls, or use
    `fw.jit.to_static` (its default ``full_graph=False`` runs Python code in eager
    regions between compiled ones).

    Args:
        func (callable): the forward function.
        x (Variable|list): its inputs.
        out (Variable|list): the variables it writes.
        backward_func (callable, optional): its gradient function. Default: None.
        skip_vars_in_backward_input (list, optional): inputs not passed to
            `backward_func`. Default: None.

    Returns:
        None: it always raises NotImplementedError.

    Examples:
        >>> import fw
        >>> try:
        ...     fw.static.py_func(lambda a: a, fw.ones([1]), None)
        ... except NotImplementedError as e:
        ...     print("cannot call back into Python" in str(e))
        True
    """
    raise NotImplementedError(
        "py_func: fw static programs cannot call back into Python (no py_func operator); "
        "run the Python step between Executor.run calls, or use fw.jit.to_static with "
        "full_graph=False, which runs Python code in eager regions")


def static_pylayer(forward_fn, inputs, backward_fn=None, name=None):
    """``forward_fn(*inputs)`` (Paddle's ``static.nn.static_pylayer``). Without
    `backward_fn` the forward ops go into the program as they are (their gradient is
    fw's own); a custom `backward_fn` for symbolic inputs is not supported (fw's
    static autograd differentiates IR ops and has no user-defined VJP op), so that
    raises `NotImplementedError` — use `fw.autograd.PyLayer` in dygraph or
    `fw.jit.to_static` code.

    Args:
        forward_fn (callable): takes the `inputs` as positional arguments.
        inputs (list): Variables or Tensors. backward_fn (callable, optional).
        name (str, optional): unused.

    Returns:
        what `forward_fn` returns.

    Examples:
        >>> import fw, numpy as np
        >>> main = fw.static.Program()
        >>> with fw.static.program_guard(main):
        ...     x = fw.static.data("x", [2])
        ...     y = fw.static.nn.static_pylayer(lambda a: fw.exp(a), [x])
        >>> fw.static.Executor().run(main, feed={"x": np.zeros(2, "float32")},
        ...                          fetch_list=[y])[0].tolist()
        [1.0, 1.0]
    """
    if not callable(forward_fn):
        raise TypeError(f"static_pylayer: forward_fn must be callable, got "
                        f"{type(forward_fn).__name__}")
    if backward_fn is not None and not callable(backward_fn):
        raise TypeError(f"static_pylayer: backward_fn must be callable, got "
                        f"{type(backward_fn).__name__}")
    inputs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    if backward_fn is not None and _first_value(inputs) is not None:
        raise NotImplementedError(
            "static_pylayer: a custom backward_fn in a static program is not supported by fw "
            "(no user-defined VJP op in its IR); use fw.autograd.PyLayer in dygraph code")
    if backward_fn is not None:
        from fw.autograd import PyLayer

        class _Layer(PyLayer):
            @staticmethod
            def forward(ctx, *xs):
                return forward_fn(*xs)

            @staticmethod
            def backward(ctx, *grads):
                return backward_fn(*grads)

        return _Layer.apply(*inputs)
    return forward_fn(*inputs)
