"""`PyLayer`: an op whose forward and backward are Python functions (Paddle's
``paddle.autograd.PyLayer``, PyTorch's ``autograd.Function``).

``MyOp.apply(*args, **kwargs)`` runs ``forward(ctx, ...)`` without recording,
then (if grad mode is on and a tensor argument requires grad) records one tape
node whose VJP rule calls ``backward(ctx, *grads)``. ``backward`` returns one
gradient per tensor argument of ``forward`` (None for none). Written with fw
ops, it is recorded under ``create_graph=True`` like any rule, so a PyLayer can
be differentiated to higher orders — the tensors saved with
``ctx.save_for_backward`` keep their history (an output saved there is linked
to the PyLayer's own node).
"""

from __future__ import annotations

import numpy as np

from fw.autograd import _graph, _mode, _saved_hooks
from fw.autograd._graph import _FLOATISH, Port
from fw.autograd.errors import GradientError
from fw.core.tensor import Tensor, wrap

__all__ = ["PyLayer", "PyLayerContext"]


class PyLayerContext:
    """The ``ctx`` passed to a PyLayer's ``forward`` and ``backward``: attributes set on
    it in ``forward`` are visible in ``backward``; `save_for_backward` keeps tensors.

    Examples:
        >>> import fw
        >>> class Mul(fw.autograd.PyLayer):
        ...     @staticmethod
        ...     def forward(ctx, x, y):
        ...         ctx.save_for_backward(x, y)
        ...         return x * y
        ...     @staticmethod
        ...     def backward(ctx, dz):
        ...         x, y = ctx.saved_tensor()
        ...         return dz * y, dz * x
        >>> x = fw.to_tensor([2.0], stop_gradient=False)
        >>> y = fw.to_tensor([5.0], stop_gradient=False)
        >>> Mul.apply(x, y).sum().backward()
        >>> x.grad.tolist(), y.grad.tolist()
        ([5.0], [2.0])
    """

    def __init__(self):
        self._saved = ()
        self._non_diff = set()
        self._not_inplace = set()
        self._materialize = True

    def save_for_backward(self, *tensors):
        """Keep tensors for ``backward`` (read them with `saved_tensor`).

        Args:
            *tensors: the tensors to keep.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> class Mul(fw.autograd.PyLayer):
            ...     @staticmethod
            ...     def forward(ctx, x, y):
            ...         ctx.save_for_backward(x, y)
            ...         return x * y
            ...     @staticmethod
            ...     def backward(ctx, dz):
            ...         x, y = ctx.saved_tensor()
            ...         return dz * y, dz * x
            >>> x = fw.to_tensor([2.0], stop_gradient=False)
            >>> y = fw.to_tensor([5.0], stop_gradient=False)
            >>> Mul.apply(x, y).sum().backward()
            >>> x.grad.tolist(), y.grad.tolist()
            ([5.0], [2.0])
        """
        hooks = _saved_hooks.current()
        if hooks is not None:
            tensors = tuple(_saved_hooks.Packed(t, hooks) if isinstance(t, Tensor) else t
                            for t in tensors)
        self._saved = tensors

    def saved_tensor(self):
        """The tensors `save_for_backward` kept, in order.

        Returns:
            tuple, the tensors.

        Examples:
            >>> import fw
            >>> class Mul(fw.autograd.PyLayer):
            ...     @staticmethod
            ...     def forward(ctx, x, y):
            ...         ctx.save_for_backward(x, y)
            ...         return x * y
            ...     @staticmethod
            ...     def backward(ctx, dz):
            ...         x, y = ctx.saved_tensor()
            ...         return dz * y, dz * x
            >>> x = fw.to_tensor([2.0], stop_gradient=False)
            >>> y = fw.to_tensor([5.0], stop_gradient=False)
            >>> Mul.apply(x, y).sum().backward()
            >>> x.grad.tolist(), y.grad.tolist()
            ([5.0], [2.0])
        """
        return tuple(t.get() if type(t) is _saved_hooks.Packed else t for t in self._saved)

    # PyTorch's spelling, for ported code
    @property
    def saved_tensors(self):
        """The tensors `save_for_backward` kept (PyTorch's spelling of `saved_tensor`).

        Returns:
            tuple, the tensors.

        Examples:
            >>> import fw
            >>> class Mul(fw.autograd.PyLayer):
            ...     @staticmethod
            ...     def forward(ctx, x, y):
            ...         ctx.save_for_backward(x, y)
            ...         return x * y
            ...     @staticmethod
            ...     def backward(ctx, dz):
            ...         x, y = ctx.saved_tensors
            ...         return dz * y, dz * x
            >>> x = fw.to_tensor([2.0], stop_gradient=False)
            >>> y = fw.to_tensor([5.0], stop_gradient=False)
            >>> Mul.apply(x, y).sum().backward()
            >>> x.grad.tolist(), y.grad.tolist()
            ([5.0], [2.0])
        """
        return self.saved_tensor()

    def mark_not_inplace(self, *tensors):
        """Declare that forward returns these input tensors unmodified (fw always
        returns such an output as a new tensor object, so the input keeps its
        history).

        Args:
            *args: the input tensors ``forward`` returns unchanged.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> class Same(fw.autograd.PyLayer):
            ...     @staticmethod
            ...     def forward(ctx, x):
            ...         ctx.mark_not_inplace(x)
            ...         return x
            ...     @staticmethod
            ...     def backward(ctx, dy):
            ...         return dy
            >>> x = fw.to_tensor([1.0], stop_gradient=False)
            >>> y = Same.apply(x)
            >>> y.sum().backward()
            >>> x.grad.tolist()
            [1.0]
        """
        self._not_inplace.update(id(t) for t in tensors)

    def mark_non_differentiable(self, *tensors):
        """Declare outputs that have no gradient: they get stop_gradient=True and
        backward receives zeros (or None, see `set_materialize_grads`) for them.

        Args:
            *args: the output tensors that get no gradient.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> class SortIdx(fw.autograd.PyLayer):
            ...     @staticmethod
            ...     def forward(ctx, x):
            ...         idx = fw.argsort(x)
            ...         ctx.mark_non_differentiable(idx)
            ...         return x * 1.0, idx
            ...     @staticmethod
            ...     def backward(ctx, dy, didx):
            ...         return dy
            >>> x = fw.to_tensor([3.0, 1.0], stop_gradient=False)
            >>> y, idx = SortIdx.apply(x)
            >>> idx.stop_gradient, idx.tolist()
            (True, [1, 0])
        """
        self._non_diff.update(id(t) for t in tensors)

    def set_materialize_grads(self, value: bool):
        """With True (the default) backward receives zeros for outputs that got no
        gradient; with False it receives None.

        Args:
            value (bool): False passes None for the gradient of an unused output;
                True (the default) passes zeros.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> class Two(fw.autograd.PyLayer):
            ...     @staticmethod
            ...     def forward(ctx, x):
            ...         ctx.set_materialize_grads(False)
            ...         return x * 1.0, x * 2.0
            ...     @staticmethod
            ...     def backward(ctx, da, db):
            ...         print(da is None, db is None)
            ...         return db * 2.0
            >>> x = fw.to_tensor([1.0], stop_gradient=False)
            >>> a, b = Two.apply(x)
            >>> b.sum().backward()
            True False
            >>> x.grad.tolist()
            [2.0]
        """
        self._materialize = bool(value)


