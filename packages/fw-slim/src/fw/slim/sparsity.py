"""Unstructured magnitude pruning and N:M (2:4) sparsity, with masks kept
through training.

Where the mask is applied: **to the parameter itself, after each optimizer
step** (and to the gradient before it), not as a forward pre-hook. Why:

- the parameter then *is* sparse: `fw.jit.save`, fw.inference, quantization and
  a checkpoint see the zeros with no extra multiply in the exported program and
  no mask to carry along (a pre-hook keeps dense values in the parameter, and
  every consumer must remember to apply it);
- masking the gradient before the step keeps the optimizer's moments at zero for
  pruned weights, so Adam's momentum cannot push them back (and would not carry
  stale state if the mask is later relaxed);
- the cost is one multiply per pruned parameter per step, on the eager side.

Inside a training step converted by ``fw.jit.to_static`` the wrapped ``step`` is
traced too: the multiply by the mask becomes part of the program (a state update
of each parameter after the optimizer's), reading the mask from a tensor that is
updated in place when the masks change, so a stricter mask set between runs needs
no new trace. There the gradients are program values and are not masked (the
weights still are, after every step).

PaddleSlim's ``UnstructuredPruner`` and Paddle's ASP
(``paddle.incubate.asp.decorate(optimizer)``) make the same choice. A pruner is
attached with ``pruner.decorate(optimizer)`` (or `decorate` for the N:M masks),
which wraps that optimizer instance's ``step``.

N:M patterns (Mishra et al. 2021, "Accelerating Sparse Deep Neural Networks"; NVIDIA
Ampere's 2:4): in every group of M consecutive weights along the reduction axis,
at most N are non-zero (the N largest magnitudes stay). The reduction axis is
axis 0 of a Linear weight ``[in, out]`` (Paddle's layout) and the flattened
``in*kh*kw`` axis of a conv weight ``[out, in, kh, kw]``.
"""

from __future__ import annotations

import weakref

import numpy as np

import fw
import fw.nn as nn
from fw.core.internal import build_state

__all__ = ["MaskedPruner", "UnstructuredPruner", "NMPruner", "nm_mask", "check_sparsity",
           "calculate_density", "prune_model", "decorate"]

_CONVS = (nn.Conv1D, nn.Conv2D, nn.Conv3D)


def _default_params(model) -> list:
    """(structured name, parameter) of the weights of Conv and Linear layers."""
    out = []
    for lname, layer in model.named_sublayers(include_self=True):
        if isinstance(layer, _CONVS + (nn.Linear,)) and layer.weight is not None:
            out.append((f"{lname}.weight" if lname else "weight", layer.weight))
    return out


def calculate_density(x) -> float:
    """The fraction of non-zero entries of a tensor or array (Paddle ASP's name).

    Args:
        x (Tensor|numpy.ndarray): the values.

    Returns:
        float: non-zeros / size.

    Examples:
        >>> import fw
        >>> import fw.slim
        >>> fw.slim.calculate_density(fw.to_tensor([0.0, 1.0, 2.0, 0.0]))
        0.5
    """
    a = x.numpy() if isinstance(x, fw.Tensor) else np.asarray(x)
    return float(np.count_nonzero(a)) / max(a.size, 1)


def _nm_view(a: np.ndarray, layout: str) -> np.ndarray:
    """`a` as a 2-D [rows, reduction] matrix (a copy where the layout needs one)."""
    if layout == "linear":  # [in, out]: reduce over axis 0
        return np.ascontiguousarray(a.reshape(a.shape[0], -1).T)
    return a.reshape(a.shape[0], -1)  # conv [out, in, k...]: reduce over in*k


def _nm_unview(m2: np.ndarray, shape, layout: str) -> np.ndarray:
    if layout == "linear":
        return np.ascontiguousarray(m2.T).reshape(shape)
    return m2.reshape(shape)


