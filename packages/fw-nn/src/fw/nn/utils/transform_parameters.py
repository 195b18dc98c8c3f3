"""Flatten parameters into one vector and back."""

from __future__ import annotations

import fw
from fw.autograd import no_grad
from fw.core.errors import InvalidArgumentError

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters, name=None):
    """The concatenation of the flattened `parameters` (1-D; differentiable).

    >>> import fw
    >>> fw.nn.utils.parameters_to_vector(fw.nn.Linear(2, 3).parameters()).shape
    [9]
    """
    ps = list(parameters)
    if not ps:
        raise InvalidArgumentError("parameters_to_vector: no parameters given")
    return fw.concat([p.reshape([-1]) for p in ps])


def vector_to_parameters(vec, parameters, name=None):
    """Copy consecutive slices of the 1-D `vec` into `parameters`, in place."""
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
