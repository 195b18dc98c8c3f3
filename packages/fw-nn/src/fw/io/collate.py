"""Batch assembly: `default_collate_fn` stacks samples into a batch, and
`default_convert_fn` converts one sample (``batch_size=None``).

Both turn NumPy arrays and numbers into fw Tensors. Internally the worker
processes run the NumPy half (`collate_numpy`) and the parent converts the result
(`to_tensors`), so batches travel between processes as plain arrays.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Mapping, Sequence

import numpy as np

from fw.core.tensor import Tensor, wrap

__all__ = ["default_collate_fn", "default_convert_fn"]


def collate_numpy(batch):
    """Stack a list of samples into NumPy arrays, recursing into dicts and
    sequences; strings stay lists. Samples of different dtypes are promoted with a
    warning (see `_stack`)."""
    if not isinstance(batch, (list, tuple)) or len(batch) == 0:
        raise TypeError(f"default_collate_fn: expected a non-empty list of samples, got "
                        f"{type(batch).__name__}")
    sample = batch[0]
    if isinstance(sample, np.ndarray):
        return _stack([np.asarray(b) for b in batch])
    if isinstance(sample, Tensor):
        return _stack([b.numpy() for b in batch])
    if isinstance(sample, (np.generic, numbers.Number)) and not isinstance(sample, (str,
                                                                                     bytes)):
        return np.asarray(batch)  # Python floats give float64, ints int64 (as Paddle)
    if isinstance(sample, (str, bytes)):
        return list(batch)
    if isinstance(sample, Mapping):
        return {k: collate_numpy([d[k] for d in batch]) for k in sample}
    if isinstance(sample, Sequence):
        n = len(sample)
        for i, b in enumerate(batch):
            if len(b) != n:
                raise ValueError(f"default_collate_fn: sample {i} has {len(b)} fields but sample "
                                 f"0 has {n}; every sample must have the same structure")
        return [collate_numpy(list(fields)) for fields in zip(*batch)]
    raise TypeError(f"default_collate_fn: cannot batch samples of type "
                    f"{type(sample).__name__}; expected NumPy arrays, numbers, Tensors, "
                    f"strings, dicts or sequences of them")


def _stack(arrays):
    shape, dtype = arrays[0].shape, arrays[0].dtype
    odd = None
    for i, a in enumerate(arrays):
        if a.shape != shape:
            raise ValueError(f"default_collate_fn: sample {i} has shape {list(a.shape)} but "
                             f"sample 0 has shape {list(shape)}; samples must have one shape "
                             f"to be stacked (pass a collate_fn that pads them)")
        if odd is None and a.dtype != dtype:
            odd = i
    out = np.stack(arrays, axis=0)
    if odd is not None:
        # Mixed dtypes promote, as in Paddle (its default_collate_fn is np.stack) and
        # PyTorch: following sample 0's dtype instead could silently truncate (an
        # int64 sample 0 followed by floats) or lose precision. But a promoted batch is
        # almost always a bug in the dataset (one float64 sample turns a float32 batch,
        # and then the model's activations, float64), so it is not silent: a warning
        # names the sample and both dtypes.
        warnings.warn(f"default_collate_fn: sample {odd} of the batch has dtype "
                      f"{arrays[odd].dtype} but sample 0 has {dtype}; the batch is promoted to "
                      f"{out.dtype} (NumPy's rule, as Paddle's default_collate_fn). Give "
                      f"every sample of the dataset one dtype to avoid this.", UserWarning,
                      stacklevel=3)
    return out


def to_tensors(data):
    """Convert the arrays (and Tensors) of a nested structure to fw Tensors."""
    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray):
        if data.dtype.kind in "OUS":
            return data
        from fw.core import dtypes as _dt

        try:
            _dt.from_numpy(data.dtype)
        except TypeError:  # uint16/32/64 and the like: to_tensor widens them
            from fw.core.tensor import to_tensor

            return to_tensor(data)
        return wrap(data)
    if isinstance(data, np.generic) and not isinstance(data, (np.str_, np.bytes_)):
        return wrap(np.asarray(data))
    if isinstance(data, Mapping):
        return {k: to_tensors(v) for k, v in data.items()}
    if isinstance(data, tuple):
        return tuple(to_tensors(v) for v in data)
    if isinstance(data, list):
        return [to_tensors(v) for v in data]
    return data


def to_numpy_tree(data):
    """The inverse transport form: Tensors become NumPy arrays."""
    if isinstance(data, Tensor):
        return data.numpy()
    if isinstance(data, Mapping):
        return {k: to_numpy_tree(v) for k, v in data.items()}
    if isinstance(data, tuple):
        return tuple(to_numpy_tree(v) for v in data)
    if isinstance(data, list):
        return [to_numpy_tree(v) for v in data]
    return data


def default_collate_fn(batch):
    """Stack a list of samples into a batch of fw Tensors.

    NumPy arrays and Tensors are stacked along a new first axis, numbers become a
    1-D tensor (Python floats as float64, ints as int64, as in Paddle), strings stay
    lists, and dicts and sequences are collated field by field (a sequence gives a
    list). Samples of different dtypes are promoted by NumPy's rule, as Paddle does
    (one float64 sample makes a float32 batch float64), with a warning naming the
    odd sample.

    Args:
        batch (list): the samples.

    Returns:
        The batch: Tensors, lists or dicts in the samples' structure.

    Examples:
        >>> import fw
        >>> import numpy as np
        >>> samples = [(np.ones(2, "float32"), 0), (np.zeros(2, "float32"), 1)]
        >>> x, y = fw.io.default_collate_fn(samples)
        >>> x.shape, y.tolist(), y.dtype
        ([2, 2], [0, 1], fw.int64)
        >>> fw.io.default_collate_fn([{"a": 1.5}, {"a": 2.5}])["a"].dtype
        fw.float64
    """
    return to_tensors(collate_numpy(batch))


def default_convert_fn(batch):
    """Convert one sample (``batch_size=None``): arrays and numbers become Tensors,
    recursing into dicts and sequences; no batch axis is added.

    Args:
        batch (object): one sample.

    Returns:
        The sample with arrays and numbers as Tensors.

    Examples:
        >>> import fw
        >>> import numpy as np
        >>> out = fw.io.default_convert_fn({"x": np.ones(3, "float32"), "label": 2})
        >>> out["x"].shape, type(out["x"]).__name__, out["label"]
        ([3], 'Tensor', 2)
    """
    if isinstance(batch, (np.ndarray, np.generic, Tensor)):
        return to_tensors(batch)
    if isinstance(batch, (str, bytes)):
        return batch
    if isinstance(batch, Mapping):
        return {k: default_convert_fn(v) for k, v in batch.items()}
    if isinstance(batch, tuple):
        return tuple(default_convert_fn(v) for v in batch)
    if isinstance(batch, list):
        return [default_convert_fn(v) for v in batch]
    return batch
