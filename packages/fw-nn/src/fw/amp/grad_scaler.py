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
    """Dynamic loss scaling for mixed-precision training (Paddle's ``paddle.amp.GradScaler``).

    float16 gradients of small magnitude underflow to zero. The scaler multiplies the
    loss by a scale before ``backward()``, divides the gradients by it before the
    update, skips the update when a gradient is inf/NaN, and adapts the scale: it
    shrinks by ``decr_ratio`` after ``decr_every_n_nan_or_inf`` bad steps and grows by
    ``incr_ratio`` after ``incr_every_n_steps`` good ones.

    Args:
        enable (bool, optional): False turns every method into a pass-through.
            Default: True.
        init_loss_scaling (float, optional): the initial scale. Default: 65536.0 (2**16).
        incr_ratio (float, optional): the growth factor. Default: 2.0.
        decr_ratio (float, optional): the shrink factor. Default: 0.5.
        incr_every_n_steps (int, optional): finite steps in a row before growing.
            Default: 2000.
        decr_every_n_nan_or_inf (int, optional): non-finite steps in a row before
            shrinking. Default: 1.
        use_dynamic_loss_scaling (bool, optional): adapt the scale; False keeps it fixed.
            Default: True.

    Examples:
        >>> import fw
        >>> net = fw.nn.Linear(2, 1)
        >>> opt = fw.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
        >>> scaler = fw.amp.GradScaler(init_loss_scaling=1024.0, incr_every_n_steps=2)
        >>> for _ in range(2):
        ...     with fw.amp.auto_cast(dtype="float16"):
        ...         loss = net(fw.ones([3, 2])).mean()
        ...     scaler.scale(loss).backward()
        ...     scaler.step(opt)
        ...     scaler.update()
        ...     opt.clear_grad()
        >>> scaler.get_loss_scaling()   # two finite steps: grown once
        2048.0
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
        """Whether the scaler is enabled.

        Returns:
            bool.

        Examples:
            >>> import fw
            >>> fw.amp.GradScaler().is_enable(), fw.amp.GradScaler(enable=False).is_enable()
            (True, False)
        """
        return self._enable

    def is_use_dynamic_loss_scaling(self) -> bool:
        """Whether the scale adapts (dynamic loss scaling).

        Returns:
            bool.

        Examples:
            >>> import fw
            >>> fw.amp.GradScaler(use_dynamic_loss_scaling=False).is_use_dynamic_loss_scaling()
            False
        """
        return self._use_dynamic_loss_scaling

    def get_init_loss_scaling(self) -> float:
        """Return the initial scale.

        Returns:
            float, the initial scale.

        Examples:
            >>> import fw
            >>> net = fw.nn.Linear(2, 1)
            >>> opt = fw.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
            >>> scaler = fw.amp.GradScaler(init_loss_scaling=1024.0, incr_every_n_steps=2)
            >>> scaler.get_init_loss_scaling()
            1024.0
        """
        return self._init_loss_scaling

    def set_init_loss_scaling(self, new_init_loss_scaling):
        """Set the initial scale (the current scale too).

        Args:
            new_init_loss_scaling (float): the new value.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> net = fw.nn.Linear(2, 1)
            >>> opt = fw.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
            >>> scaler = fw.amp.GradScaler(init_loss_scaling=1024.0, incr_every_n_steps=2)
            >>> scaler.set_init_loss_scaling(512.0)
            >>> scaler.get_init_loss_scaling()
            512.0
        """
        self._init_loss_scaling = float(new_init_loss_scaling)
        self._scale = float(new_init_loss_scaling)

    def get_loss_scaling(self) -> float:
        """The current scale.

        Returns:
            float, the scale the loss is multiplied by.

        Examples:
            >>> import fw
            >>> net = fw.nn.Linear(2, 1)
            >>> opt = fw.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
            >>> scaler = fw.amp.GradScaler(init_loss_scaling=1024.0, incr_every_n_steps=2)
            >>> scaler.get_loss_scaling()
            1024.0
        """
        return self._scale

    def get_incr_ratio(self) -> float:
        """Return the growth factor.

        Returns:
            float, the growth factor.

        Examples:
            >>> import fw
            >>> net = fw.nn.Linear(2, 1)
            >>> opt = fw.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
            >>> scaler = fw.amp.GradScaler(init_loss_scaling=1024.0, incr_every_n_steps=2)
            >>> scaler.get_incr_ratio()
            2.0
        """
        return self._incr_ratio

    def set_incr_ratio(self, v):
        """Set the growth factor.

        Args:
            v (float): the new value.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> net = fw.nn.Linear(2, 1)
            >>> opt = fw.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
            >>> scaler = fw.amp.GradScaler(init_loss_scaling=1024.0, incr_every_n_steps=2)
            >>> scaler.set_incr_ratio(4.0)
            >>> scaler.get_incr_ratio()
            4.0
        """
        if v <= 1.0:
            raise InvalidArgumentError(f"GradScaler: 'incr_ratio' must be > 1, got {v}")
        self._incr_ratio = float(v)

    def get_decr_ratio(self) -> float:
        """Return the shrink factor.

        Returns:
            float, the shrink factor.

        Examples:
            >>> import fw
            >>> net = fw.nn.Linear(2, 1)
            >>> opt = fw.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
            >>> scaler = fw.amp.GradScaler(init_loss_scaling=1024.0, incr_every_n_steps=2)
            >>> scaler.get_decr_ratio()
            0.5
        """
        return self._decr_ratio

    def set_decr_ratio(self, v):
        """Set the shrink factor.

        Args:
            v (float): the new value.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> net = fw.nn.Linear(2, 1)
            >>> opt = fw.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
            >>> scaler = fw.amp.GradScaler(init_loss_scaling=1024.0, incr_every_n_steps=2)
            >>> scaler.set_decr_ratio(0.25)
            >>> scaler.get_decr_ratio()
            0.25
        """
        if not 0.0 < v < 1.0:
            raise InvalidArgumentError(f"GradScaler: 'decr_ratio' must be in (0, 1), got {v}")
        self._decr_ratio = float(v)

    def get_incr_every_n_steps(self) -> int:
        """Return the finite steps in a row before growing.

        Returns:
            int, the finite steps in a row before growing.

        Examples:
            >>> import fw
            >>> net = fw.nn.Linear(2, 1)
            >>> opt = fw.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
            >>> scaler = fw.amp.GradScaler(init_loss_scaling=1024.0, incr_every_n_steps=2)
            >>> scaler.get_incr_every_n_steps()
            2
        """
        return self._incr_every_n_steps

    def set_incr_every_n_steps(self, v):
        """Set the finite steps in a row before growing.

        Args:
            v (int): the new value.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> net = fw.nn.Linear(2, 1)
            >>> opt = fw.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
            >>> scaler = fw.amp.GradScaler(init_loss_scaling=1024.0, incr_every_n_steps=2)
            >>> scaler.set_incr_every_n_steps(100)
            >>> scaler.get_incr_every_n_steps()
            100
        """
        self._incr_every_n_steps = int(v)

    def get_decr_every_n_nan_or_inf(self) -> int:
        """Return the non-finite steps in a row before shrinking.

        Returns:
            int, the non-finite steps in a row before shrinking.

        Examples:
            >>> import fw
            >>> net = fw.nn.Linear(2, 1)
            >>> opt = fw.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
            >>> scaler = fw.amp.GradScaler(init_loss_scaling=1024.0, incr_every_n_steps=2)
            >>> scaler.get_decr_every_n_nan_or_inf()
            1
        """
        return self._decr_every_n_nan_or_inf

    def set_decr_every_n_nan_or_inf(self, v):
        """Set the non-finite steps in a row before shrinking.

        Args:
            v (int): the new value.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> net = fw.nn.Linear(2, 1)
            >>> opt = fw.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
            >>> scaler = fw.amp.GradScaler(init_loss_scaling=1024.0, incr_every_n_steps=2)
            >>> scaler.set_decr_every_n_nan_or_inf(3)
            >>> scaler.get_decr_every_n_nan_or_inf()
            3
        """
        self._decr_every_n_nan_or_inf = int(v)

    # ------------------------------------------------------------ scaling
    def scale(self, var):
        """The loss multiplied by the current scale: call ``backward()`` on it.

        Args:
            var (Tensor): the loss.

        Returns:
            Tensor, ``var * scale`` (`var` itself when the scaler is disabled).

        Examples:
            >>> import fw
            >>> net = fw.nn.Linear(2, 1)
            >>> opt = fw.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
            >>> scaler = fw.amp.GradScaler(init_loss_scaling=1024.0, incr_every_n_steps=2)
            >>> float(scaler.scale(fw.to_tensor(0.5)))
            512.0
        """
        if not self._enable:
            return var
        if not isinstance(var, Tensor):
            raise TypeError(f"GradScaler.scale: expected a Tensor, got {type(var).__name__}")
        return var * self._scale

    def unscale_(self, optimizer):
        """Divide the gradients of `optimizer`'s parameters by the scale, in place, and
        record whether any is inf/NaN. `step` and `minimize` call it when it was not called
        before; call it yourself to clip or inspect the unscaled gradients.

        Args:
            optimizer (Optimizer): the optimizer whose parameters' gradients to unscale.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> net = fw.nn.Linear(2, 1)
            >>> opt = fw.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
            >>> scaler = fw.amp.GradScaler(init_loss_scaling=1024.0, incr_every_n_steps=2)
            >>> loss = net(fw.ones([3, 2])).mean()
            >>> scaler.scale(loss).backward()
            >>> scaled = net.bias.grad.item()
            >>> scaler.unscale_(opt)
            >>> round(scaled / net.bias.grad.item())
            1024
        """
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
        """Unscale the gradients (unless `unscale_` did) and run ``optimizer.step()``,
        unless a gradient is inf/NaN. Call `update` afterwards.

        Args:
            optimizer (Optimizer): the optimizer.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> net = fw.nn.Linear(2, 1)
            >>> opt = fw.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
            >>> scaler = fw.amp.GradScaler(init_loss_scaling=1024.0, incr_every_n_steps=2)
            >>> loss = net(fw.ones([3, 2])).mean()
            >>> scaler.scale(loss).backward()
            >>> before = net.bias.item()
            >>> scaler.step(opt)
            >>> scaler.update()
            >>> round(before - net.bias.item(), 4)   # lr * unscaled gradient (1.0)
            0.1
        """
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
        """Adjust the scale after this iteration's steps (with dynamic scaling).

        Returns:
            None.

        Examples:
            >>> import fw
            >>> net = fw.nn.Linear(2, 1)
            >>> opt = fw.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
            >>> scaler = fw.amp.GradScaler(init_loss_scaling=1024.0, incr_every_n_steps=2)
            >>> net(fw.ones([1, 2])).sum().backward()
            >>> net.weight.grad.set_value(fw.to_tensor([[float("inf")], [0.0]]))
            Tensor(shape=[2, 1], dtype=float32, place=Place(cpu), stop_gradient=True,
                   [[inf],
                    [ 0.]])
            >>> scaler.step(opt)                  # skipped: an inf gradient
            >>> scaler.update()
            >>> scaler.get_loss_scaling()         # halved
            512.0
        """
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
        """`step` then `update` in one call (Paddle's form).

        Args:
            optimizer (Optimizer): the optimizer.
            *args: passed to ``optimizer.minimize``.
            **kwargs: passed to ``optimizer.minimize``.

        Returns:
            tuple, what ``optimizer.minimize`` returns; None when the step was skipped.

        Examples:
            >>> import fw
            >>> net = fw.nn.Linear(2, 1)
            >>> opt = fw.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
            >>> scaler = fw.amp.GradScaler(init_loss_scaling=1024.0, incr_every_n_steps=2)
            >>> loss = net(fw.ones([3, 2])).mean()
            >>> scaler.scale(loss).backward()
            >>> _ = scaler.minimize(opt, loss)
            >>> opt.clear_grad()
            >>> scaler.get_loss_scaling()
            1024.0
        """
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
        """The scaler's state as plain Python numbers (empty when disabled); save it with
        the optimizer's to resume.

        Returns:
            dict, the scale, the ratios and the step counters.

        Examples:
            >>> import fw
            >>> net = fw.nn.Linear(2, 1)
            >>> opt = fw.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
            >>> scaler = fw.amp.GradScaler(init_loss_scaling=1024.0, incr_every_n_steps=2)
            >>> state = scaler.state_dict()
            >>> state["scale"], state["incr_every_n_steps"]
            (1024.0, 2)
        """
        if not self._enable:
            return {}
        return {"scale": self._scale, "incr_ratio": self._incr_ratio,
                "decr_ratio": self._decr_ratio, "incr_every_n_steps": self._incr_every_n_steps,
                "decr_every_n_nan_or_inf": self._decr_every_n_nan_or_inf,
                "incr_count": self._incr_count, "decr_count": self._decr_count,
                "use_dynamic_loss_scaling": self._use_dynamic_loss_scaling}

    def load_state_dict(self, state_dict):
        """Restore a state saved by `state_dict`.

        Args:
            state_dict (dict): what `state_dict` returned.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> net = fw.nn.Linear(2, 1)
            >>> opt = fw.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
            >>> scaler = fw.amp.GradScaler(init_loss_scaling=1024.0, incr_every_n_steps=2)
            >>> other = fw.amp.GradScaler()
            >>> other.load_state_dict(scaler.state_dict())
            >>> other.get_loss_scaling()
            1024.0
        """
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
