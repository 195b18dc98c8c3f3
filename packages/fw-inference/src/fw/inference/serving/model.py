"""What a server knows about each model: its name, its predictor and the
description of its inputs and outputs (`TensorSpec`), read from the Predictor's
public handles.

A model is named by the caller or, by default, after its file (the stem of
``lenet_digits.fwmodel`` is ``lenet_digits``). Names go into URLs
(``/v1/models/{name}:predict``), so they are limited to letters, digits, ``_``,
``-`` and ``.``.
"""

from __future__ import annotations

import dataclasses
import os
import re

import numpy as np

__all__ = ["TensorSpec", "ModelSpec", "load_predictor", "model_name", "describe"]

_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")


@dataclasses.dataclass(frozen=True)
class TensorSpec:
    """One input or output: its name, shape (-1: any size) and NumPy dtype."""

    name: str
    shape: tuple
    dtype: np.dtype

    @property
    def dtype_name(self) -> str:
        return np.dtype(self.dtype).name

    @property
    def batch_dim_dynamic(self) -> bool:
        return len(self.shape) >= 1 and self.shape[0] == -1

    def describe(self) -> dict:
        return {"name": self.name, "shape": list(self.shape), "dtype": self.dtype_name}

    def __str__(self) -> str:
        return f"{self.dtype_name}{list(self.shape)}"


@dataclasses.dataclass(frozen=True)
class ModelSpec:
    """A model's inputs and outputs, in the Predictor's order.

    `batchable`: every input and every output has a dynamic leading dim, the one
    dynamic batching concatenates and splits along. A model with a fixed leading
    dim anywhere runs its requests one by one.
    """

    name: str
    inputs: tuple
    outputs: tuple

    @property
    def batchable(self) -> bool:
        return bool(self.inputs) and all(t.batch_dim_dynamic for t in self.inputs + self.outputs)

    def input(self, name: str) -> TensorSpec | None:
        for t in self.inputs:
            if t.name == name:
                return t
        return None

    @property
    def input_names(self) -> list:
        return [t.name for t in self.inputs]

    @property
    def output_names(self) -> list:
        return [t.name for t in self.outputs]

    def describe(self) -> dict:
        return {"name": self.name, "inputs": [t.describe() for t in self.inputs],
                "outputs": [t.describe() for t in self.outputs], "batching": self.batchable}


def describe(name: str, predictor) -> ModelSpec:
    """The `ModelSpec` of `predictor`, read from the handles of a fresh clone (a
    handle without data reports the program's declared shape)."""
    p = predictor.clone()

    def spec(handle, n):
        return TensorSpec(n, tuple(int(d) for d in handle.shape()), np.dtype(handle.dtype))

    return ModelSpec(name,
                     tuple(spec(p.get_input_handle(n), n) for n in p.get_input_names()),
                     tuple(spec(p.get_output_handle(n), n) for n in p.get_output_names()))


def model_name(name: str | None, source) -> str:
    """`name`, or the stem of the model file `source`; checked to fit in a URL."""
    if name is None:
        if not isinstance(source, (str, os.PathLike)):
            raise ValueError(f"a model given as {type(source).__name__} needs a name: pass "
                             f"{{'name': model}}")
        from fw.inference import Config

        # the file a prefix or a directory resolves to names the model
        name = os.path.splitext(os.path.basename(Config(source).prog_file().rstrip("/\\")))[0]
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"model name {name!r} does not fit in a URL: use 1-128 letters, "
                         f"digits, '_', '-' or '.'")
    return name


def load_predictor(source, cpu_threads: int | None = None):
    """A Predictor from `source`: a model file path (or prefix, or directory), a
    `fw.inference.Config`, or a Predictor (used as it is; each worker thread runs
    its own ``clone()``)."""
    from fw.inference import Config, Predictor, create_predictor

    if isinstance(source, Predictor) or (hasattr(source, "clone") and hasattr(source, "run")
                                         and hasattr(source, "get_input_names")):
        return source
    if isinstance(source, (str, os.PathLike)):
        config = Config(os.fspath(source))
    elif isinstance(source, Config):
        config = Config(source)  # the caller's config stays as it was
    else:
        raise TypeError(f"a model is a model file path, a fw.inference.Config or a Predictor, "
                        f"got {type(source).__name__}")
    if cpu_threads is not None:
        config.set_cpu_math_library_num_threads(cpu_threads)
    config.disable_glog_info()
    return create_predictor(config)
