"""Deterministic weights for the Paddle-fixture equality tests.

Both sides — real Paddle in tools/gen_paddle_fixtures.py (run once) and fw in the
tests — fill every state-dict entry from a NumPy generator seeded by the entry's
name, so the committed fixtures hold only names, shapes, the input and the outputs
(a few KB per model, not the weights). Scales keep deep networks' activations
finite: fan-in scaling for weights, BatchNorm statistics near identity.
"""

from __future__ import annotations

import zlib

import numpy as np


def draw(name: str, shape) -> np.ndarray:
    """The float32 value of state-dict entry `name` with `shape`."""
    shape = tuple(int(s) for s in shape)
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    if name.endswith("_variance") or name.endswith("running_var"):
        return rng.uniform(0.5, 1.5, shape).astype(np.float32)
    if name.endswith("_mean") or name.endswith("running_mean"):
        return (0.1 * rng.standard_normal(shape)).astype(np.float32)
    if len(shape) <= 1:
        if name.endswith("weight") or name.endswith("scale"):
            return rng.uniform(0.5, 1.5, shape).astype(np.float32)
        return (0.1 * rng.standard_normal(shape)).astype(np.float32)
    # conv [out, in/groups, kh, kw]: fan-in = prod(shape[1:]); Paddle's Linear
    # [in, out]: fan-in = shape[0]
    fan_in = shape[0] if len(shape) == 2 else int(np.prod(shape[1:]))
    return (rng.standard_normal(shape) / np.sqrt(max(fan_in, 1))).astype(np.float32)


def state_dict_for(names_shapes) -> dict[str, np.ndarray]:
    """{name: draw(name, shape)} for [(name, shape), ...]."""
    return {n: draw(n, s) for n, s in names_shapes}


def image(shape, seed: int = 0) -> np.ndarray:
    """The fixture's input batch: uniform in [-1, 1), float32."""
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32)
