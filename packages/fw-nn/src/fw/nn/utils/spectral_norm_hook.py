"""Spectral normalization: ``weight = weight_orig / sigma`` with sigma the largest
singular value of weight_orig viewed as ``[shape[dim], rest]``, estimated by power
iteration whose vectors (buffers ``<name>_u``, ``<name>_v``) are updated in place
on every training-mode call."""

from __future__ import annotations

import fw
from fw.autograd import no_grad
from fw.core.errors import InvalidArgumentError
from fw.core.ir import no_building
from fw.core.tensor import Tensor
from fw.nn.functional.norm import assign_buffer
from fw.nn.parameter import Parameter

__all__ = ["spectral_norm", "remove_spectral_norm", "spectral_normalize"]


def _as_matrix(w, dim):
    nd = len(w.shape)
    if dim != 0:
        perm = [dim] + [i for i in range(nd) if i != dim]
        w = w.transpose(perm)
    return w.reshape([w.shape[0], -1])


def _l2_normalize(x, eps):
    return x / fw.maximum(fw.sqrt((x * x).sum()), fw.full([], eps, x.dtype))


def spectral_normalize(weight, u, v, dim=0, power_iters=1, eps=1e-12, update=True):
    """`weight` divided by its estimated spectral norm; `u`/`v` (the power-iteration
    vectors) are advanced `power_iters` steps and written back when `update`."""
    mat = _as_matrix(weight, dim)
    uu, vv = u, v
    if power_iters > 0:
        with no_grad():
            m = mat.detach()
            for _ in range(power_iters):
                vv = _l2_normalize(fw.matmul(m, uu.reshape([-1, 1]), transpose_x=True)
                                   .reshape([-1]), eps)
                uu = _l2_normalize(fw.matmul(m, vv.reshape([-1, 1])).reshape([-1]), eps)
        if update and isinstance(u, Tensor):
            assign_buffer(u, uu)
            assign_buffer(v, vv)
    sigma = (uu.detach() * fw.matmul(mat, vv.detach().reshape([-1, 1])).reshape([-1])).sum()
    return weight / sigma


class _SpectralNorm:
    def __init__(self, name, n_power_iterations, dim, eps):
        self.name = name
        self.n = n_power_iterations
        self.dim = dim
        self.eps = eps

    def compute(self, layer, update):
        return spectral_normalize(getattr(layer, self.name + "_orig"),
                                  getattr(layer, self.name + "_u"),
                                  getattr(layer, self.name + "_v"), self.dim,
                                  self.n if update else 0, self.eps, update)

    def __call__(self, layer, inputs):
        object.__setattr__(layer, self.name, self.compute(layer, layer.training))


def spectral_norm(layer, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Spectral normalization (Miyato et al., 2018): ``layer.<name>`` becomes
    ``<name>_orig / sigma``, with ``sigma`` the largest singular value of the weight
    viewed as a matrix ``[shape[dim], -1]``, estimated by power iteration.

    The iteration vectors are the buffers ``<name>_u`` and ``<name>_v``; they advance
    ``n_power_iterations`` steps on every call in training mode.

    Args:
        layer (Layer): the layer to modify.
        name (str, optional): the parameter's attribute name. Default: "weight".
        n_power_iterations (int, optional): power iterations per call. Default: 1.
        eps (float, optional): added to norms for stability. Default: 1e-12.
        dim (int, optional): the output axis; None picks 1 for `Linear` (weight
            ``[in, out]``) and transposed convolutions, 0 otherwise. Default: None.

    Returns:
        Layer: ``layer``.

    Examples:
        >>> import fw
        >>> fc = fw.nn.Linear(2, 2)
        >>> _ = fc.weight.set_value(fw.to_tensor([[3.0, 0.0], [0.0, 1.0]]))
        >>> fc = fw.nn.utils.spectral_norm(fc, n_power_iterations=10)
        >>> sorted(n for n, _ in fc.named_parameters()), sorted(n for n, _ in fc.named_buffers())
        (['bias', 'weight_orig'], ['weight_u', 'weight_v'])
        >>> _ = fc(fw.ones([1, 2]))
        >>> [[round(v, 3) for v in row] for row in fc.weight.tolist()]
        [[1.0, 0.0], [0.0, 0.333]]
    """
    from fw.nn.layer.common import Linear
    from fw.nn.layer.conv import Conv1DTranspose, Conv2DTranspose, Conv3DTranspose

    w = layer._parameters.get(name)
    if w is None:
        raise InvalidArgumentError(f"spectral_norm: the layer has no parameter {name!r}")
    if n_power_iterations <= 0:
        raise InvalidArgumentError(f"spectral_norm: n_power_iterations must be positive, got "
                                   f"{n_power_iterations}")
    if dim is None:
        dim = 1 if isinstance(layer, (Linear, Conv1DTranspose, Conv2DTranspose,
                                      Conv3DTranspose)) else 0
    fn = _SpectralNorm(name, n_power_iterations, dim % len(w.shape), eps)
    mat = _as_matrix(w.detach(), fn.dim)
    h, wd = mat.shape
    from fw.nn import initializer as I

    with no_building():
        u = _l2_normalize(I.Normal(0.0, 1.0)(fw.zeros([h], dtype=w.dtype)), eps)
        v = _l2_normalize(I.Normal(0.0, 1.0)(fw.zeros([wd], dtype=w.dtype)), eps)
    del layer._parameters[name]
    orig = Parameter(w)
    orig.name = w.name + "_orig"
    layer.add_parameter(name + "_orig", orig)
    layer.register_buffer(name + "_u", u)
    layer.register_buffer(name + "_v", v)
    object.__setattr__(layer, name, fn.compute(layer, True))
    layer.register_forward_pre_hook(fn)
    return layer


def remove_spectral_norm(layer, name="weight"):
    """Undo `spectral_norm`: ``<name>`` becomes a plain parameter holding the normalised
    weight.

    Args:
        layer (Layer): the layer.
        name (str, optional): the parameter's attribute name. Default: "weight".

    Returns:
        Layer: ``layer``.

    Examples:
        >>> import fw
        >>> fc = fw.nn.utils.remove_spectral_norm(fw.nn.utils.spectral_norm(fw.nn.Linear(3, 3)))
        >>> sorted(n for n, _ in fc.named_parameters())
        ['bias', 'weight']
    """
    for key, hook in list(layer._forward_pre_hooks.items()):
        if isinstance(hook, _SpectralNorm) and hook.name == name:
            with no_grad():
                w = hook.compute(layer, False)
            del layer._forward_pre_hooks[key]
            orig = layer._parameters.pop(name + "_orig")
            del layer._buffers[name + "_u"]
            del layer._buffers[name + "_v"]
            layer.__dict__.pop(name, None)
            p = Parameter(w.detach())
            p.name = orig.name[: -len("_orig")] if orig.name.endswith("_orig") else orig.name
            layer.add_parameter(name, p)
            return layer
    raise InvalidArgumentError(f"remove_spectral_norm: {name!r} of this layer is not "
                               f"spectrally normalized")
