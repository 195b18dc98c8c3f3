"""Flatten parameters into one vector and back."""

from __future__ import annotations

import fw
from fw.autograd import no_grad
from fw.core.errors import InvalidArgumentError

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters, name=None):
    """Flatten ``parameters`` and concatenate them into one 1-D tensor (differentiable).

    Args:
        parameters (Iterable[Tensor]): the parameters, in order.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        Tensor: a 1-D tensor of all their elements.

    Examples:
        >>> import fw
        >>> fc = fw.nn.Linear(2, 3)
        >>> vec = fw.nn.utils.parameters_to_vector(fc.parameters())
        >>> vec.shape
        [9]
    """
    ps = list(parameters)
    if not ps:
        raise InvalidArgumentError("parameters_to_vector: no parameters given")
    return fw.concat([p.reshape([-1]) for p in ps])


def vector_to_parameters(vec, parameters, name=None):
    """Copy consecutive slices of the 1-D ``vec`` into ``parameters``, in place (the
    inverse of `parameters_to_vector`).

    Args:
        vec (Tensor): a 1-D tensor with as many elements as the parameters together.
        parameters (Iterable[Tensor]): the parameters to overwrite, in order.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Returns:
        None.

    Examples:
        >>> import fw
        >>> fc = fw.nn.Linear(2, 1)
        >>> fw.nn.utils.vector_to_parameters(fw.to_tensor([1.0, 2.0, 3.0]), fc.parameters())
        >>> fc.weight.tolist(), fc.bias.tolist()
        ([[1.0], [2.0]], [3.0])
    """
    ps = list(parameters)
    total = sum(p.size for p in ps)
    if len(vec.shape) != 1 or vec.shape[0] != total:
        raise InvalidArgumentError(f"vector_to_parameters: vec has shape {list(vec.shape)} but "
                                   f"the parameters hold {total} elements")
    off = 0
    with no_grad():
        for p in ps:
            n = p.size
            p.set_value(vec[off:off + n].reshape(p.shape).astype(p.dtype))
            off += n
