"""The Paddle-signature functions of the elementwise ops that the generated ones cannot express.

The ops themselves (declaration, infer, reference kernel) are in `fw.core.ops.elementwise`;
these wrappers are registered with `public` when the op table is loaded.
"""

from __future__ import annotations

import numpy as np

from fw.core.errors import InvalidArgumentError, UnsupportedError
from fw.core.ops import _api
from fw.core.ops._api import public
from fw.core.ops._registry import OPS
from fw.core.ops.elementwise import scale_op, where_op

_ALIAS_DOC = """Paddle's second name of ``fw.{target}``: the same in-place function.

    Args:
        x (Tensor): The tensor to update in place.
        *args: The other arguments of ``fw.{target}``.
        **kwargs: Its keyword arguments.

    Returns:
        Tensor: x, updated in place.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor({data})
        >>> _ = x.{alias}({call})
        >>> x.tolist()
        {out}
    """


def _inplace_alias(alias, target, data, call, out):
    """Paddle spells some in-place variants with an alias (``mod_``, ``clamp_``);
    forward them to the generated ``target`` (resolved at call time: the generated
    functions exist only after the op table is installed)."""

    def f(x, *args, **kwargs):
        return _api.FUNCTIONS[target](x, *args, **kwargs)

    f.__name__ = f.__qualname__ = alias
    f.__doc__ = _ALIAS_DOC.format(target=target, alias=alias, data=data, call=call, out=out)
    f.__module__ = "fw"
    public(alias, method=True)(f)


_inplace_alias("mod_", "remainder_", "[7.0, -7.0]", "fw.to_tensor([3.0, 3.0])", "[1.0, 2.0]")


_inplace_alias("floor_mod_", "remainder_", "[7.0, -7.0]", "fw.to_tensor([3.0, 3.0])",
               "[1.0, 2.0]")


@public(method=True)
def where(condition, x=None, y=None, name=None):
    """Choose elements from x where condition is True and from y elsewhere.

    condition, x and y are broadcast together; x and y may be Python numbers and are promoted
    to one dtype (the condition is not). With only condition, ``fw.where(condition)`` returns
    the indices of its nonzero elements, one int64 tensor per dimension (the same as
    ``fw.nonzero(condition, as_tuple=True)``).

    Args:
        condition (Tensor): A bool tensor (nonzero counts as True).
        x (Tensor|int|float, optional): The values taken where condition is True. Default: None.
        y (Tensor|int|float, optional): The values taken where condition is False.
            Default: None.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor|tuple(Tensor): the chosen values, with the broadcast shape; or, with condition
        only, the tuple of index tensors.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([0.5, 2.0, 3.0])
        >>> fw.where(x > 1, x, fw.zeros_like(x)).tolist()
        [0.0, 2.0, 3.0]
        >>> fw.where(x > 1, x, -1.0).tolist()
        [-1.0, 2.0, 3.0]
        >>> [t.tolist() for t in fw.where(fw.to_tensor([[1, 0], [0, 1]]))]
        [[0, 1], [0, 1]]
    """
    from fw.core.dispatch import invoke

    if x is None and y is None:
        if "nonzero" not in OPS:
            raise UnsupportedError("where(condition) with one argument is nonzero(condition, "
                                   "as_tuple=True), and no 'nonzero' op is installed")
        return _api.FUNCTIONS["nonzero"](condition, as_tuple=True)
    if x is None or y is None:
        raise InvalidArgumentError("where: give both x and y, or neither (then it returns "
                                   "the indices where condition is true)")
    return invoke(where_op, [condition, x, y], {})


@public("where_")
def where_(condition, x=None, y=None, name=None):
    """In-place ``where``: writes the result into ``x``."""
    from fw.core.dispatch import assign_inplace

    return assign_inplace("where_", x, where(condition, x, y))


_inplace_alias("clamp_", "clip_", "[-2.0, 0.5, 3.0]", "0.0, 1.0", "[0.0, 0.5, 1.0]")


@public(method=True)
def scale(x, scale=1.0, bias=0.0, bias_after_scale=True, act=None, name=None):
    """``scale * x + bias`` (``bias_after_scale=True``) or ``(x + bias) * scale``.

    Args:
        x (Tensor): The input tensor (numeric, not bool).
        scale (float|Tensor, optional): The factor: a number or a one-element tensor (cast to
            x's dtype for integers). Default: 1.0.
        bias (float|Tensor, optional): The offset. Default: 0.0.
        bias_after_scale (bool, optional): True: scale * x + bias; False: (x + bias) * scale.
            Default: True.
        act (str, optional): The name of an activation applied to the result ("tanh",
            "relu", ...). Default: None.
        name (str, optional): Paddle's op name; unused in eager mode. Default: None.

    Returns:
        Tensor: the scaled tensor, with x's shape and dtype.

    Examples:
        >>> import fw
        >>> fw.scale(fw.to_tensor([1.0, 2.0]), scale=2.0, bias=1.0).tolist()
        [3.0, 5.0]
        >>> fw.scale(fw.to_tensor([-1.0, 2.0]), scale=2.0, act="relu").tolist()
        [0.0, 4.0]
    """
    from fw.core.dispatch import invoke

    out = invoke(scale_op, [x], {"scale": scale, "bias": bias,
                                 "bias_after_scale": bias_after_scale})
    if act is None:
        return out
    fn = _api.FUNCTIONS.get(act)
    if fn is None:
        op = OPS.get(act)  # relu, gelu, …: activation ops without an fw.<name> function
        if op is not None and op.family == "activation" and len(op.input_names) == 1:
            return _api.call(act, out)
        raise UnsupportedError(f"scale: unknown activation act={act!r}; apply it yourself")
    return fn(out)


_COMPARABLE = (bool, int, float, complex, np.generic, np.ndarray, list, tuple)


def _eq_dunder(target, fallback):
    """``==``/``!=`` compare elementwise with tensors, numbers and arrays; with
    anything else (None, strings, objects) Python's identity rule applies, so
    ``x == None`` is False instead of an error."""

    def dunder(self, other):
        if isinstance(other, _COMPARABLE) or hasattr(other, "_data") or \
                type(other).__name__ == "Value":
            return _api.FUNCTIONS[target](self, other)
        return NotImplemented

    dunder.__name__ = fallback
    return dunder


_api.DUNDERS["__eq__"] = _eq_dunder("equal", "__eq__")


_api.DUNDERS["__ne__"] = _eq_dunder("not_equal", "__ne__")


_inplace_alias("bitwise_invert_", "bitwise_not_", "[0, 5]", "", "[-1, -6]")


# `a << b` / `a >> b`: the generated functions take is_arithmetic as a third argument,
# so the operators go through two-argument wrappers.
for _op_name, _dn in (("bitwise_left_shift", ("__lshift__", "__rlshift__")),
                      ("bitwise_right_shift", ("__rshift__", "__rrshift__"))):
    def _fwd(self, other, _n=_op_name):
        return _api.FUNCTIONS[_n](self, other)

    def _rev(self, other, _n=_op_name):
        return _api.FUNCTIONS[_n](other, self)

    _api.DUNDERS[_dn[0]] = _fwd
    _api.DUNDERS[_dn[1]] = _rev
