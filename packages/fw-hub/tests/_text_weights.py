"""Deterministic Hugging Face-layout weights for the tiny BERT / ERNIE fixtures.

Both sides — HF transformers in tools/gen_text_fixtures.py (run once) and fw in
tests/test_text_models.py — fill every entry from a NumPy generator seeded by the
entry's name, so the committed fixtures hold only the config, names, shapes, inputs
and outputs (not the weights). Values are in the *Hugging Face* layout (Linear
``[out, in]``): the tests load them through fw's HF mapping, which is what they check.
"""

from __future__ import annotations

import zlib

import numpy as np


def draw(name: str, shape) -> np.ndarray:
    """The float32 value of HF state-dict entry `name` with `shape`."""
    shape = tuple(int(s) for s in shape)
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    if len(shape) == 1:
        if name.endswith("LayerNorm.weight"):
            return rng.uniform(0.5, 1.5, shape).astype(np.float32)
        return (0.1 * rng.standard_normal(shape)).astype(np.float32)
    if "embeddings" in name:  # [num, dim] tables: O(1) entries, as after training
        return (0.5 * rng.standard_normal(shape)).astype(np.float32)
    # torch Linear [out, in]: fan-in scaling keeps activations O(1) through the layers
    return (rng.standard_normal(shape) / np.sqrt(shape[1])).astype(np.float32)


def state_dict_for(names_shapes) -> dict[str, np.ndarray]:
    """{name: draw(name, shape)} for [(name, shape), ...]."""
    return {str(n): draw(str(n), s) for n, s in names_shapes}