def _backward_rule(cls):
    def rule(node, g):
        ctx = node.attrs["ctx"]
        metas = node.attrs["out_meta"]
        gs = g if isinstance(g, tuple) else (g,)
        grads = []
        for gi, (shape, dtype, _diff) in zip(gs, metas):
            if gi is None and ctx._materialize and dtype.kind in _FLOATISH:
                gi = wrap(np.zeros(shape, dtype))
            grads.append(gi)
        res = cls.backward(ctx, *grads)
        if not isinstance(res, (tuple, list)):
            res = (res,)
        n = node.nvar
        if len(res) != n:
            raise GradientError(f"{cls.__name__}.backward returned {len(res)} gradients, but "
                                f"forward had {n} tensor arguments (return one per tensor "
                                f"argument, None for none)")
        out = []
        for i, (r, m) in enumerate(zip(res, node.meta)):
            if r is not None and not isinstance(r, Tensor) and type(r).__name__ != "Value":
                raise GradientError(f"{cls.__name__}.backward returned a "
                                    f"{type(r).__name__} as gradient {i}; return Tensors")
            if r is not None and m is not None and list(r.shape) != list(m[0]):
                raise GradientError(f"{cls.__name__}.backward returned a gradient of shape "
                                    f"{list(r.shape)} for argument {i} of shape {list(m[0])}")
            out.append(r)
        return (out,)

    return rule


