"""Weight normalization: a layer's ``weight`` re-parameterised as
``weight_g * weight_v / ||weight_v||`` (norm over every axis but `dim`), recomputed
by a forward pre-hook before each call."""

from __future__ import annotations

import fw
from fw.core.errors import InvalidArgumentError
from fw.nn.parameter import Parameter

__all__ = ["weight_norm", "remove_weight_norm"]


def _norm_except_dim(w, dim):
    if dim is None:
        return fw.sqrt((w * w).sum())
    nd = len(w.shape)
    d = dim % nd
    axes = [i for i in range(nd) if i != d]
    n = fw.sqrt((w * w).sum(axis=axes, keepdim=True)) if axes else fw.abs(w)
    return n


class _WeightNorm:
    def __init__(self, name, dim):
        self.name = name
        self.dim = dim

    def compute(self, layer):
        g = getattr(layer, self.name + "_g")
        v = getattr(layer, self.name + "_v")
        n = _norm_except_dim(v, self.dim)
        return v * (g.reshape(n.shape) / n) if self.dim is not None else v * (g / n)

    def __call__(self, layer, inputs):
        object.__setattr__(layer, self.name, self.compute(layer))


def weight_norm(layer, name="weight", dim=0):
    """Weight normalization (Salimans & Kingma, 2016): re-parameterise
    ``layer.<name>`` as a magnitude ``<name>_g`` times a direction
    ``<name>_v / ||<name>_v||``; a forward pre-hook recomputes ``<name>`` before every
    call.

    Args:
        layer (Layer): the layer to modify.
        name (str, optional): the parameter's attribute name. Default: "weight".
        dim (int, optional): the axis kept by the norm (one magnitude per index of it);
            None for a single norm of the whole tensor. Default: 0.

    Returns:
        Layer: ``layer``.

    Examples:
        >>> import fw
        >>> fc = fw.nn.utils.weight_norm(fw.nn.Linear(3, 2))
        >>> sorted(n for n, _ in fc.named_parameters())
        ['bias', 'weight_g', 'weight_v']
        >>> fc.weight_g.shape
        [3]
        >>> fc(fw.ones([1, 3])).shape
        [1, 2]
    """
    for hook in layer._forward_pre_hooks.values():
        if isinstance(hook, _WeightNorm) and hook.name == name:
            raise InvalidArgumentError(f"weight_norm: {name!r} of this layer is already "
                                       f"weight-normalized")
    w = layer._parameters.get(name)
    if w is None:
        raise InvalidArgumentError(f"weight_norm: the layer has no parameter {name!r}")
    if dim is not None and dim < -1:
        dim = dim + len(w.shape)
    if dim == -1:
        dim = None
    fn = _WeightNorm(name, dim)
    with fw.no_grad():
        g0 = _norm_except_dim(w, dim)
    del layer._parameters[name]
    g = Parameter(g0.reshape([w.shape[dim]] if dim is not None else [1]).astype(w.dtype))
    v = Parameter(w.detach().clone())
    g.name, v.name = w.name + "_g", w.name + "_v"
    layer.add_parameter(name + "_g", g)
    layer.add_parameter(name + "_v", v)
    object.__setattr__(layer, name, fn.compute(layer))
    layer.register_forward_pre_hook(fn)
    return layer


def remove_weight_norm(layer, name="weight"):
    """Undo `weight_norm`: ``<name>`` becomes a plain parameter again, holding its
    current normalised value.

    Args:
        layer (Layer): the layer.
        name (str, optional): the parameter's attribute name. Default: "weight".

    Returns:
        Layer: ``layer``.

    Examples:
        >>> import fw
        >>> fc = fw.nn.utils.weight_norm(fw.nn.Linear(3, 2))
        >>> fc = fw.nn.utils.remove_weight_norm(fc)
        >>> sorted(n for n, _ in fc.named_parameters())
        ['bias', 'weight']
    """
    for key, hook in list(layer._forward_pre_hooks.items()):
        if isinstance(hook, _WeightNorm) and hook.name == name:
            with fw.no_grad():
                w = hook.compute(layer)
            del layer._forward_pre_hooks[key]
            del layer._parameters[name + "_g"]
            v = layer._parameters.pop(name + "_v")
            layer.__dict__.pop(name, None)
            p = Parameter(w.detach())
            p.name = v.name[:-2] if v.name.endswith("_v") else v.name
            layer.add_parameter(name, p)
            return layer
    raise InvalidArgumentError(f"remove_weight_norm: {name!r} of this layer is not "
                               f"weight-normalized")
