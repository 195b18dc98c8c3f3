"""Explicit layout conversion of PyTorch state dicts into fw (Paddle-layout) models.

PyTorch and Paddle agree on most parameter layouts (convolutions, norms, embeddings),
but not on two things a state dict carries:

- **Linear weights**: ``torch.nn.Linear.weight`` is ``[out_features, in_features]``,
  Paddle's / fw's ``nn.Linear.weight`` is ``[in_features, out_features]``. A square
  weight fits either way, so loading it untransposed "works" and computes the wrong
  thing; `from_torch` transposes every Linear weight of the model and says so, and
  `ConversionReport.ambiguous` names the square ones (shape could not have caught it).
- **BatchNorm statistics**: ``running_mean`` / ``running_var`` are ``_mean`` /
  ``_variance``; ``num_batches_tracked`` has no counterpart and is dropped.

What is a Linear weight is read from the model (its `fw.nn.Linear` sublayers), never
guessed from names or shapes. Packed attention projections (``in_proj_weight`` of
``torch.nn.MultiheadAttention``) are not split: they show up as unexpected keys.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from fw.hub.errors import LayoutError

__all__ = ["from_torch", "torch_to_fw", "ConversionReport", "linear_weight_names",
           "TORCH_RENAMES", "TORCH_DROPPED"]

# torch name (last component) -> fw name
TORCH_RENAMES = {"running_mean": "_mean", "running_var": "_variance"}
TORCH_DROPPED = ("num_batches_tracked",)


class ConversionReport:
    """What a conversion did (and, after loading, what the model received).

    Attributes:
        renamed (dict): torch name -> fw name, for every renamed entry.
        transposed (list): fw names of the Linear weights transposed.
        ambiguous (list): the transposed weights that are square (their layout cannot
            be told from the shape: loading them without conversion would silently
            compute with the transpose).
        dropped (list): torch entries without an fw counterpart (``num_batches_tracked``).
        load (LoadReport | None): `fw.nn.Layer.set_state_dict`'s report once loaded
            (missing / unexpected / mismatched keys).
    """

    def __init__(self):
        self.renamed: dict = {}
        self.transposed: list = []
        self.ambiguous: list = []
        self.dropped: list = []
        self.load = None

    @property
    def ok(self) -> bool:
        """True when loaded and every key matched."""
        return self.load is not None and self.load.ok

    def __repr__(self):
        parts = [f"renamed={len(self.renamed)}", f"transposed={self.transposed}",
                 f"ambiguous={self.ambiguous}", f"dropped={self.dropped}"]
        if self.load is not None:
            mism = [m[0] if isinstance(m, tuple) else m for m in self.load.mismatched_keys]
            parts += [f"missing={self.load.missing_keys}",
                      f"unexpected={self.load.unexpected_keys}", f"mismatched={mism}"]
        return "ConversionReport(" + ", ".join(parts) + ")"


def linear_weight_names(model) -> set:
    """Structured names of the ``weight`` of every `fw.nn.Linear` in `model`.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> from fw.hub.convert import linear_weight_names
            >>> m = fw.nn.Sequential(fw.nn.Linear(2, 2), fw.nn.ReLU(), fw.nn.Linear(2, 1))
            >>> sorted(linear_weight_names(m))
            ['0.weight', '2.weight']
    """
    from fw.nn import Linear

    names = set()
    if isinstance(model, Linear):
        names.add("weight")
    for prefix, layer in model.named_sublayers():
        if isinstance(layer, Linear):
            names.add(f"{prefix}.weight" if prefix else "weight")
    return names


def _as_array(v, key):
    if isinstance(v, np.ndarray):
        return v
    if hasattr(v, "numpy") and callable(v.numpy):  # fw / torch tensors
        return np.asarray(v.numpy())
    try:
        return np.asarray(v)
    except Exception as e:
        raise TypeError(f"fw.hub.convert: state_dict[{key!r}] is a {type(v).__name__}, not an "
                        f"array or tensor") from e


def torch_to_fw(state_dict, model):
    """Convert a PyTorch state dict to `model`'s names and layouts, without loading.

    Args:
        state_dict (dict): name -> array/tensor, as ``torch.nn.Module.state_dict()`` or
            `fw.hub.torch_pickle.load` gives it.
        model (fw.nn.Layer): the fw model the weights are for.

    Returns:
        tuple: ``(OrderedDict name -> numpy.ndarray, ConversionReport)``.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import numpy as np, fw
            >>> from fw.hub.convert import torch_to_fw
            >>> model = fw.nn.Sequential(fw.nn.Linear(2, 2), fw.nn.BatchNorm1D(2))
            >>> w = np.array([[1., 2.], [3., 4.]], np.float32)  # torch: [out, in]
            >>> sd, report = torch_to_fw({"0.weight": w, "0.bias": np.zeros(2, np.float32),
            ...     "1.weight": np.ones(2, np.float32), "1.bias": np.zeros(2, np.float32),
            ...     "1.running_mean": np.zeros(2, np.float32),
            ...     "1.running_var": np.ones(2, np.float32),
            ...     "1.num_batches_tracked": np.array(3)}, model)
            >>> sd["0.weight"]
            array([[1., 3.],
                   [2., 4.]], dtype=float32)
            >>> report.ambiguous, report.dropped, sorted(report.renamed.values())
            (['0.weight'], ['1.num_batches_tracked'], ['1._mean', '1._variance'])
    """
    if not isinstance(state_dict, dict):
        raise TypeError(f"fw.hub.convert.torch_to_fw: state_dict must be a dict, got "
                        f"{type(state_dict).__name__}")
    linear = linear_weight_names(model)
    report = ConversionReport()
    out = OrderedDict()
    for key, value in state_dict.items():
        if not isinstance(key, str):
            raise TypeError(f"fw.hub.convert.torch_to_fw: key {key!r} is not a string")
        head, _, last = key.rpartition(".")
        if last in TORCH_DROPPED:
            report.dropped.append(key)
            continue
        name = key
        if last in TORCH_RENAMES:
            name = f"{head}.{TORCH_RENAMES[last]}" if head else TORCH_RENAMES[last]
            report.renamed[key] = name
        arr = _as_array(value, key)
        if name in linear:
            if arr.ndim != 2:
                raise LayoutError(f"fw.hub.convert.torch_to_fw: {key!r} is the weight of a "
                                  f"Linear layer but has shape {list(arr.shape)} (2-D "
                                  f"expected)")
            if arr.shape[0] == arr.shape[1]:
                report.ambiguous.append(name)
            arr = np.ascontiguousarray(arr.T)
            report.transposed.append(name)
        out[name] = arr
    return out, report


def from_torch(state_dict, model, *, strict: bool = True):
    """Load a PyTorch state dict into the fw `model`: names mapped (``running_mean`` ->
    ``_mean``, ``running_var`` -> ``_variance``, ``num_batches_tracked`` dropped) and
    every Linear weight transposed from torch's ``[out, in]`` to fw's ``[in, out]``.

    Args:
        state_dict (dict): name -> array/tensor in PyTorch's names and layouts.
        model (fw.nn.Layer): the model to load into (in place).
        strict (bool, optional): raise `fw.hub.errors.LayoutError` when a key is
            missing, unexpected or has the wrong shape after conversion (nothing is
            half-loaded: the check runs before loading). Default True.

    Returns:
        ConversionReport: what was renamed, transposed (``ambiguous``: the square
        ones), dropped, and ``load``: the model's load report.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import numpy as np, fw
            >>> from fw.hub.convert import from_torch
            >>> model = fw.nn.Linear(3, 2)
            >>> w = np.arange(6, dtype=np.float32).reshape(2, 3)  # torch: [out=2, in=3]
            >>> report = from_torch({"weight": w, "bias": np.zeros(2, np.float32)}, model)
            >>> report.transposed, report.ok
            (['weight'], True)
            >>> model.weight.shape
            [3, 2]
    """
    converted, report = torch_to_fw(state_dict, model)
    if strict:
        expected = {k: tuple(v.shape) for k, v in model.state_dict().items()}
        missing = [k for k in expected if k not in converted]
        unexpected = [k for k in converted if k not in expected]
        wrong = [f"{k}: model {list(expected[k])} vs converted {list(converted[k].shape)}"
                 for k in converted if k in expected
                 and tuple(converted[k].shape) != expected[k]]
        if missing or unexpected or wrong:
            raise LayoutError(f"fw.hub.convert.from_torch: the converted state dict does not "
                              f"fit {type(model).__name__}: missing {missing}, unexpected "
                              f"{unexpected}, wrong shapes {wrong} (strict=False loads what "
                              f"fits and reports the rest)")
    report.load = model.set_state_dict(converted)
    return report