class PyLayer:
    """Subclass it with static ``forward(ctx, *args, **kwargs)`` and
    ``backward(ctx, *grads)``; call ``MyLayer.apply(...)``.

    Examples:
        >>> import fw
        >>> from fw.autograd import PyLayer
        >>> class Cube(PyLayer):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         ctx.save_for_backward(x)
        ...         return x * x * x
        ...     @staticmethod
        ...     def backward(ctx, dy):
        ...         (x,) = ctx.saved_tensor()
        ...         return dy * 3 * x * x
        >>> x = fw.to_tensor([2.0], stop_gradient=False)
        >>> Cube.apply(x).sum().backward()
        >>> x.grad.numpy().tolist()
        [12.0]
    """

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("a PyLayer must define a static forward(ctx, ...)")

    @staticmethod
    def backward(ctx, *grads):
        """The gradients of ``forward``'s inputs given the gradients of its outputs
        (override it as a staticmethod).

        Args:
            ctx (PyLayerContext): the context ``forward`` filled.
            *args: one gradient per output of ``forward``.

        Returns:
            One gradient per tensor input of ``forward`` (a Tensor, or a tuple of them;
            None for an input that needs none).

        Examples:
            >>> import fw
            >>> class Scale(fw.autograd.PyLayer):
            ...     @staticmethod
            ...     def forward(ctx, x, k):
            ...         ctx.k = k
            ...         return x * k
            ...     @staticmethod
            ...     def backward(ctx, dy):
            ...         return dy * ctx.k
            >>> x = fw.to_tensor([1.0], stop_gradient=False)
            >>> Scale.apply(x, 5.0).sum().backward()
            >>> x.grad.tolist()
            [5.0]
        """
        raise NotImplementedError("a PyLayer must define a static backward(ctx, *grads)")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run the layer's ``forward`` and record its ``backward`` for autograd.

        Args:
            *args: passed to ``forward`` after the context.
            **kwargs: passed to ``forward``.

        Returns:
            What ``forward`` returns (Tensors that require gradients when an input does).

        Examples:
            >>> import fw
            >>> class Double(fw.autograd.PyLayer):
            ...     @staticmethod
            ...     def forward(ctx, x):
            ...         return x * 2
            ...     @staticmethod
            ...     def backward(ctx, dy):
            ...         return dy * 2
            >>> x = fw.to_tensor([1.0, 3.0], stop_gradient=False)
            >>> y = Double.apply(x)
            >>> y.sum().backward()
            >>> y.tolist(), x.grad.tolist()
            ([2.0, 6.0], [2.0, 2.0])
        """
        ctx = PyLayerContext()
        tensors = [a for a in args if isinstance(a, Tensor)]
        tensors += [v for v in kwargs.values() if isinstance(v, Tensor)]
        with _mode.no_grad():
            result = cls.forward(ctx, *args, **kwargs)
        needs = _mode.is_grad_enabled() and any(not t._sg for t in tensors)
        single = not isinstance(result, (tuple, list))
        outs = [result] if single else list(result)
        ids = {id(t) for t in tensors}
        for i, o in enumerate(outs):
            # an input returned as it is: give the caller a new tensor object, so the
            # input's own history is left alone
            if isinstance(o, Tensor) and id(o) in ids:
                outs[i] = wrap(o._data)
        if needs:
            _link(cls, ctx, tensors, outs)
        if single:
            return outs[0]
        return type(result)(outs) if isinstance(result, tuple) else outs


def _link(cls, ctx, tensors, outs):
    out_meta = []
    tensor_outs = []
    for o in outs:
        if isinstance(o, Tensor):
            d = o._data
            diff = d.dtype.kind in _FLOATISH and id(o) not in ctx._non_diff
            out_meta.append((d.shape, d.dtype, diff))
            tensor_outs.append(o)
    # the engine materializes zeros for missing gradients only where the flag is set;
    # the rule does it itself (it knows set_materialize_grads)
    node = _graph.custom_node(cls.__name__, _backward_rule(cls),
                              {"ctx": ctx, "out_meta": out_meta},
                              [(s, d, False) for s, d, _ in out_meta], tensors=tensors)
    for i, (o, (_, _, diff)) in enumerate(zip(tensor_outs, out_meta)):
        if diff:  # fw-autograd links the PyLayer's own outputs to its node
            o._sg = False
            o._node = Port(node, i)
