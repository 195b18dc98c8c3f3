"""`FractionalMaxPool2D` / `FractionalMaxPool3D`: Paddle's layers over
`fw.nn.functional.fractional_max_pool2d` / `fractional_max_pool3d`."""

from __future__ import annotations

from fw.nn.functional.fractional_pool import fractional_max_pool2d, fractional_max_pool3d
from fw.nn.layer.layers import Layer

__all__ = ["FractionalMaxPool2D", "FractionalMaxPool3D"]


class FractionalMaxPool2D(Layer):
    """2-D fractional max pooling (see `fw.nn.functional.fractional_max_pool2d`).

    Args:
        output_size (int | list | tuple): ``(H_out, W_out)``.
        kernel_size (int | list | tuple, optional): overlapping regions of this size.
        random_u (float, optional): the pseudo-random sequence's number in (0, 1); a
            fresh draw per call when None.
        return_mask (bool, optional): also return the max indices.
        name (str, optional): unused.

    Examples:
        >>> import fw
        >>> pool = fw.nn.FractionalMaxPool2D(output_size=3, random_u=0.3)
        >>> pool(fw.rand([2, 3, 7, 7])).shape
        [2, 3, 3, 3]
    """

    def __init__(self, output_size, kernel_size=None, random_u=None, return_mask=False,
                 name=None):
        super().__init__()
        self._output_size = output_size
        self._kernel_size = kernel_size
        self._random_u = random_u
        self._return_mask = return_mask
        self._name = name

    def forward(self, x):
        return fractional_max_pool2d(x, self._output_size, self._kernel_size, self._random_u,
                                     self._return_mask)

    def extra_repr(self):
        return f"output_size={self._output_size}, return_mask={self._return_mask}"


class FractionalMaxPool3D(Layer):
    """3-D fractional max pooling (see `fw.nn.functional.fractional_max_pool3d`).

    Args:
        output_size (int | list | tuple): ``(D_out, H_out, W_out)``.
        kernel_size (int | list | tuple, optional): overlapping regions of this size.
        random_u (float, optional): the sequence's number in (0, 1); drawn when None.
        return_mask (bool, optional): also return the max indices.
        name (str, optional): unused.

    Examples:
        >>> import fw
        >>> pool = fw.nn.FractionalMaxPool3D(output_size=2, random_u=0.5)
        >>> pool(fw.rand([1, 2, 5, 5, 5])).shape
        [1, 2, 2, 2, 2]
    """

    def __init__(self, output_size, kernel_size=None, random_u=None, return_mask=False,
                 name=None):
        super().__init__()
        self._output_size = output_size
        self._kernel_size = kernel_size
        self._random_u = random_u
        self._return_mask = return_mask
        self._name = name

    def forward(self, x):
        return fractional_max_pool3d(x, self._output_size, self._kernel_size, self._random_u,
                                     self._return_mask)

    def extra_repr(self):
        return f"output_size={self._output_size}, return_mask={self._return_mask}"
