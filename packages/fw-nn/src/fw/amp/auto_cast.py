"""`auto_cast` and `decorate`: automatic mixed precision.

While an `auto_cast` region is active, fw-core's general dispatcher calls
`_cast_args(op, args)` (the ``fw.core.internal.amp_state`` hook) before running or emitting
an op; it casts the op's floating inputs per the lists in `fw.amp.lists`:

- O1: WHITE ops run in the low-precision dtype, BLACK ops in float32, the rest keep
  their inputs' dtypes (mixed float32/low inputs promote to float32, as always);
- O2: every op except BLACK (and the bookkeeping ops of ``NEVER``) runs low.

Casts go through the differentiable ``cast`` op, so gradients reach float32
parameters in float32. A parameter cast once in a region is reused for the rest of
the region (until it changes). Ops on fw-core's specialised fast paths (plain
elementwise arithmetic on Tensors) skip the hook and simply follow their inputs.

Traced programs (``fw.jit.to_static``, ``fw.static``, ``dist.to_static``): while a
program is being built the hook sees symbolic Values as well as captured tensors, and
casts both alike, so the program records the casts eager auto_cast performs. Every op
reaches the hook there, including those eager execution sends down the fast paths:
`_eager_fast_lane` tells which of them eager auto_cast never sees (a Value stands for
a plain tensor), and those keep their inputs' dtypes in the program too — the traced
program computes what the eager region computes, op for op.

On CPU bfloat16 is the default low dtype: it keeps float32's range, so no loss
scaling is needed. float16 works too but NumPy computes it slowly.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import weakref

import numpy as np

from fw.amp import lists as _lists
from fw.core import dtypes as _dt
from fw.core.dispatch import invoke
from fw.core.errors import InvalidArgumentError
from fw.core.internal import amp_state, build_state, replace_data, version_of
from fw.core.ir import Value
from fw.core.ops import OPS
from fw.core.tensor import Tensor

__all__ = ["auto_cast", "amp_guard", "decorate", "amp_decorate", "is_bfloat16_supported",
           "is_float16_supported", "current_state"]

_LOW = {"float16": _dt.float16, "bfloat16": _dt.bfloat16}
_CAST_OP = OPS["cast"]


class _State:
    def __init__(self, white, black, level, dtype, use_promote):
        self.white = white
        self.black = black
        self.level = level
        self.dtype = dtype
        self.use_promote = use_promote
        self.cache = {}


_local = threading.local()


def _stack():
    s = getattr(_local, "stack", None)
    if s is None:
        s = _local.stack = []
    return s


def current_state():
    """The innermost active auto_cast configuration (None outside a region or when
    it is disabled)."""
    s = _stack()
    return s[-1] if s else None


def _default_dtype():
    from fw.core import place as _pl

    return "float16" if _pl.current_place().kind == "gpu" else "bfloat16"


def _target(st, op):
    name = op.name
    if name in _lists.NEVER or op.family in _lists.NEVER_FAMILIES:
        return None
    if name in st.black:
        return _dt.float32
    if name in st.white:
        return st.dtype
    if st.level == "O2":
        return st.dtype
    return None


def _cast_one(st, t, target):
    if isinstance(t, Value):  # a traced program's value: the same cast, as an op
        fd = t.type.dtype
        if fd is target or not fd.is_floating_point:
            return t
        return invoke(_CAST_OP, [t], {"dtype": target})
    if type(t) is not Tensor and not isinstance(t, Tensor):
        return t
    try:
        fd = t.dtype
    except TypeError:  # an array dtype fw does not have
        return t
    if fd is target or not fd.is_floating_point:
        return t
    # the cache holds eager casts only: a cast emitted into a program is a Value of that
    # program (another program built in the same region must emit its own)
    leaf = t._node is None and not t._sg and build_state.builder is None
    if leaf:
        key = (id(t), target.name)
        hit = st.cache.get(key)
        if hit is not None:
            ref, ver, out = hit
            if ref() is t and ver == version_of(t):
                return out
    out = invoke(_CAST_OP, [t], {"dtype": target})
    if leaf:
        st.cache[key] = (weakref.ref(t), version_of(t), out)
    return out


def _np_dtype(a):
    """The NumPy dtype of `a` if eager execution would hand it to a fast lane as a plain
    ndarray-backed Tensor (a Value stands for one), else None."""
    if isinstance(a, Value):
        return a.type.dtype.np
    if type(a) is Tensor and type(a._data) is np.ndarray:
        return a._data.dtype
    return None


def _eager_fast_lane(op, args):
    """Whether fw-core's specialised eager lanes (`fw.core.ops._api`: ``_make_binary`` /
    ``_make_unary``) would run `op` on `args` without consulting auto_cast. Mirrors their
    conditions; asked only while a program is being built, where every op reaches the
    hook (tests/test_amp_trace.py compares traced and eager regions op for op)."""
    fast = getattr(op, "fast", None)
    if fast is None or op.attrs:
        return False
    if fast == "unary" and len(args) == 1:
        d = _np_dtype(args[0])
        return d is not None and d.kind in ("fc" if op.to_float else "biufcV")
    if fast == "binary" and len(args) == 2:
        x, y = args
        dx, dy = _np_dtype(x), _np_dtype(y)
        if dx is not None and dy is not None:
            return dx == dy and (not op.to_float or dx.kind in "fc")
        if dx is not None and type(y) in (float, int):      # t op 2.0
            return dx.kind == "f"
        if dy is not None and type(x) in (float, int):      # 2.0 op t (reflected)
            return dy.kind == "f"
    return False


def _cast_args(op, args):
    st = current_state()
    if st is None:
        return args
    target = _target(st, op)
    if target is None:
        return args
    if (build_state.builder is not None or any(isinstance(a, Value) for a in args)) \
            and _eager_fast_lane(op, args):
        return args
    out = None
    for i, a in enumerate(args):
        if i == op.variadic and isinstance(a, (list, tuple)):
            new = [_cast_one(st, x, target) for x in a]
            if any(x is not y for x, y in zip(new, a)):
                out = out or list(args)
                out[i] = new
            continue
        if isinstance(a, (Tensor, Value)):
            c = _cast_one(st, a, target)
            if c is not a:
                out = out or list(args)
                out[i] = c
    return args if out is None else out


def _refresh_hook():
    st = current_state()
    amp_state.enabled = st is not None
    amp_state.cast_args = _cast_args if st is not None else None


class auto_cast(contextlib.ContextDecorator):  # noqa: N801 - Paddle's name
    """Run the ops of a region in mixed precision (a context manager or a decorator).

    At level ``"O1"`` the white-listed ops (matmul, convolutions, linear) compute in the
    low dtype and the black-listed ones (softmax, losses, norms, reductions) in float32;
    others follow their inputs. ``"O2"`` computes everything but the black list in the
    low dtype. Gradients flow back through the casts.

    Args:
        enable (bool, optional): False makes the region a no-op. Default: True.
        custom_white_list (set|list, optional): op names (or Paddle layer/op names) to
            add to the white list. Default: None.
        custom_black_list (set|list, optional): op names to add to the black list (it
            wins over the white list). Default: None.
        level (str, optional): ``"O1"``, ``"O2"``, or ``"O0"`` (disabled). Default: "O1".
        dtype (str, optional): ``"float16"`` or ``"bfloat16"``; None picks bfloat16 on CPU
            and float16 on GPU. Default: None.
        use_promote (bool, optional): inputs of mixed float32/low dtypes of non-listed ops
            compute in float32 (always so in fw, by its promotion table). Default: True.

    Examples:
        >>> import fw
        >>> lin = fw.nn.Linear(4, 4)
        >>> x = fw.ones([2, 4])
        >>> with fw.amp.auto_cast(dtype="bfloat16"):
        ...     y = lin(x)
        ...     p = fw.nn.functional.softmax(y)
        >>> y.dtype, p.dtype
        (fw.bfloat16, fw.float32)
        >>> with fw.amp.auto_cast(dtype="bfloat16", custom_black_list={"linear"}):
        ...     z = lin(x)
        >>> z.dtype
        fw.float32
        >>> @fw.amp.auto_cast(dtype="bfloat16")
        ... def forward(t):
        ...     return lin(t)
        >>> forward(x).dtype
        fw.bfloat16
    """

    def __init__(self, enable=True, custom_white_list=None, custom_black_list=None,
                 level="O1", dtype=None, use_promote=True):
        level = str(level).upper()
        if level not in ("O0", "O1", "O2", "OD"):
            raise InvalidArgumentError(f"auto_cast: 'level' must be 'O0', 'O1', 'O2' or 'OD', "
                                       f"got {level!r}")
        dtype = _default_dtype() if dtype is None else str(getattr(dtype, "name", dtype))
        if dtype not in _LOW:
            raise InvalidArgumentError(f"auto_cast: 'dtype' must be 'float16' or 'bfloat16', "
                                       f"got {dtype!r}")
        white = set(_lists.WHITE) | set(custom_white_list or ())
        black = (set(_lists.BLACK) | set(custom_black_list or ())) - \
            set(custom_white_list or ())
        white -= set(custom_black_list or ())
        if level == "OD":  # Paddle's "default": only the white list goes low
            level = "O1"
            black = set()
        self._enabled = bool(enable) and level != "O0"
        self._state = _State(frozenset(white), frozenset(black), level, _LOW[dtype],
                             use_promote)

    def __enter__(self):
        st = self._state if self._enabled else None  # None: a disabled region
        if st is not None:
            st.cache = {}
        _stack().append(st)
        _refresh_hook()
        return self

    def __exit__(self, *exc):
        s = _stack()
        if s:
            top = s.pop()
            if top is not None:
                top.cache = {}
        _refresh_hook()
        return False


amp_guard = auto_cast


# ---------------------------------------------------------------- decorate
def _norm_layer_types():
    import fw.nn as nn

    names = ("BatchNorm", "BatchNorm1D", "BatchNorm2D", "BatchNorm3D", "SyncBatchNorm",
             "LayerNorm", "GroupNorm", "InstanceNorm1D", "InstanceNorm2D", "InstanceNorm3D",
             "LocalResponseNorm", "RMSNorm", "SpectralNorm")
    return tuple(getattr(nn, n) for n in names if isinstance(getattr(nn, n, None), type))


def decorate(models, optimizers=None, level="O1", dtype=None, master_weight=None,
             save_dtype=None, master_grad=False, excluded_layers=None):
    """Prepare models (and optimizers) for mixed precision.

    At level ``"O2"`` the models' floating parameters and buffers are cast to the low
    dtype, except normalization layers (and `excluded_layers`), which stay float32; the
    optimizers keep float32 master weights (``multi_precision``) unless
    ``master_weight=False``. At level ``"O1"`` nothing changes.

    Args:
        models (Layer|list): a Layer or a list of Layers.
        optimizers (Optimizer|list, optional): an optimizer or a list of them. Default: None.
        level (str, optional): ``"O1"`` or ``"O2"``. Default: "O1".
        dtype (str, optional): ``"float16"`` or ``"bfloat16"``; None: bfloat16 on CPU,
            float16 on GPU. Default: None.
        master_weight (bool, optional): keep float32 master weights in the optimizers;
            None means True at O2. Default: None.
        save_dtype (str, optional): the dtype the models' ``state_dict()`` returns
            parameters in (e.g. ``"float32"`` for full-precision checkpoints). Default: None.
        master_grad (bool, optional): accepted for compatibility (the master-weight update
            casts gradients to float32). Default: False.
        excluded_layers (Layer|type|list, optional): layers or layer types kept in float32.
            Default: None.

    Returns:
        The models (and the optimizers, when given) in the structure they were passed:
        ``model`` or ``(model, optimizer)``.

    Examples:
        >>> import fw
        >>> net = fw.nn.Sequential(fw.nn.Linear(4, 4), fw.nn.LayerNorm(4))
        >>> opt = fw.optimizer.AdamW(parameters=net.parameters())
        >>> net, opt = fw.amp.decorate(models=net, optimizers=opt, level="O2", dtype="bfloat16",
        ...                            save_dtype="float32")
        >>> net[0].weight.dtype, net[1].weight.dtype   # the norm layer stays float32
        (fw.bfloat16, fw.float32)
        >>> net.state_dict()["0.weight"].dtype
        fw.float32
    """
    level = str(level).upper()
    if level not in ("O0", "O1", "O2"):
        raise InvalidArgumentError(f"decorate: 'level' must be 'O1' or 'O2', got {level!r}")
    dtype = _default_dtype() if dtype is None else str(getattr(dtype, "name", dtype))
    if dtype not in _LOW:
        raise InvalidArgumentError(f"decorate: 'dtype' must be 'float16' or 'bfloat16', got "
                                   f"{dtype!r}")
    single_model = not isinstance(models, (list, tuple))
    model_list = [models] if single_model else list(models)
    single_opt = optimizers is not None and not isinstance(optimizers, (list, tuple))
    opt_list = [] if optimizers is None else ([optimizers] if single_opt else list(optimizers))
    if level == "O2":
        keep = _norm_layer_types()
        ex_types = tuple(x for x in (excluded_layers or ()) if isinstance(x, type))
        ex_objs = {id(x) for x in (excluded_layers or ()) if not isinstance(x, type)}
        low = _LOW[dtype]
        from fw.autograd import no_grad
        from fw.core.ir import no_building

        for m in model_list:
            with no_grad(), no_building():
                for layer in m.sublayers(include_self=True):
                    if isinstance(layer, keep + ex_types) or id(layer) in ex_objs:
                        continue
                    for store in (layer._parameters, layer._buffers):
                        for t in store.values():
                            if t is not None and t.dtype.is_floating_point and \
                                    t.dtype is not low:
                                replace_data(t, t._data.astype(low.np))
                                if t._grad is not None:
                                    t._grad = None
        if master_weight is None or master_weight:
            for o in opt_list:
                o._multi_precision = True
                o._invalidate()
    if save_dtype is not None:
        sd = _dt.convert_dtype(save_dtype)
        for m in model_list:
            _wrap_state_dict(m, sd)
    out_models = model_list[0] if single_model else model_list
    if optimizers is None:
        return out_models
    return out_models, (opt_list[0] if single_opt else opt_list)


amp_decorate = decorate


def _wrap_state_dict(model, dtype):
    orig = model.state_dict

    @functools.wraps(orig)
    def state_dict(*args, **kwargs):
        d = orig(*args, **kwargs)
        for k, v in list(d.items()):
            if isinstance(v, Tensor) and v.dtype.is_floating_point and v.dtype is not dtype:
                d[k] = v.astype(dtype)
        return d

    model.state_dict = state_dict


# ---------------------------------------------------------------- support queries
def is_bfloat16_supported(device=None) -> bool:
    """Whether a device can compute in bfloat16. On CPU it always can (through
    ``ml_dtypes``); on a GPU it needs compute capability 8.0 or more.

    Args:
        device (str, optional): ``"cpu"`` or ``"gpu:N"``; None: the current device.
            Default: None.

    Returns:
        bool.

    Examples:
        >>> import fw
        >>> fw.amp.is_bfloat16_supported("cpu")
        True
    """
    return _supported(device, "bfloat16")


def is_float16_supported(device=None) -> bool:
    """Whether a device can compute in float16. On CPU it can (NumPy's float16,
    slowly); on a GPU it needs compute capability 5.3 or more.

    Args:
        device (str, optional): ``"cpu"`` or ``"gpu:N"``; None: the current device.
            Default: None.

    Returns:
        bool.

    Examples:
        >>> import fw
        >>> fw.amp.is_float16_supported("cpu")
        True
    """
    return _supported(device, "float16")


def _supported(device, which):
    from fw.core import place as _pl

    p = _pl.current_place() if device is None else _pl.parse_place(device)
    if p.kind == "cpu":
        return True
    try:
        import cupy

        cc = int(cupy.cuda.Device(p.index or 0).compute_capability)  # e.g. "80"
    except Exception:
        return False
    return cc >= (80 if which == "bfloat16" else 53)
