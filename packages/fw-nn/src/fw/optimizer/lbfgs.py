"""LBFGS (Paddle's ``paddle.optimizer.LBFGS``): limited-memory BFGS with an optional
strong-Wolfe line search.

The algorithm is the one of Nocedal & Wright, "Numerical Optimization" (2nd ed.):
the two-loop recursion (Algorithm 7.4) over the last ``history_size`` curvature pairs,
and the line search of Algorithms 3.5/3.6 with safeguarded cubic interpolation. Its
control flow (first step scaled by ``min(1, 1/|g|_1)``, the stopping tests, the curvature
condition ``y.s > 1e-10``) follows Paddle's and PyTorch's LBFGS so results agree with
them. The parameters are handled as one flat NumPy vector in their dtype; the closure
(which re-evaluates the model and calls ``backward``) is the only fw code it runs.
"""

from __future__ import annotations

import numpy as np

from fw.core.tensor import Tensor
from fw.optimizer.optimizer import Optimizer, _as_float

__all__ = ["LBFGS"]


def _cubic_min(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), clamped to
    `bounds` (default: the interval between x1 and x2); the midpoint when the cubic
    has no real minimiser (Nocedal & Wright eq. 3.59)."""
    lo, hi = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    disc = d1 * d1 - g1 * g2
    if disc < 0:
        return (lo + hi) / 2.0
    d2 = disc ** 0.5
    if x1 <= x2:
        x = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        x = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(x, lo), hi)


def _strong_wolfe(evaluate, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                  max_ls=25):
    """Find a step t along d meeting the strong Wolfe conditions. `evaluate(t)` returns
    (loss, flat grad) at x + t d. Returns (loss, grad, t, evaluations)."""
    d_norm = float(np.abs(d).max())
    f_new, g_new = evaluate(t)
    evals = 1
    gtd_new = float(g_new @ d)
    t_prev, f_prev, g_prev, gtd_prev = 0.0, f, g, gtd
    done = False
    it = 0
    # bracketing phase (Algorithm 3.5)
    while it < max_ls:
        if f_new > f + c1 * t * gtd or (it > 1 and f_new >= f_prev):
            br, br_f, br_g, br_gtd = [t_prev, t], [f_prev, f_new], [g_prev, g_new], \
                [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            br, br_f, br_g, br_gtd = [t], [f_new], [g_new], [gtd_new]
            done = True
            break
        if gtd_new >= 0:
            br, br_f, br_g, br_gtd = [t_prev, t], [f_prev, f_new], [g_prev, g_new], \
                [gtd_prev, gtd_new]
            break
        # extrapolate: a cubic step inside [t + 0.01 (t - t_prev), 10 t]
        nxt = _cubic_min(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                         bounds=(t + 0.01 * (t - t_prev), t * 10))
        t_prev, f_prev, g_prev, gtd_prev = t, f_new, g_new, gtd_new
        t = nxt
        f_new, g_new = evaluate(t)
        evals += 1
        gtd_new = float(g_new @ d)
        it += 1
    if it == max_ls:
        br, br_f, br_g, br_gtd = [0.0, t], [f, f_new], [g, g_new], [gtd, gtd_new]
    # zoom phase (Algorithm 3.6)
    insufficient = False
    lo, hi = (0, 1) if br_f[0] <= br_f[-1] else (1, 0)
    while not done and it < max_ls:
        if abs(br[1] - br[0]) * d_norm < tolerance_change:
            break
        t = _cubic_min(br[0], br_f[0], br_gtd[0], br[1], br_f[1], br_gtd[1])
        # keep away from the bracket ends: a step too close to one makes no progress
        eps = 0.1 * (max(br) - min(br))
        if min(max(br) - t, t - min(br)) < eps:
            if insufficient or t >= max(br) or t <= min(br):
                t = max(br) - eps if abs(t - max(br)) < abs(t - min(br)) else min(br) + eps
                insufficient = False
            else:
                insufficient = True
        else:
            insufficient = False
        f_new, g_new = evaluate(t)
        evals += 1
        gtd_new = float(g_new @ d)
        it += 1
        if f_new > f + c1 * t * gtd or f_new >= br_f[lo]:
            br[hi], br_f[hi], br_g[hi], br_gtd[hi] = t, f_new, g_new, gtd_new
            lo, hi = (0, 1) if br_f[0] <= br_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (br[hi] - br[lo]) >= 0:
                br[hi], br_f[hi], br_g[hi], br_gtd[hi] = br[lo], br_f[lo], br_g[lo], br_gtd[lo]
            br[lo], br_f[lo], br_g[lo], br_gtd[lo] = t, f_new, g_new, gtd_new
    return br_f[lo], br_g[lo], br[lo], evals


class LBFGS(Optimizer):
    r"""L-BFGS: a quasi-Newton method that approximates the inverse Hessian from the last
    ``history_size`` steps and gradient differences. Each `step(closure)` runs up to
    ``max_iter`` iterations, calling ``closure`` (which clears the gradients, computes
    the loss, calls ``backward`` and returns the loss) as often as it needs.

    Args:
        learning_rate (float, optional): the step length (the line search's first
            trial step). Default 1.0.
        max_iter (int, optional): iterations per `step`. Default 20.
        max_eval (int, optional): closure evaluations per `step`. Default
            ``max_iter * 5 // 4``.
        tolerance_grad (float, optional): stop when the largest gradient element is at
            most this. Default 1e-7.
        tolerance_change (float, optional): stop when the step or the loss change is
            below this. Default 1e-9.
        history_size (int, optional): the number of curvature pairs kept. Default 100.
        line_search_fn (str, optional): None (fixed steps) or 'strong_wolfe'.
        parameters (list, optional): the parameters (one group).
        weight_decay, grad_clip: accepted as Paddle does; Paddle's LBFGS does not apply
            them, and neither does this one (put a penalty into the closure's loss).
        name (str, optional): a name. Default None.

    Returns from `step`: the closure's first loss of that step.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> w = fw.create_parameter([2], "float32")
            >>> opt = fw.optimizer.LBFGS(parameters=[w], line_search_fn="strong_wolfe")
            >>> def closure():
            ...     opt.clear_grad()
            ...     loss = ((w - fw.to_tensor([1.0, -2.0])) ** 2).sum()
            ...     loss.backward()
            ...     return loss
            >>> _ = opt.step(closure)
            >>> [round(v, 4) for v in w.tolist()]
            [1.0, -2.0]
    """

    def __init__(self, learning_rate=1.0, max_iter=20, max_eval=None, tolerance_grad=1e-7,
                 tolerance_change=1e-9, history_size=100, line_search_fn=None, parameters=None,
                 weight_decay=None, grad_clip=None, name=None):
        if isinstance(parameters, Tensor):
            raise TypeError("LBFGS: 'parameters' must be a list of Tensors or of parameter-"
                            "group dicts, not a single Tensor")
        if parameters is None:
            raise ValueError("LBFGS: 'parameters' is required (pass model.parameters())")
        for v, n in ((max_iter, "max_iter"), (history_size, "history_size")):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"LBFGS: '{n}' must be a positive int, got {v!r}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        if line_search_fn not in (None, "strong_wolfe"):
            raise ValueError(f"LBFGS: line_search_fn must be None or 'strong_wolfe', got "
                             f"{line_search_fn!r}")
        self.learning_rate = _as_float(learning_rate, "LBFGS: 'learning_rate'")
        self.max_iter = max_iter
        self.max_eval = int(max_eval)
        self.tolerance_grad = _as_float(tolerance_grad, "LBFGS: 'tolerance_grad'")
        self.tolerance_change = _as_float(tolerance_change, "LBFGS: 'tolerance_change'")
        self.history_size = history_size
        self.line_search_fn = line_search_fn
        self.state = {}
        super().__init__(1.0, parameters, weight_decay, grad_clip, name)
        self._params = list(self._parameter_list)
        dts = {p.dtype for p in self._params}
        if len(dts) != 1:
            raise TypeError(f"LBFGS: all parameters must share one dtype, got "
                            f"{sorted(str(d) for d in dts)}")

    # ------------------------------------------------------------ flat views
    def _flat_params(self):
        return np.concatenate([np.asarray(p.numpy(), dtype=self._np_dtype()).reshape(-1)
                               for p in self._params])

    def _np_dtype(self):
        return np.dtype(self._params[0].numpy().dtype)

    def _flat_grad(self):
        parts = []
        for p in self._params:
            g = p.grad
            parts.append(np.zeros(int(np.prod(p.shape)) if p.shape else 1, self._np_dtype())
                         if g is None else np.asarray(g.numpy()).reshape(-1))
        return np.concatenate(parts).astype(self._np_dtype(), copy=False)

    def _set_flat(self, x):
        off = 0
        for p in self._params:
            n = int(np.prod(p.shape)) if p.shape else 1
            p.set_value(x[off:off + n].reshape(p.shape).astype(p.numpy().dtype))
            off += n

    def _eval(self, closure):
        import fw

        with fw.enable_grad():
            loss = closure()
        if not isinstance(loss, Tensor) and not isinstance(loss, (int, float)):
            raise TypeError(f"LBFGS.step: the closure must return the loss (a Tensor), got "
                            f"{type(loss).__name__}")
        return loss

    # ------------------------------------------------------------ the step
    def step(self, closure):
        """Run up to ``max_iter`` L-BFGS iterations.

        Args:
            closure (callable): re-evaluates the model: clears the gradients, computes the
                loss, calls ``backward`` on it and returns it.

        Returns:
            Tensor, the loss the closure returned first.

        Examples:
            >>> import fw
            >>> w = fw.create_parameter([2], "float32")
            >>> opt = fw.optimizer.LBFGS(parameters=[w], line_search_fn="strong_wolfe")
            >>> def closure():
            ...     opt.clear_grad()
            ...     loss = ((w - fw.to_tensor([1.0, -2.0])) ** 2).sum()
            ...     loss.backward()
            ...     return loss
            >>> first = opt.step(closure)
            >>> [round(v, 4) for v in w.tolist()], round(float(closure()), 6)
            ([1.0, -2.0], 0.0)
        """
        if closure is None or not callable(closure):
            raise TypeError("LBFGS.step needs a closure that computes the loss, calls "
                            "backward and returns the loss")
        import fw

        with fw.no_grad():
            return self._step(closure)

    def _step(self, closure):
        st = self.state
        st.setdefault("func_evals", 0)
        st.setdefault("n_iter", 0)
        lr, tol_g, tol_c = self.learning_rate, self.tolerance_grad, self.tolerance_change
        dt = self._np_dtype()
        orig_loss = self._eval(closure)
        loss = float(orig_loss)
        evals = 1
        st["func_evals"] += 1
        g = self._flat_grad()
        if np.abs(g).max() <= tol_g:
            return orig_loss
        d, t = st.get("d"), st.get("alpha")
        old_yk, old_sk, ro = st.get("old_yk"), st.get("old_sk"), st.get("ro")
        H_diag, prev_g, prev_loss = st.get("H_diag"), st.get("prev_flat_grad"), \
            st.get("prev_loss")
        n_iter = 0
        while n_iter < self.max_iter:
            n_iter += 1
            st["n_iter"] += 1
            if st["n_iter"] == 1:
                d = -g
                old_yk, old_sk, ro = [], [], []
                H_diag = 1.0
            else:
                y = g - prev_g
                s = d * dt.type(t)
                ys = float(y @ s)
                if ys > 1e-10:  # keep only pairs with positive curvature
                    if len(old_yk) == self.history_size:
                        old_yk.pop(0)
                        old_sk.pop(0)
                        ro.pop(0)
                    old_yk.append(y)
                    old_sk.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / float(y @ y)
                # two-loop recursion: d = -H g
                al = [0.0] * len(old_yk)
                q = -g
                for i in range(len(old_yk) - 1, -1, -1):
                    al[i] = float(old_sk[i] @ q) * ro[i]
                    q = q - dt.type(al[i]) * old_yk[i]
                r = q * dt.type(H_diag)
                for i in range(len(old_yk)):
                    be = float(old_yk[i] @ r) * ro[i]
                    r = r + dt.type(al[i] - be) * old_sk[i]
                d = r
                st["al"] = al
            prev_g = g.copy()
            prev_loss = loss
            t = min(1.0, 1.0 / float(np.abs(g).sum())) * lr if st["n_iter"] == 1 else lr
            gtd = float(g @ d)
            if gtd > -tol_c:  # not a descent direction
                break
            ls_evals = 0
            if self.line_search_fn == "strong_wolfe":
                x0 = self._flat_params()

                def evaluate(step, x0=x0, d=d):
                    self._set_flat(x0 + dt.type(step) * d)
                    f = float(self._eval(closure))
                    gr = self._flat_grad()
                    self._set_flat(x0)
                    return f, gr

                loss, g, t, ls_evals = _strong_wolfe(evaluate, t, d, loss, g, gtd,
                                                     tolerance_change=tol_c)
                self._set_flat(x0 + dt.type(t) * d)
                opt_cond = np.abs(g).max() <= tol_g
            else:
                self._set_flat(self._flat_params() + dt.type(t) * d)
                opt_cond = False
                if n_iter != self.max_iter:
                    # a fixed step: re-evaluate for the next iteration's gradient
                    loss = float(self._eval(closure))
                    g = self._flat_grad()
                    opt_cond = np.abs(g).max() <= tol_g
                    ls_evals = 1
            evals += ls_evals
            st["func_evals"] += ls_evals
            if opt_cond:
                break
            if np.abs(d * dt.type(t)).max() <= tol_c:
                break
            if abs(loss - prev_loss) < tol_c:
                break
            if evals >= self.max_eval or n_iter == self.max_iter:
                break
        st.update({"d": d, "alpha": t, "old_yk": old_yk, "old_sk": old_sk, "ro": ro,
                   "H_diag": H_diag, "prev_flat_grad": prev_g, "prev_loss": prev_loss})
        return orig_loss

    # ------------------------------------------------------------ state
    def state_dict(self):
        """The iteration counters and the curvature history (as Tensors) under
        ``"state"``, as Paddle's LBFGS returns them.

        Returns:
            dict, ``{"state": {...}}``.

        Examples:
            >>> import fw
            >>> w = fw.create_parameter([2], "float32")
            >>> opt = fw.optimizer.LBFGS(parameters=[w], line_search_fn="strong_wolfe")
            >>> def closure():
            ...     opt.clear_grad()
            ...     loss = ((w - fw.to_tensor([1.0, -2.0])) ** 2).sum()
            ...     loss.backward()
            ...     return loss
            >>> _ = opt.step(closure)
            >>> sorted(opt.state_dict()["state"])[:3]
            ['H_diag', 'al', 'alpha']
        """
        import fw

        def conv(v):
            if isinstance(v, np.ndarray):
                return fw.to_tensor(v)
            if isinstance(v, list):
                return [conv(x) for x in v]
            return v

        return {"state": {k: conv(v) for k, v in self.state.items()}}

    def set_state_dict(self, state_dict):
        """Restore what `state_dict` returned.

        Args:
            state_dict (dict): ``{"state": {...}}`` from `state_dict`.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> w = fw.create_parameter([2], "float32")
            >>> opt = fw.optimizer.LBFGS(parameters=[w], line_search_fn="strong_wolfe")
            >>> def closure():
            ...     opt.clear_grad()
            ...     loss = ((w - fw.to_tensor([1.0, -2.0])) ** 2).sum()
            ...     loss.backward()
            ...     return loss
            >>> _ = opt.step(closure)
            >>> twin = fw.optimizer.LBFGS(parameters=[w], line_search_fn="strong_wolfe")
            >>> twin.set_state_dict(opt.state_dict())
            >>> twin.state_dict()["state"]["n_iter"] == opt.state_dict()["state"]["n_iter"]
            True
        """
        st = state_dict.get("state", state_dict)

        def conv(v):
            if isinstance(v, Tensor):
                return np.asarray(v.numpy())
            if isinstance(v, list):
                return [conv(x) for x in v]
            return v

        self.state = {k: conv(v) for k, v in st.items()}

    def minimize(self, loss, startup_program=None, parameters=None, no_grad_set=None):
        """Not supported: L-BFGS needs to re-evaluate the loss, so it takes a closure
        (`step`), not a loss tensor. Raises NotImplementedError saying so.

        Args:
            loss (Tensor): unused.
            startup_program (Program, optional): unused. Default: None.
            parameters (list, optional): unused. Default: None.
            no_grad_set (set, optional): unused. Default: None.

        Returns:
            None; always raises.

        Examples:
            >>> import fw
            >>> w = fw.create_parameter([2], "float32")
            >>> opt = fw.optimizer.LBFGS(parameters=[w])
            >>> try:
            ...     opt.minimize((w * w).sum())
            ... except NotImplementedError as e:
            ...     print(e)
            LBFGS does not minimize a loss tensor: call opt.step(closure) with a closure
            that recomputes the loss
        """
        raise NotImplementedError("LBFGS does not minimize a loss tensor: call "
                               "opt.step(closure) with a closure that recomputes the loss")
