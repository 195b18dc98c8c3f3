"""`GradScaler`: dynamic loss scaling for float16 training.

float16 gradients of small losses underflow to zero; scaling the loss by ``S``
before backward scales every gradient by ``S``. Before the update the gradients are
divided by ``S`` again (in place, one pass per flat gradient buffer) and checked
for inf/NaN: a step with non-finite gradients is skipped and ``S`` shrinks by
``decr_ratio`` (after ``decr_every_n_nan_or_inf`` such steps); after
``incr_every_n_steps`` finite steps in a row it grows by ``incr_ratio``.
"""

from __future__ import annotations

import math

from fw.core.errors import InvalidArgumentError
from fw.core.tensor import Tensor

__all__ = ["GradScaler", "AmpScaler"]

_READY, _UNSCALED, _STEPPED = 0, 1, 2


class GradScaler:
    """Loss scaling for mixed-precision training.

    Args:
        enable: False turns every method into a pass-through.
        init_loss_scaling: the initial scale (default 2**16).
        incr_ratio: the factor the scale grows by (default 2.0).
        decr_ratio: the factor the scale shrinks by (default 0.5).
        incr_every_n_steps: finite steps in a row before growing (default 2000).
        decr_every_n_nan_or_inf: non-finite steps in a row before shrinking (default 1).
        use_dynamic_loss_scaling: adjust the scale (False keeps it fixed).

    >>> import fw
    >>> lin = fw.nn.Linear(2, 1)
    >>> opt = fw.optimizer.SGD(0.1, parameters=lin.parameters())
    >>> scaler = fw.amp.GradScaler(init_loss_scaling=1024)
    >>> loss = lin(fw.ones([3, 2])).mean()
    >>> scaler.scale(loss).backward()
    >>> _ = scaler.minimize(opt, loss)
    >>> opt.clear_grad()
    """

    def __init__(self, enable=True, init_loss_scaling=2.0 ** 16, incr_ratio=2.0, decr_ratio=0.5,
                 incr_every_n_steps=2000, decr_every_n_nan_or_inf=1,
                 use_dynamic_loss_scaling=True):
        if incr_ratio <= 1.0:
            raise InvalidArgumentError(f"GradScaler: 'incr_ratio' must be > 1, got {incr_ratio}")
        if not 0.0 < decr_ratio < 1.0:
            raise InvalidArgumentError(f"GradScaler: 'decr_ratio' must be in (0, 1), got "
                                       f"{decr_ratio}")
        self._enable = bool(enable)
        self._scale = float(init_loss_scaling)
        self._init_loss_scaling = float(init_loss_scaling)
        self._incr_ratio = float(incr_ratio)
        self._decr_ratio = float(decr_ratio)
        self._incr_every_n_steps = int(incr_every_n_steps)
        self._decr_every_n_nan_or_inf = int(decr_every_n_nan_or_inf)
        self._use_dynamic_loss_scaling = bool(use_dynamic_loss_scaling)
        self._incr_count = 0
        self._decr_count = 0
        self._found_inf = False
        self._opt_states = {}

    # ------------------------------------------------------------ queries
    def is_enable(self) -> bool:
        return self._enable

    def is_use_dynamic_loss_scaling(self) -> bool:
        return self._use_dynamic_loss_scaling

    def get_init_loss_scaling(self) -> float:
        return self._init_loss_scaling

    def set_init_loss_scaling(self, new_init_loss_scaling):
        """Set the initial and current scale."""
        self._init_loss_scaling = float(new_init_loss_scaling)
        self._scale = float(new_init_loss_scaling)

    def get_loss_scaling(self) -> float:
        """The current scale."""
        return self._scale

    def get_incr_ratio(self) -> float:
        return self._incr_ratio

    def set_incr_ratio(self, v):
        if v <= 1.0:
            raise InvalidArgumentError(f"GradScaler: 'incr_ratio' must be > 1, got {v}")
        self._incr_ratio = float(v)

    def get_decr_ratio(self) -> float:
        return self._decr_ratio

    def set_decr_ratio(self, v):
        if not 0.0 < v < 1.0:
            raise InvalidArgumentError(f"GradScaler: 'decr_ratio' must be in (0, 1), got {v}")
        self._decr_ratio = float(v)

    def get_incr_every_n_steps(self) -> int:
        return self._incr_every_n_steps

    def set_incr_every_n_steps(self, v):
        self._incr_every_n_steps = int(v)

    def get_decr_every_n_nan_or_inf(self) -> int:
        return self._decr_every_n_nan_or_inf

    def set_decr_every_n_nan_or_inf(self, v):
        self._decr_every_n_nan_or_inf = int(v)

    # ------------------------------------------------------------ scaling
    def scale(self, var):
        """``var * scale`` (the loss to call backward on)."""
        if not self._enable:
            return var
        if not isinstance(var, Tensor):
            raise TypeError(f"GradScaler.scale: expected a Tensor, got {type(var).__name__}")
        return var * self._scale

    def unscale_(self, optimizer):
        """Divide the gradients of `optimizer`'s parameters by the scale, in place,
        and record whether any is inf/NaN. Called by `step`/`minimize` when not
        called before (e.g. to clip unscaled gradients)."""
        if not self._enable:
            return
        st = self._opt_states.get(id(optimizer), _READY)
        if st == _UNSCALED:
            raise RuntimeError("GradScaler.unscale_ was already called on this optimizer "
                               "since the last update()")
        if st == _STEPPED:
            raise RuntimeError("GradScaler.unscale_ was called after step(); call update() "
                               "first")
        found = optimizer._unscale_grads(1.0 / self._scale)
        self._found_inf = self._found_inf or found
        self._opt_states[id(optimizer)] = _UNSCALED

    def step(self, optimizer):
        """Unscale (if needed) and run ``optimizer.step()`` unless a gradient is
        inf/NaN. Call `update` afterwards."""
        if not self._enable:
            return optimizer.step()
        st = self._opt_states.get(id(optimizer), _READY)
        if st == _STEPPED:
            raise RuntimeError("GradScaler.step was already called on this optimizer since "
                               "the last update()")
        if st == _READY:
            self.unscale_(optimizer)
        if not self._found_inf:
            optimizer.step()
        self._opt_states[id(optimizer)] = _STEPPED

    def update(self):
        """Adjust the scale after this iteration's steps (dynamic scaling)."""
        if not self._enable:
            return
        if self._use_dynamic_loss_scaling:
            if self._found_inf:
                self._incr_count = 0
                self._decr_count += 1
                if self._decr_count >= self._decr_every_n_nan_or_inf:
                    self._scale = max(self._scale * self._decr_ratio, 1.0)
                    self._decr_count = 0
            else:
                self._decr_count = 0
                self._incr_count += 1
                if self._incr_count >= self._incr_every_n_steps:
                    new = self._scale * self._incr_ratio
                    if math.isfinite(new):
                        self._scale = new
                    self._incr_count = 0
        self._found_inf = False
        self._opt_states = {}

    def minimize(self, optimizer, *args, **kwargs):
        """`step` then `update` (Paddle's one-call form). Extra arguments go to
        ``optimizer.minimize``."""
        if not self._enable:
            return optimizer.minimize(*args, **kwargs)
        st = self._opt_states.get(id(optimizer), _READY)
        if st == _READY:
            self.unscale_(optimizer)
        result = None
        if not self._found_inf:
            result = optimizer.minimize(*args, **kwargs)
        self._opt_states[id(optimizer)] = _STEPPED
        self.update()
        return result

    # ------------------------------------------------------------ state
    def state_dict(self) -> dict:
        """The scaler's state (plain Python numbers); empty when disabled."""
        if not self._enable:
            return {}
        return {"scale": self._scale, "incr_ratio": self._incr_ratio,
                "decr_ratio": self._decr_ratio, "incr_every_n_steps": self._incr_every_n_steps,
                "decr_every_n_nan_or_inf": self._decr_every_n_nan_or_inf,
                "incr_count": self._incr_count, "decr_count": self._decr_count,
                "use_dynamic_loss_scaling": self._use_dynamic_loss_scaling}

    def load_state_dict(self, state_dict):
        """Restore a state from `state_dict`."""
        if not self._enable:
            return
        if not state_dict:
            raise RuntimeError("GradScaler.load_state_dict: the state dict is empty (it was "
                               "saved from a disabled scaler?)")

        def num(k):
            v = state_dict[k]
            return float(v.item() if hasattr(v, "item") else v)

        self._scale = num("scale")
        self._incr_ratio = num("incr_ratio")
        self._decr_ratio = num("decr_ratio")
        self._incr_every_n_steps = int(num("incr_every_n_steps"))
        self._decr_every_n_nan_or_inf = int(num("decr_every_n_nan_or_inf"))
        self._incr_count = int(num("incr_count"))
        self._decr_count = int(num("decr_count"))
        self._use_dynamic_loss_scaling = bool(num("use_dynamic_loss_scaling"))

    set_state_dict = load_state_dict


AmpScaler = GradScaler