def nm_mask(weight, n: int = 2, m: int = 4, layout: str = "linear") -> np.ndarray:
    """The N:M sparsity mask of `weight` (1 = kept).

    In each run of `m` consecutive weights along the reduction axis, the `n` largest
    magnitudes are kept (the 2:4 pattern sparse tensor cores accelerate).

    Args:
        weight (Tensor|numpy.ndarray): the weight.
        n (int, optional): weights kept per group. Default: 2.
        m (int, optional): the group size. Default: 4.
        layout (str, optional): "linear" for ``[in, out]`` weights (reduction axis 0),
            "conv" for ``[out, in, kh, kw]`` (reduction over in*kh*kw). Default: "linear".

    Returns:
        numpy.ndarray: the 0/1 mask, of `weight`'s shape.

    Examples:
        >>> import fw
        >>> import numpy as np
        >>> from fw.slim.sparsity import nm_mask
        >>> nm_mask(np.array([[1.], [-4.], [3.], [2.]]), 2, 4).ravel().tolist()
        [0.0, 1.0, 1.0, 0.0]
    """
    a = weight.numpy() if isinstance(weight, fw.Tensor) else np.asarray(weight)
    if not 0 < n <= m:
        raise ValueError(f"nm_mask: need 0 < n <= m, got n={n}, m={m}")
    if layout not in ("linear", "conv"):
        raise ValueError(f"nm_mask: 'layout' must be 'linear' or 'conv', got {layout!r}")
    w2 = _nm_view(a, layout)
    rows, k = w2.shape
    if k % m:
        raise ValueError(f"nm_mask: the reduction axis of a weight of shape {list(a.shape)} "
                         f"({layout} layout) has {k} entries, not a multiple of m={m}")
    g = np.abs(w2).reshape(rows, k // m, m)
    # stable order: among equal magnitudes the earlier ones are kept
    order = np.argsort(-g, axis=-1, kind="stable")
    mask = np.zeros_like(g, dtype=a.dtype)
    np.put_along_axis(mask, order[..., :n], 1, axis=-1)
    return _nm_unview(mask.reshape(rows, k), a.shape, layout)


def check_sparsity(weight, n: int = 2, m: int = 4, layout: str = "linear") -> bool:
    """Whether a weight follows the N:M pattern: every run of `m` weights along the
    reduction axis has at most `n` non-zeros (Paddle ASP's ``check_sparsity``).

    Args:
        weight (Tensor|numpy.ndarray): the weight.
        n (int, optional): non-zeros allowed per group. Default: 2.
        m (int, optional): the group size. Default: 4.
        layout (str, optional): "linear" (``[in, out]``, reduction axis 0) or "conv"
            (``[out, in, kh, kw]``). Default: "linear".

    Returns:
        bool: True when every group complies.

    Examples:
        >>> import fw
        >>> import numpy as np
        >>> import fw.slim
        >>> fw.slim.check_sparsity(np.array([[1.0], [0.0], [2.0], [0.0]]), 2, 4)
        True
        >>> fw.slim.check_sparsity(np.ones((4, 1)), 2, 4)
        False
    """
    a = weight.numpy() if isinstance(weight, fw.Tensor) else np.asarray(weight)
    w2 = _nm_view(a, layout)
    if w2.shape[1] % m:
        return False
    nz = (w2.reshape(w2.shape[0], -1, m) != 0).sum(axis=-1)
    return bool((nz <= n).all())


def _wrap_step(optimizer, masks, who):
    """Wrap this optimizer instance's ``step``: mask the gradients, step, mask the
    parameters."""
    if not callable(getattr(optimizer, "step", None)):
        raise TypeError(f"{who}: 'optimizer' has no step(), got {type(optimizer).__name__}")
    inner = optimizer.step

    def step(*args, **kwargs):
        masks.mask_grads()
        out = inner(*args, **kwargs)
        masks.update_params()
        return out

    step.__wrapped__ = inner
    optimizer.step = step
    return optimizer


class MaskedPruner:
    """Masks on parameters, kept through training. Subclasses compute the masks.

    Attributes:
        masks: ``{structured name: float mask array}`` (1 = kept).

    Args:
        model (Layer): the model.
        params (list, optional): the parameters (or structured names) to mask;
            default: the Conv/Linear weights. Default: None.
        skip (iterable, optional): structured names to leave alone. Default: ().

    Examples:
        >>> import fw
        >>> import fw.slim
        >>> net = fw.nn.Sequential(fw.nn.Linear(8, 4))
        >>> pruner = fw.slim.UnstructuredPruner(net, ratio=0.5)   # a MaskedPruner
        >>> isinstance(pruner, fw.slim.MaskedPruner), list(pruner.params)
        (True, ['0.weight'])
    """

    def __init__(self, model, params=None, skip=()):
        if not isinstance(model, nn.Layer):
            raise TypeError(f"{type(self).__name__}: 'model' must be a fw.nn.Layer, got "
                            f"{type(model).__name__}")
        named = dict(model.named_parameters())
        if params is None:
            chosen = _default_params(model)
        else:
            chosen = []
            for p in params:
                if isinstance(p, str):
                    if p not in named:
                        raise KeyError(f"{type(self).__name__}: no parameter {p!r} in the "
                                       f"model; some are {list(named)[:8]}")
                    chosen.append((p, named[p]))
                else:
                    name = next((k for k, v in named.items() if v is p), None)
                    if name is None:
                        raise ValueError(f"{type(self).__name__}: a parameter of shape "
                                         f"{list(p.shape)} is not in the model")
                    chosen.append((name, p))
        skip = set(skip)
        self.model = model
        self.params = {k: p for k, p in chosen if k not in skip}
        self.masks: dict = {}
        self._mask_t: dict = {}
        self._hooked: list = []

    def update_params(self) -> None:
        """Multiply each masked parameter by its mask (PaddleSlim's name; also
        ``apply_masks``): call it after an optimizer step that was not decorated.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import fw.slim
            >>> net = fw.nn.Sequential(fw.nn.Linear(8, 4))
            >>> pruner = fw.slim.UnstructuredPruner(net, ratio=0.5)
            >>> pruner.step()
            >>> _ = net[0].weight.set_value(fw.ones([8, 4]))
            >>> pruner.update_params()
            >>> float((net[0].weight.numpy() == 0).mean())
            0.5
        """
        for name in self.masks:
            self._mask_param(name)

    apply_masks = update_params

    def mask_grads(self) -> None:
        """Multiply each masked parameter's gradient by its mask (before an optimizer
        step, so pruned weights receive no update).

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import fw.slim
            >>> net = fw.nn.Sequential(fw.nn.Linear(8, 4))
            >>> pruner = fw.slim.UnstructuredPruner(net, ratio=0.5)
            >>> pruner.step()
            >>> net(fw.randn([2, 8])).sum().backward()
            >>> pruner.mask_grads()
            >>> float((net[0].weight.grad.numpy() == 0).mean())
            0.5
        """
        for name in self.masks:
            self._mask_grad(name)

    def _mask_tensor(self, name):
        """The mask as an fw tensor, kept in place across mask updates: a traced
        training step captures it, and reads the current mask at every run."""
        mask = self.masks[name]
        t = self._mask_t.get(name)
        if t is None or list(t.shape) != list(mask.shape):
            t = self._mask_t[name] = fw.to_tensor(np.asarray(mask), place=self.params[name].place)
        elif not np.array_equal(t.numpy(), mask):
            t.set_value(mask)
        return t

    def _mask_param(self, name) -> None:
        p = self.params[name]
        b = build_state.builder
        if b is None:
            p.set_value(p.numpy() * self.masks[name])
            if name in self._mask_t:  # a traced step holds it: give it the current mask
                self._mask_tensor(name)
        else:  # inside a traced step (fw.jit.to_static): mask the updated value
            b.record_update(p, b.current_value(p) * self._mask_tensor(name))

    def _mask_grad(self, name) -> None:
        if build_state.builder is not None:
            return  # traced: the gradient is a program value; the weights are masked after
        g = self.params[name].grad
        if g is not None:
            g.set_value(g.numpy() * self.masks[name])

    def decorate(self, optimizer):
        """Keep sparsity masks through an optimizer's steps (Paddle ASP's ``decorate``).

        The optimizer's ``step`` masks the gradients before and the parameters after each
        update: `pruner`'s masks, or with no pruner those of every `prune_model` call on
        this optimizer's parameters, before or after this call.

        Args:
            optimizer (Optimizer): the optimizer, changed in place.
            pruner (MaskedPruner, optional): the masks to keep. Default: None (those of
                `prune_model`).

        Returns:
            Optimizer: the same optimizer.

        Examples:
            >>> import fw
            >>> import fw.slim
            >>> net = fw.nn.Sequential(fw.nn.Linear(8, 4))
            >>> _ = fw.slim.prune_model(net)
            >>> opt = fw.slim.decorate(fw.optimizer.SGD(0.1, parameters=net.parameters()))
            >>> net(fw.randn([2, 8])).sum().backward()
            >>> opt.step()
            >>> fw.slim.check_sparsity(net[0].weight, 2, 4)      # still 2:4 after the update
            True
        """
        self._hooked.append(optimizer)
        return _wrap_step(optimizer, self, f"{type(self).__name__}.decorate")

    def sparsity(self) -> dict:
        """The fraction of zeros of each masked parameter.

        Returns:
            dict: structured name -> fraction.

        Examples:
            >>> import fw
            >>> import fw.slim
            >>> net = fw.nn.Sequential(fw.nn.Linear(8, 4))
            >>> pruner = fw.slim.UnstructuredPruner(net, ratio=0.5)
            >>> pruner.step()
            >>> pruner.sparsity()
            {'0.weight': 0.5}
        """
        return {k: 1.0 - calculate_density(self.params[k]) for k in self.masks}

    def total_sparsity(self) -> float:
        """The fraction of zeros over all masked parameters together.

        Returns:
            float: the fraction.

        Examples:
            >>> import fw
            >>> import fw.slim
            >>> net = fw.nn.Sequential(fw.nn.Linear(8, 4))
            >>> pruner = fw.slim.UnstructuredPruner(net, ratio=0.5)
            >>> pruner.step()
            >>> pruner.total_sparsity()
            0.5
        """
        nz = sum(int(np.count_nonzero(self.params[k].numpy())) for k in self.masks)
        tot = sum(int(self.params[k].numpy().size) for k in self.masks)
        return 1.0 - nz / max(tot, 1)


class UnstructuredPruner(MaskedPruner):
    """Magnitude pruning: the smallest weights are zeroed (PaddleSlim's
    ``UnstructuredPruner``).

    ``step()`` recomputes the masks from the current magnitudes (call it on your
    schedule; masks only grow: a pruned weight stays pruned) and applies them;
    ``decorate(optimizer, pruner)`` keeps them through training.

    Args:
        model (Layer): the model.
        mode (str, optional): "ratio" (prune that fraction) or "threshold" (prune
            ``|w| <= threshold``). Default: "ratio".
        threshold (float, optional): the magnitude threshold of "threshold" mode.
            Default: 0.01.
        ratio (float, optional): the fraction to prune in "ratio" mode. Default: 0.55.
        params (list, optional): names or parameters to prune. Default: None (the Conv
            and Linear weights).
        skip (Sequence[str], optional): names to leave dense. Default: ().
        skip_params_func (callable, optional): ``fn(model) -> names`` to leave dense
            (PaddleSlim's hook). Default: None.
        local_sparsity (bool, optional): apply `ratio` per parameter instead of one
            global threshold over all of them. Default: False.

    Examples:
        >>> import fw
        >>> import fw.slim
        >>> net = fw.nn.Linear(8, 4)
        >>> pruner = fw.slim.UnstructuredPruner(net, ratio=0.5)
        >>> pruner.step()
        >>> fw.slim.calculate_density(net.weight)
        0.5
    """

    def __init__(self, model, mode="ratio", threshold=0.01, ratio=0.55, params=None, skip=(),
                 skip_params_func=None, local_sparsity=False):
        if skip_params_func is not None:
            skip = set(skip) | set(skip_params_func(model))
        super().__init__(model, params, skip)
        if mode not in ("ratio", "threshold"):
            raise ValueError(f"UnstructuredPruner: 'mode' must be 'ratio' or 'threshold', got "
                             f"{mode!r}")
        if mode == "ratio" and not 0.0 <= float(ratio) < 1.0:
            raise ValueError(f"UnstructuredPruner: 'ratio' must be in [0, 1), got {ratio}")
        self.mode = mode
        self.ratio = float(ratio)
        self.threshold = float(threshold)
        self.local_sparsity = bool(local_sparsity)
        self.step()

    def _threshold(self, arrays) -> float:
        if self.mode == "threshold":
            return self.threshold
        flat = np.concatenate([np.abs(a).ravel() for a in arrays])
        k = int(round(self.ratio * flat.size))
        if k == 0:
            return -1.0
        return float(np.partition(flat, k - 1)[k - 1])

    def _mask(self, a, thr, k_local=None) -> np.ndarray:
        mag = np.abs(a)
        if k_local is not None:  # exact count: ties broken by position
            order = np.argsort(mag.ravel(), kind="stable")
            m = np.ones(a.size, a.dtype)
            m[order[:k_local]] = 0
            return m.reshape(a.shape)
        return (mag > thr).astype(a.dtype)

    def step(self) -> None:
        """Recompute the masks from the current weight magnitudes and apply them (call it
        on your schedule during training; a weight once pruned stays pruned).

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import fw.slim
            >>> net = fw.nn.Sequential(fw.nn.Linear(8, 4))
            >>> pruner = fw.slim.UnstructuredPruner(net, ratio=0.5)
            >>> pruner.step()
            >>> pruner.total_sparsity()
            0.5
        """
        arrays = {k: p.numpy() for k, p in self.params.items()}
        if self.local_sparsity or self.mode == "threshold":
            for k, a in arrays.items():
                if self.mode == "ratio":
                    m = self._mask(a, None, int(round(self.ratio * a.size)))
                else:
                    m = self._mask(a, self.threshold)
                self.masks[k] = m if k not in self.masks else m * self.masks[k]
        else:
            thr = self._threshold(list(arrays.values()))
            for k, a in arrays.items():
                m = self._mask(a, thr)
                self.masks[k] = m if k not in self.masks else m * self.masks[k]
        self.update_params()


class NMPruner(MaskedPruner):
    """N:M sparsity (2:4 by default) on Conv and Linear weights, kept through training
    with `decorate`.

    Weights whose reduction axis is not a multiple of `m` are skipped (listed in
    ``skipped`` with the reason) unless named in `params`, where it is an error.

    Args:
        model (Layer): the model, pruned in place.
        n (int, optional): weights kept per group. Default: 2.
        m (int, optional): the group size. Default: 4.
        params (list, optional): names or parameters to prune. Default: None (all Conv
            and Linear weights that fit).
        skip (Sequence[str], optional): names to leave dense. Default: ().

    Examples:
        >>> import fw
        >>> import fw.slim
        >>> net = fw.nn.Linear(8, 4)
        >>> pruner = fw.slim.NMPruner(net)
        >>> pruner.check(), pruner.skipped
        (True, {})
    """

    def __init__(self, model, n=2, m=4, params=None, skip=()):
        super().__init__(model, params, skip)
        self.n, self.m = int(n), int(m)
        self.skipped: dict = {}
        explicit = params is not None
        for name, p in list(self.params.items()):
            layout = "linear" if len(p.shape) == 2 else "conv"
            try:
                self.masks[name] = nm_mask(p, self.n, self.m, layout)
            except ValueError as e:
                if explicit:
                    raise ValueError(f"NMPruner: parameter {name!r}: {e}") from None
                self.skipped[name] = str(e)
                del self.params[name]
        self.layouts = {k: ("linear" if len(p.shape) == 2 else "conv")
                        for k, p in self.params.items()}
        self.update_params()

    def check(self) -> bool:
        """True when every masked parameter holds the N:M pattern (n non-zeros in every
        group of m along the input axis).

        Returns:
            bool: the answer.

        Examples:
            >>> import fw
            >>> import fw.slim
            >>> pruner = fw.slim.NMPruner(fw.nn.Sequential(fw.nn.Linear(8, 4)), n=2, m=4)
            >>> pruner.check()
            True
        """
        return all(check_sparsity(self.params[k], self.n, self.m, self.layouts[k])
                   for k in self.masks)


# pruners made by prune_model(with_mask=True), for decorate(optimizer) without one
_ASP_PRUNERS: weakref.WeakSet = weakref.WeakSet()


def prune_model(model, n=2, m=4, mask_algo="mask_1d", with_mask=True):
    """Apply N:M sparsity masks to the Conv/Linear weights of `model` (Paddle ASP's
    ``prune_model``).

    With ``with_mask=True`` the masks are remembered, and an optimizer passed to
    `decorate` (before or after this call) keeps them through its steps. Only
    ``mask_algo="mask_1d"`` (groups along the reduction axis) is implemented.

    Args:
        model (Layer): the model, pruned in place.
        n (int, optional): weights kept per group. Default: 2.
        m (int, optional): the group size. Default: 4.
        mask_algo (str, optional): "mask_1d". Default: "mask_1d".
        with_mask (bool, optional): remember the masks for `decorate`. Default: True.

    Returns:
        NMPruner: the pruner holding the masks.

    Examples:
        >>> import fw
        >>> import fw.slim
        >>> net = fw.nn.Sequential(fw.nn.Linear(8, 4))
        >>> pruner = fw.slim.prune_model(net, n=2, m=4)
        >>> fw.slim.check_sparsity(net[0].weight, 2, 4), fw.slim.calculate_density(net[0].weight)
        (True, 0.5)
    """
    if mask_algo != "mask_1d":
        raise ValueError(f"prune_model: mask_algo {mask_algo!r} is not implemented (only "
                         f"'mask_1d')")
    pruner = NMPruner(model, n, m)
    if with_mask:
        _ASP_PRUNERS.add(pruner)
    else:
        pruner.masks.clear()
    return pruner


class _AspMasks:
    """The masks of every live `prune_model` pruner, looked up at each step (Paddle
    decorates the optimizer before pruning), restricted to `optimizer`'s parameters."""

    def __init__(self, optimizer):
        self.ids = {id(p) for p in _optimizer_params(optimizer)}

    def _pairs(self):
        for pr in list(_ASP_PRUNERS):
            for name in list(pr.masks):
                if id(pr.params[name]) in self.ids:
                    yield pr, name

    def mask_grads(self):
        for pr, name in self._pairs():
            pr._mask_grad(name)

    def update_params(self):
        for pr, name in self._pairs():
            pr._mask_param(name)


def _optimizer_params(optimizer) -> list:
    getter = getattr(optimizer, "get_parameter_list", None)  # fw-nn's optimizer ABI
    plist = getter() if callable(getter) else None
    if plist is None:
        raise TypeError(f"decorate: {type(optimizer).__name__} has no parameter list (an "
                        f"fw.optimizer optimizer made with parameters=... is needed)")
    out = []
    for item in plist:  # a list of parameters, or of param-group dicts
        out.extend(item["params"] if isinstance(item, dict) else [item])
    return out


def decorate(optimizer, pruner=None):
    """Keep N:M / magnitude masks through `optimizer`'s steps (Paddle ASP's
    ``decorate``): `pruner`'s masks, or with no pruner those of every
    `prune_model` call on this optimizer's parameters, before or after this call.

    Args:
        optimizer (Optimizer): the optimizer, changed in place.
        pruner (MaskedPruner, optional): the masks to keep. Default: None.

    Returns:
        Optimizer: the same optimizer.

    Examples:
        >>> import fw
        >>> import fw.slim
        >>> net = fw.nn.Sequential(fw.nn.Linear(8, 4))
        >>> _ = fw.slim.prune_model(net)
        >>> opt = fw.slim.decorate(fw.optimizer.SGD(0.1, parameters=net.parameters()))
        >>> net(fw.randn([2, 8])).sum().backward()
        >>> opt.step()
        >>> fw.slim.check_sparsity(net[0].weight, 2, 4)
        True
    """
    if pruner is not None:
        return pruner.decorate(optimizer)
    return _wrap_step(optimizer, _AspMasks(optimizer), "decorate")
