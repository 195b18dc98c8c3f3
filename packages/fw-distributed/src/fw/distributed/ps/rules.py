"""The server-side update rules (SGD, Adagrad, Adam) applied to table rows.

A rule is a JSON-able spec taken from the worker's optimizer
(`spec_from_optimizer`), so the update a server applies is the one the
optimizer given to ``fleet.distributed_optimizer`` would apply locally (as in
Paddle's parameter-server mode, where the program's optimizer ops move to the
servers). The formulas are fw's (and Paddle's) dense optimizers', per row:

- SGD: ``w -= lr * g``
- Adagrad: ``G += g^2; w -= lr * g / (sqrt(G) + epsilon)`` (``G`` starts at
  ``initial_accumulator_value``)
- Adam: ``m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
  w -= lr * (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + epsilon)``, where ``t``
  counts the updates *of that row* (Paddle's sparse Adam rule keeps its beta
  powers per row, so a rare id's first update is bias-corrected like a frequent
  one's; for the dense table, one row, ``t`` is the step count).

SGD and Adagrad leave a row whose gradient is zero unchanged, so updating only
the rows a batch touched equals the dense optimizer on the whole matrix; Adam
does not (its moments decay), which is why sparse Adam is per-row ("lazy").
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["spec_from_optimizer", "check_rule", "state_layout", "apply_rule"]

_NAMES = ("sgd", "adagrad", "adam")


def _num(v, what, where, minimum=None, exclusive=False):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise ValueError(f"{where}: {what} must be a finite number, got {v!r}")
    if minimum is not None and (v <= minimum if exclusive else v < minimum):
        raise ValueError(f"{where}: {what} must be {'>' if exclusive else '>='} {minimum}, "
                         f"got {v!r}")
    return float(v)


def check_rule(spec, where: str) -> dict:
    """A validated rule spec: ``{"name": "sgd"|"adagrad"|"adam", "learning_rate": ..,
    ...}``; raises ValueError naming the bad key."""
    if not isinstance(spec, dict) or spec.get("name") not in _NAMES:
        raise ValueError(f"{where}: an update rule is a dict with 'name' in {_NAMES}, got "
                         f"{spec!r}")
    out = {"name": spec["name"],
           "learning_rate": _num(spec.get("learning_rate"), "learning_rate", where, 0.0)}
    if spec["name"] == "adagrad":
        out["epsilon"] = _num(spec.get("epsilon", 1e-6), "epsilon", where, 0.0)
        out["initial_accumulator_value"] = _num(spec.get("initial_accumulator_value", 0.0),
                                                "initial_accumulator_value", where, 0.0)
    elif spec["name"] == "adam":
        out["beta1"] = _num(spec.get("beta1", 0.9), "beta1", where, 0.0)
        out["beta2"] = _num(spec.get("beta2", 0.999), "beta2", where, 0.0)
        out["epsilon"] = _num(spec.get("epsilon", 1e-8), "epsilon", where, 0.0)
        for k in ("beta1", "beta2"):
            if not out[k] < 1.0:
                raise ValueError(f"{where}: {k} must be < 1, got {out[k]}")
    return out


def spec_from_optimizer(opt, where: str = "fleet.distributed_optimizer") -> dict:
    """The rule of an fw optimizer (SGD, Adagrad or Adam, constant learning rate,
    no weight decay or gradient clipping: those would need the whole model on
    the server)."""
    name = type(opt).__name__
    if name not in ("SGD", "Adagrad", "Adam"):
        raise NotImplementedError(
            f"{where}: parameter-server mode applies SGD, Adagrad or Adam on the servers; "
            f"got {name}")
    lr = opt._learning_rate if hasattr(opt, "_learning_rate") else None
    if not isinstance(lr, (int, float)) or isinstance(lr, bool):
        raise NotImplementedError(f"{where}: parameter-server mode needs a constant float "
                                  f"learning_rate, got {type(lr).__name__} (an LRScheduler "
                                  "would have to run on the servers)")
    for attr, what in (("_grad_clip", "grad_clip"),):
        if getattr(opt, attr, None) is not None:
            raise NotImplementedError(f"{where}: {name}({what}=...) is not supported in "
                                      "parameter-server mode (the servers see one shard each)")
    wd = opt._default_dict.get("weight_decay") if hasattr(opt, "_default_dict") else None
    if wd not in (None, 0, 0.0):
        raise NotImplementedError(f"{where}: {name}(weight_decay=...) is not supported in "
                                  "parameter-server mode")
    spec = {"name": name.lower(), "learning_rate": float(lr)}
    if name == "Adagrad":
        spec["epsilon"] = float(opt._epsilon)
        spec["initial_accumulator_value"] = float(opt.initial_accumulator_value)
    elif name == "Adam":
        if getattr(opt, "_amsgrad", False):
            raise NotImplementedError(f"{where}: Adam(amsgrad=True) is not supported in "
                                      "parameter-server mode")
        spec.update(beta1=float(opt._beta1), beta2=float(opt._beta2),
                    epsilon=float(opt._epsilon))
    return check_rule(spec, where)


def state_layout(rule: dict, dim: int) -> list[tuple[str, int, float]]:
    """``(name, width, initial value)`` of the per-row optimizer state arrays."""
    if rule["name"] == "adagrad":
        return [("moment", dim, rule["initial_accumulator_value"])]
    if rule["name"] == "adam":
        # the per-row update count t, kept as float32 (exact up to 2^24 updates of a row)
        return [("moment1", dim, 0.0), ("moment2", dim, 0.0), ("step", 1, 0.0)]
    return []


def apply_rule(rule: dict, w: np.ndarray, g: np.ndarray, states: dict) -> None:
    """Update rows `w` (``[n, dim]``, float32) in place with gradients `g`; `states`
    maps each `state_layout` name to its ``[n, width]`` rows, updated in place.
    (Callers pass gathered copies and scatter them back.)"""
    lr = rule["learning_rate"]
    name = rule["name"]
    if name == "sgd":
        w -= np.float32(lr) * g
    elif name == "adagrad":
        m = states["moment"]
        m += g * g
        w -= np.float32(lr) * g / (np.sqrt(m) + np.float32(rule["epsilon"]))
    else:
        b1, b2 = rule["beta1"], rule["beta2"]
        m, v, t = states["moment1"], states["moment2"], states["step"]
        t += 1.0
        m *= np.float32(b1)
        m += np.float32(1.0 - b1) * g
        v *= np.float32(b2)
        v += np.float32(1.0 - b2) * g * g
        tt = t.astype(np.float64)
        c1 = (1.0 - b1 ** tt).astype(np.float32)
        c2 = (1.0 - b2 ** tt).astype(np.float32)
        w -= np.float32(lr) * (m / c1) / (np.sqrt(v / c2) + np.float32(rule["epsilon"]))
