"""Loss ops: the losses of ``paddle.nn.functional`` whose fusion matters or that are not a
short composition of other ops (``mse_loss``, ``l1_loss`` and the like are fw-nn
composites). ``reduction`` is ``"none"``, ``"mean"`` or ``"sum"``; a reduced loss is a 0-D
tensor in the input's dtype.

``cross_entropy_with_softmax(logits, label, weight?) -> (loss, softmax)``
    Attributes ``soft_label=False, ignore_index=-100, reduction="mean", axis=-1,
    use_softmax=True``. ``logp = log_softmax(logits, axis)`` (``log(logits)`` when
    ``use_softmax`` is False: the input already holds probabilities); ``softmax`` is
    ``exp(logp)`` (the input itself without softmax), returned for the backward pass.

    - hard labels: integer label of logits' shape with ``axis`` of size 1, or with
      ``axis`` removed. ``loss = -logp[label]``, 0 where ``label == ignore_index``; other
      labels outside ``[0, C)`` are an error. With ``weight`` ([C]) the loss is multiplied
      by ``weight[label]`` (0 for ignored entries).
    - soft labels: a float label of logits' shape: ``loss = -sum(label * logp, axis)``;
      with weight multiplied by ``sum(label * weight, axis)``.
    - ``"none"``: the per-sample loss in the label's shape (hard) or logits' shape with
      ``axis`` of size 1 (soft). ``"sum"``: its sum. ``"mean"`` (Paddle's rule): with
      weight, ``sum(loss) / sum(per-sample weights)``; without weight and with hard labels
      and ``ignore_index >= 0``, ``sum(loss) / count(label != ignore_index)``; otherwise the
      plain mean over all samples (ignored samples count, as in Paddle). A zero denominator
      is replaced by 1. Label smoothing is fw-nn's (it makes soft labels).
``nll_loss(input, label, weight?)`` -- ``ignore_index=-100, reduction="mean"``
    input ``[N, C, *d]`` log-probabilities, label ``[N, *d]`` ints:
    ``loss = -weight[label] * input[n, label, ...]``, 0 where ignored; ``"mean"`` divides
    the sum by the sum of the weights of the non-ignored samples (1 if that is 0).
``binary_cross_entropy(input, label, weight?)`` -- ``reduction="mean"``
    ``-weight * (label * max(log(input), -100) + (1 - label) * max(log(1 - input), -100))``;
    input must lie in [0, 1]; weight broadcasts; ``"mean"`` over all elements.
``binary_cross_entropy_with_logits(logit, label, weight?, pos_weight?)`` --
    ``reduction="mean"``: ``((1 - label)*x + (1 + (pos_weight - 1)*label) * softplus(-x)) *
    weight``, i.e. ``-weight * (pos_weight*label*log(sigmoid(x)) + (1 - label)*log(1 -
    sigmoid(x)))``: pos_weight scales only the label (positive) term, as Paddle 3.x's kernel
    and PyTorch do (Paddle 2.4 scaled the whole term; the two differ for soft labels).
``kl_div(input, label)`` -- ``reduction="mean", log_target=False``
    ``label * (log(label) - input)`` (0 where label <= 0); with ``log_target``
    ``exp(label) * (label - input)``. ``"batchmean"``: the sum divided by ``input.shape[0]``.
``smooth_l1_loss(input, label)`` -- ``reduction="mean", delta=1.0``
    Paddle's (Huber) form: ``0.5 * d^2`` if ``|d| < delta`` else ``delta * |d| - 0.5 *
    delta^2`` with ``d = input - label``.
``margin_ranking_loss(input, other, label)`` -- ``margin=0.0, reduction="mean"``
    ``max(0, -label * (input - other) + margin)`` (broadcast).
``sigmoid_focal_loss(logit, label, normalizer?)`` -- ``alpha=0.25, gamma=2.0,
    reduction="sum"``: ``alpha_t * bce_with_logits * (1 - p_t)^gamma / normalizer`` with
    ``p = sigmoid(logit)``, ``p_t = p*label + (1-p)*(1-label)``, ``alpha_t = alpha*label +
    (1-alpha)*(1-label)``.
``ctc_loss(logits, labels, input_lengths, label_lengths) -> (loss, grad)`` --
    ``blank=0, norm_by_times=False``. logits ``[T, B, C]`` are unnormalised (softmax is
    applied inside, as Paddle's warp-ctc does); labels ``[B, L_max]`` ints (padded);
    lengths ``[B]``. ``loss[b] = -log p(labels[b, :label_lengths[b]] | logits[:T_b, b])``
    by the standard forward (alpha) recursion over the blank-interleaved label sequence,
    vectorised over batch and label positions. ``grad`` ``[T, B, C]`` is d loss[b] / d
    logits (softmax minus the label occupancy, from the alpha-beta recursion), zero past
    ``input_lengths[b]`` and for infeasible samples (loss inf), divided by ``T_b`` when
    ``norm_by_times`` -- the VJP is ``grad * g[None, :, None]``; ``grad`` itself is not
    differentiable. Paddle's reduction (``"mean"``: mean of ``loss / label_lengths``) is
    done by fw-nn.
``hsigmoid_loss(input, label, weight, bias?, path_table?, path_code?)`` --
    ``num_classes``: hierarchical sigmoid, ``[N, 1]``. Without a custom tree, class ``y``
    uses code ``c = y + num_classes``: for ``j < floor(log2 c)`` the node ``(c >> (j+1)) - 1``
    with bit ``(c >> j) & 1``; with ``path_table``/``path_code`` ([N, L], table entries < 0
    end the path) the given nodes and bits. ``pre = clip(input @ weight[node] + bias[node],
    -40, 40)``; ``loss = sum_j log(1 + exp(pre_j)) - bit_j * pre_j``. weight is
    ``[num_classes - 1, D]``, bias ``[num_classes - 1, 1]``. As in Paddle's kernel, each
    slot past the end of a path (paths are padded to ``bit_length(num_classes - 1)`` slots,
    or to path_table's width) adds ``log(2)``.
"""

from __future__ import annotations

import numpy as np

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ir.types import DYN, TensorType
from fw.core.ops._infer import broadcast_shapes, norm_axis, require_int, shp
from fw.core.ops._registry import defop
from fw.core.ops.activation import (
    arr,
    down,
    log_softmax_np,
    require_real_float,
    sigmoid_np,
    softplus_np,
    up,
)

__all__ = []

_REDUCTIONS = ("none", "mean", "sum")


def _known(*ds):
    return all(d != DYN for d in ds)


def _types_of(*arrays):
    return [None if a is None else TensorType(a.shape, _dt.from_numpy(a.dtype)) for a in arrays]


def _reduction_canon(allowed=_REDUCTIONS, floats=(), ints=(), bools=()):
    def canon(attrs):
        a = dict(attrs)
        r = a["reduction"]
        if r not in allowed:
            raise InvalidArgumentError(f"'reduction' must be one of {list(allowed)}, got {r!r}")
        for k in floats:
            v = a[k]
            a[k] = float(v.item() if hasattr(v, "item") else v)
        for k in ints:
            v = a[k]
            v = v.item() if hasattr(v, "item") else v
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise InvalidTypeError(f"'{k}' must be an int, got {v!r}")
            a[k] = int(v)
        for k in bools:
            a[k] = bool(a[k])
        return a

    return canon


def _reduce(loss, reduction, dtype):
    if reduction == "none":
        return down(loss, dtype)
    s = np.add.reduce(loss, axis=None)
    if reduction == "mean":
        s = s / loss.dtype.type(loss.size)  # 0/0 = NaN for an empty batch, without a warning
    return down(arr(s, loss.dtype), dtype)


def _reduced_type(shape, dtype, reduction):
    return TensorType(shape if reduction == "none" else (), dtype)


def _same_shape(a, b, an, bn):
    if len(a.shape) != len(b.shape) or any(x != y and _known(x, y)
                                           for x, y in zip(a.shape, b.shape)):
        raise InvalidArgumentError(f"'{an}' {shp(a.shape)} and '{bn}' {shp(b.shape)} must have "
                                   f"one shape")


# ---------------------------------------------------------------- cross entropy
def _ce_layout(logits, label, soft_label, axis):
    """-> (axis, label has the axis dim)."""
    nd = len(logits.shape)
    if nd == 0:
        raise InvalidArgumentError("logits must have at least one dimension (the classes)")
    ax = norm_axis(axis, nd)
    if soft_label:
        require_real_float(label, "label")
        _same_shape(logits, label, "logits", "label")
        return ax, True
    require_int(label, "label")
    ls = tuple(label.shape)
    want_keep = tuple(logits.shape[:ax]) + (1,) + tuple(logits.shape[ax + 1:])
    want_drop = tuple(logits.shape[:ax]) + tuple(logits.shape[ax + 1:])

    def fits(want):
        return len(ls) == len(want) and all(a == b or not _known(a, b) for a, b in zip(ls, want))

    if len(ls) == nd and fits(want_keep):
        return ax, True
    if len(ls) == nd - 1 and fits(want_drop):
        return ax, False
    raise InvalidArgumentError(f"hard label {shp(ls)} must have logits' shape {shp(logits.shape)}"
                               f" with axis {axis} of size 1 ({shp(want_keep)}) or removed "
                               f"({shp(want_drop)})")


def _ce_infer(logits, label, weight=None, soft_label=False, ignore_index=-100,
              reduction="mean", axis=-1, use_softmax=True):
    require_real_float(logits, "logits")
    ax, keep = _ce_layout(logits, label, soft_label, axis)
    if weight is not None:
        require_real_float(weight, "weight")
        c = logits.shape[ax]
        if len(weight.shape) != 1 or _known(c, weight.shape[0]) and weight.shape[0] != c:
            raise InvalidArgumentError(f"weight {shp(weight.shape)} must be [{c}] (one per class)")
    if soft_label:
        per = tuple(logits.shape[:ax]) + (1,) + tuple(logits.shape[ax + 1:])
    else:
        per = tuple(label.shape)
    return _reduced_type(per, logits.dtype, reduction), logits


def hard_labels(label, keep, ax, c, ignore_index):
    """(ignored mask, class indices safe to gather with: 0 where ignored, the mask of
    bad labels or None) of hard labels of a cross entropy over `c` classes along `ax`
    (`keep`: label has the class axis, of size 1); a label that is neither a class
    nor ignore_index is an error on the host, and NaN losses on a device."""
    lab = label if keep else np.expand_dims(label, ax)
    ignored = lab == ignore_index
    bad = ~ignored & ((lab < 0) | (lab >= c))
    if type(bad) is not np.ndarray:
        # on a device, testing `bad` would wait for the GPU on every step (and a CUDA
        # graph cannot be captured around it): the caller makes the losses and
        # gradients of out-of-range labels NaN instead (`poison_bad_labels`)
        return ignored, np.where(ignored | bad, 0, lab).astype(np.intp), bad
    if bad.any():
        v = lab[bad].reshape(-1)[0]
        raise InvalidArgumentError(f"label value {int(v)} is out of range for {c} classes "
                                   f"(and is not ignore_index={ignore_index})")
    return ignored, np.where(ignored, 0, lab).astype(np.intp), None


def poison_bad_labels(values, bad):
    """`values` with NaN where `bad` (out-of-range labels found on a device, see
    `hard_labels`); `values` itself when there are none to mark."""
    if bad is None:
        return values
    return np.where(bad, values.dtype.type(np.nan), values)


def _ce_ref(logits, label, weight=None, soft_label=False, ignore_index=-100, reduction="mean",
            axis=-1, use_softmax=True):
    _ce_infer(*_types_of(logits, label, weight), soft_label=soft_label, axis=axis)
    ax, keep = _ce_layout(*_types_of(logits, label), soft_label, axis)
    x = up(logits)
    logp = log_softmax_np(x, ax) if use_softmax else np.log(x)
    sm = np.exp(logp) if use_softmax else x
    c = logits.shape[ax]
    w = None if weight is None else up(weight).astype(x.dtype)
    wshape = [1] * x.ndim
    wshape[ax] = c
    if soft_label:
        lab = up(label).astype(x.dtype)
        loss = -np.add.reduce(lab * logp, axis=ax, keepdims=True)
        per_w = None if w is None else np.add.reduce(lab * w.reshape(wshape), axis=ax,
                                                     keepdims=True)
    else:
        ignored, safe, bad = hard_labels(label, keep, ax, c, ignore_index)
        loss = poison_bad_labels(np.where(ignored, 0, -np.take_along_axis(logp, safe, axis=ax)),
                                 bad)
        per_w = None if w is None else np.where(ignored, 0, w[safe])
        if not keep:
            loss = np.squeeze(loss, ax)
            ignored = np.squeeze(ignored, ax)
            per_w = None if per_w is None else np.squeeze(per_w, ax)
    loss = arr(loss, x.dtype)
    if per_w is not None:
        loss = loss * per_w
    if reduction == "mean":
        total = np.add.reduce(loss, axis=None)
        if per_w is not None:
            den = np.add.reduce(per_w, axis=None)
        elif not soft_label and ignore_index >= 0:
            # a reduction, not np.count_nonzero: on a device that is a 0-d device array,
            # which x.dtype.type() cannot read (GPU run 1); the gradient counts the same way
            den = np.sum(~ignored, dtype=x.dtype)
        else:
            den = x.dtype.type(loss.size)
        # the guard reads den on the host (one sync, as GPU run 1 verified for the weighted
        # case); np.where(den != 0, den, np.float32(1)) would mix a host 0-d array in
        out = total / (den if den != 0 else x.dtype.type(1))
        out = down(arr(out, x.dtype), logits.dtype)
    else:
        out = _reduce(loss, reduction, logits.dtype)
    return out, down(sm, logits.dtype)


_ce_canon = _reduction_canon(ints=("ignore_index", "axis"), bools=("soft_label", "use_softmax"))
defop("cross_entropy_with_softmax", ("logits", "label", "weight?"),
      {"soft_label": False, "ignore_index": -100, "reduction": "mean", "axis": -1,
       "use_softmax": True},
      outputs=("loss", "softmax"), infer=_ce_infer, reference=_ce_ref, canon=_ce_canon,
      promote=(0, 2), to_float=True, family="loss", api=False, method=False,
      doc="Softmax cross entropy with hard or soft labels, class weights, ignore_index and "
          "Paddle's reductions; also returns the softmax. See fw.core.ops.loss.")


# ---------------------------------------------------------------- nll_loss
def _nll_infer(input, label, weight=None, ignore_index=-100, reduction="mean"):  # noqa: A002
    require_real_float(input, "input")
    require_int(label, "label")
    s = input.shape
    if len(s) < 2:
        raise InvalidArgumentError(f"input must be [N, C, ...], got {shp(s)}")
    want = (s[0],) + tuple(s[2:])
    ls = tuple(label.shape)
    if len(ls) != len(want) or any(a != b and _known(a, b) for a, b in zip(ls, want)):
        raise InvalidArgumentError(f"label {shp(ls)} must be {shp(want)} for input {shp(s)}")
    if weight is not None:
        require_real_float(weight, "weight")
        if len(weight.shape) != 1 or _known(s[1], weight.shape[0]) and weight.shape[0] != s[1]:
            raise InvalidArgumentError(f"weight {shp(weight.shape)} must be [{s[1]}]")
    return _reduced_type(ls, input.dtype, reduction)


def _nll_ref(input, label, weight=None, ignore_index=-100, reduction="mean"):  # noqa: A002
    _nll_infer(*_types_of(input, label, weight), ignore_index, reduction)
    x = up(input)
    c = x.shape[1]
    ignored = label == ignore_index
    bad = ~ignored & ((label < 0) | (label >= c))
    if bad.any():
        raise InvalidArgumentError(f"label value {int(label[bad].reshape(-1)[0])} is out of "
                                   f"range for {c} classes")
    safe = np.where(ignored, 0, label).astype(np.intp)
    picked = np.take_along_axis(x, np.expand_dims(safe, 1), axis=1)[:, 0]
    w = np.ones_like(x, shape=(c,)) if weight is None else up(weight).astype(x.dtype)
    per_w = np.where(ignored, 0, w[safe]).astype(x.dtype)
    loss = -picked * per_w
    if reduction == "mean":
        den = np.add.reduce(per_w, axis=None)
        out = np.add.reduce(loss, axis=None) / (den if den != 0 else x.dtype.type(1))
        return down(arr(out, x.dtype), input.dtype)
    return _reduce(loss, reduction, input.dtype)


defop("nll_loss", ("input", "label", "weight?"), {"ignore_index": -100, "reduction": "mean"},
      infer=_nll_infer, reference=_nll_ref, canon=_reduction_canon(ints=("ignore_index",)),
      promote=(0, 2), to_float=True, family="loss", api=False, method=False,
      doc="Negative log likelihood of log-probabilities input [N, C, ...] at integer labels.")


# ---------------------------------------------------------------- binary cross entropy
def _bce_infer(input, label, weight=None, reduction="mean"):  # noqa: A002
    require_real_float(input, "input")
    require_real_float(label, "label")
    _same_shape(input, label, "input", "label")
    if weight is not None:
        require_real_float(weight, "weight")
        broadcast_shapes(weight.shape, input.shape, names=("weight", "input"))
    return _reduced_type(input.shape, input.dtype, reduction)


def _bce_ref(input, label, weight=None, reduction="mean"):  # noqa: A002
    _bce_infer(*_types_of(input, label, weight), reduction)
    x, y = up(input), up(label).astype(up(input).dtype)
    if x.size and not (np.all(x >= 0) and np.all(x <= 1)):
        raise InvalidArgumentError("input must hold probabilities in [0, 1] (apply sigmoid "
                                   "first, or use binary_cross_entropy_with_logits)")
    loss = -(y * np.maximum(np.log(x), -100.0) + (1 - y) * np.maximum(np.log1p(-x), -100.0))
    if weight is not None:
        loss = loss * up(weight)
    return _reduce(arr(loss, x.dtype), reduction, input.dtype)


defop("binary_cross_entropy", ("input", "label", "weight?"), {"reduction": "mean"},
      infer=_bce_infer, reference=_bce_ref, canon=_reduction_canon(), to_float=True,
      family="loss", api=False, method=False,
      doc="Binary cross entropy of probabilities input against label in [0, 1].")


def _bcel_infer(logit, label, weight=None, pos_weight=None, reduction="mean"):
    require_real_float(logit, "logit")
    require_real_float(label, "label")
    _same_shape(logit, label, "logit", "label")
    for t, n in ((weight, "weight"), (pos_weight, "pos_weight")):
        if t is not None:
            require_real_float(t, n)
            broadcast_shapes(t.shape, logit.shape, names=(n, "logit"))
    return _reduced_type(logit.shape, logit.dtype, reduction)


def _bcel_ref(logit, label, weight=None, pos_weight=None, reduction="mean"):
    _bcel_infer(*_types_of(logit, label, weight, pos_weight), reduction)
    x = up(logit)
    y = up(label).astype(x.dtype)
    # softplus(-x) = -log(sigmoid(x)), computed without overflow; -log(1 - sigmoid(x)) is
    # x + softplus(-x), so the unweighted loss is (1 - y)*x + softplus(-x)
    sp = np.maximum(-x, 0) + np.log1p(np.exp(-np.abs(x)))
    if pos_weight is None:
        loss = (1 - y) * x + sp
    else:  # pos_weight multiplies only the -y*log(sigmoid(x)) term (Paddle 3.x, PyTorch)
        loss = (1 - y) * x + (1 + (up(pos_weight) - 1) * y) * sp
    if weight is not None:
        loss = loss * up(weight)
    return _reduce(arr(loss, x.dtype), reduction, logit.dtype)


defop("binary_cross_entropy_with_logits", ("logit", "label", "weight?", "pos_weight?"),
      {"reduction": "mean"}, infer=_bcel_infer, reference=_bcel_ref, canon=_reduction_canon(),
      promote=(0, 2, 3), to_float=True, family="loss", api=False, method=False,
      doc="Numerically stable sigmoid + binary cross entropy, with weight and pos_weight.")


# ---------------------------------------------------------------- kl_div / smooth_l1 / ranking
def _kl_infer(input, label, reduction="mean", log_target=False):  # noqa: A002
    require_real_float(input, "input")
    require_real_float(label, "label")
    s = broadcast_shapes(input.shape, label.shape, names=("input", "label"))
    if reduction == "batchmean" and not s:
        raise InvalidArgumentError("reduction 'batchmean' needs a batch dimension")
    return _reduced_type(s, input.dtype, reduction)


def _kl_ref(input, label, reduction="mean", log_target=False):  # noqa: A002
    _kl_infer(*_types_of(input, label), reduction, log_target)
    x = up(input)
    y = up(label).astype(x.dtype)
    if log_target:
        loss = np.exp(y) * (y - x)
    else:
        loss = np.where(y > 0, y * (np.log(np.where(y > 0, y, 1)) - x), 0)
    loss = arr(np.broadcast_to(loss, np.broadcast_shapes(x.shape, y.shape)), x.dtype)
    if reduction == "batchmean":
        s = np.add.reduce(loss, axis=None) / x.dtype.type(loss.shape[0])
        return down(arr(s, x.dtype), input.dtype)
    return _reduce(loss, reduction, input.dtype)


defop("kl_div", ("input", "label"), {"reduction": "mean", "log_target": False},
      infer=_kl_infer, reference=_kl_ref,
      canon=_reduction_canon(("none", "mean", "sum", "batchmean"), bools=("log_target",)),
      to_float=True, family="loss", api=False, method=False,
      doc="Kullback-Leibler divergence of log-probabilities input from label.")


def _sl1_infer(input, label, reduction="mean", delta=1.0):  # noqa: A002
    require_real_float(input, "input")
    require_real_float(label, "label")
    s = broadcast_shapes(input.shape, label.shape, names=("input", "label"))
    return _reduced_type(s, input.dtype, reduction)


def _sl1_ref(input, label, reduction="mean", delta=1.0):  # noqa: A002
    _sl1_infer(*_types_of(input, label), reduction, delta)
    x = up(input)
    d = np.abs(x - up(label))
    loss = np.where(d < delta, 0.5 * d * d, delta * d - 0.5 * delta * delta)
    return _reduce(arr(loss, x.dtype), reduction, input.dtype)


defop("smooth_l1_loss", ("input", "label"), {"reduction": "mean", "delta": 1.0},
      infer=_sl1_infer, reference=_sl1_ref, canon=_reduction_canon(floats=("delta",)),
      to_float=True, family="loss", api=False, method=False,
      doc="Paddle's smooth L1 (Huber) loss with threshold delta.")


def _mr_infer(input, other, label, margin=0.0, reduction="mean"):  # noqa: A002
    for t, n in ((input, "input"), (other, "other"), (label, "label")):
        require_real_float(t, n)
    s = broadcast_shapes(input.shape, other.shape, label.shape,
                         names=("input", "other", "label"))
    return _reduced_type(s, input.dtype, reduction)


def _mr_ref(input, other, label, margin=0.0, reduction="mean"):  # noqa: A002
    _mr_infer(*_types_of(input, other, label), margin, reduction)
    x = up(input)
    loss = np.maximum(-up(label) * (x - up(other)) + margin, 0)
    return _reduce(arr(loss, x.dtype), reduction, input.dtype)


defop("margin_ranking_loss", ("input", "other", "label"), {"margin": 0.0, "reduction": "mean"},
      infer=_mr_infer, reference=_mr_ref, canon=_reduction_canon(floats=("margin",)),
      to_float=True, family="loss", api=False, method=False,
      doc="max(0, -label * (input - other) + margin).")


# ---------------------------------------------------------------- sigmoid focal loss
def _focal_infer(logit, label, normalizer=None, alpha=0.25, gamma=2.0, reduction="sum"):
    require_real_float(logit, "logit")
    require_real_float(label, "label")
    _same_shape(logit, label, "logit", "label")
    if normalizer is not None:
        require_real_float(normalizer, "normalizer")
        n = 1
        for d in normalizer.shape:
            n = DYN if DYN in (n, d) else n * d
        if _known(n) and n != 1:
            raise InvalidArgumentError(f"normalizer {shp(normalizer.shape)} must hold one value")
    return _reduced_type(logit.shape, logit.dtype, reduction)


def _focal_ref(logit, label, normalizer=None, alpha=0.25, gamma=2.0, reduction="sum"):
    _focal_infer(*_types_of(logit, label, normalizer), alpha, gamma, reduction)
    x = up(logit)
    y = up(label).astype(x.dtype)
    ce = np.maximum(x, 0) - x * y + np.log1p(np.exp(-np.abs(x)))
    p = sigmoid_np(x)
    p_t = p * y + (1 - p) * (1 - y)
    alpha_t = alpha * y + (1 - alpha) * (1 - y)
    loss = alpha_t * ce * np.power(1 - p_t, gamma)
    if normalizer is not None:
        loss = loss / up(normalizer).reshape(())
    return _reduce(arr(loss, x.dtype), reduction, logit.dtype)


defop("sigmoid_focal_loss", ("logit", "label", "normalizer?"),
      {"alpha": 0.25, "gamma": 2.0, "reduction": "sum"}, infer=_focal_infer,
      reference=_focal_ref, canon=_reduction_canon(floats=("alpha", "gamma")),
      promote=(0, 1, 2), to_float=True, family="loss", api=False, method=False,
      doc="Focal loss on sigmoid logits (RetinaNet).")


# ---------------------------------------------------------------- CTC
def _ctc_infer(logits, labels, input_lengths, label_lengths, blank=0, norm_by_times=False):
    require_real_float(logits, "logits")
    for t, n in ((labels, "labels"), (input_lengths, "input_lengths"),
                 (label_lengths, "label_lengths")):
        require_int(t, n)
    if len(logits.shape) != 3 or len(labels.shape) != 2:
        raise InvalidArgumentError(f"logits {shp(logits.shape)} must be [T, B, C] and labels "
                                   f"{shp(labels.shape)} [B, max_label_length]")
    b = logits.shape[1]
    for t, n in ((labels, "labels"), (input_lengths, "input_lengths"),
                 (label_lengths, "label_lengths")):
        if _known(t.shape[0], b) and t.shape[0] != b or (n != "labels" and len(t.shape) != 1):
            raise InvalidArgumentError(f"{n} {shp(t.shape)} must have the batch size {b} of "
                                       f"logits {shp(logits.shape)} as its first dimension"
                                       + ("" if n == "labels" else " (and be 1-D)"))
    c = logits.shape[2]
    if _known(c) and not 0 <= blank < c:
        raise InvalidArgumentError(f"'blank'={blank} must be in [0, {c}) for {c} classes")
    return TensorType((b,), logits.dtype), logits


def _lse(*arrs):
    """Elementwise log-sum-exp of arrays that may hold -inf (no NaN for all -inf)."""
    m = arrs[0]
    for a in arrs[1:]:
        m = np.maximum(m, a)
    ms = np.where(np.isfinite(m), m, 0)
    s = 0
    for a in arrs:
        s = s + np.exp(a - ms)
    return np.log(s) + ms


def _shift(a, k, fill=-np.inf):
    """a[..., s - k] at position s (fill for s < k), along the last axis."""
    if k == 0:
        return a
    out = np.full_like(a, fill)
    out[..., k:] = a[..., :-k]
    return out


def _unshift(a, k, fill=-np.inf):
    """a[..., s + k] at position s (fill past the end)."""
    out = np.full_like(a, fill)
    out[..., :-k] = a[..., k:]
    return out


def _ctc_ref(logits, labels, input_lengths, label_lengths, blank=0, norm_by_times=False):
    _ctc_infer(*_types_of(logits, labels, input_lengths, label_lengths), blank, norm_by_times)
    x = up(logits)
    tmax, bsz, c = x.shape
    lmax = labels.shape[1]
    tl = input_lengths.astype(np.int64)
    ll = label_lengths.astype(np.int64)
    if bsz and (tl.min() < 0 or tl.max() > tmax or ll.min() < 0 or ll.max() > lmax):
        raise InvalidArgumentError(f"input_lengths must lie in [0, {tmax}] and label_lengths in "
                                   f"[0, {lmax}], got {tl.tolist()} and {ll.tolist()}")
    pos = np.arange(lmax)
    used = pos[None, :] < ll[:, None]
    lab = labels.astype(np.int64)
    if np.any(used & ((lab < 0) | (lab >= c) | (lab == blank))):
        raise InvalidArgumentError(f"labels must lie in [0, {c}) and differ from blank={blank}")
    lp = log_softmax_np(x, 2)  # [T, B, C]
    smax = 2 * lmax + 1
    ext = np.full((bsz, smax), blank, dtype=np.int64)
    ext[:, 1::2] = np.where(used, lab, blank)
    slen = 2 * ll + 1
    svalid = np.arange(smax)[None, :] < slen[:, None]  # [B, S]
    skip = np.zeros((bsz, smax), dtype=bool)
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    lpe = np.take_along_axis(lp, np.broadcast_to(ext[None], (tmax, bsz, smax)), axis=2)
    ninf = x.dtype.type(-np.inf)
    alpha = np.full((tmax, bsz, smax), ninf, dtype=x.dtype)
    if tmax:
        alpha[0, :, 0] = lpe[0, :, 0]
        if smax > 1:
            alpha[0, :, 1] = lpe[0, :, 1]
        alpha[0] = np.where(svalid, alpha[0], ninf)
    for t in range(1, tmax):  # the recursion over time, vectorised over batch and labels
        a = alpha[t - 1]
        a2 = np.where(skip, _shift(a, 2), ninf)
        alpha[t] = np.where(svalid, _lse(a, _shift(a, 1), a2) + lpe[t], ninf)
    bidx = np.arange(bsz)
    tlast = np.maximum(tl - 1, 0)
    a_end = alpha[tlast, bidx] if tmax else np.full((bsz, smax), ninf, dtype=x.dtype)
    last = np.take_along_axis(a_end, (slen - 1)[:, None], axis=1)[:, 0]
    prev = np.where(slen >= 2, np.take_along_axis(a_end, np.maximum(slen - 2, 0)[:, None],
                                                  axis=1)[:, 0], ninf)
    logp = _lse(last, prev)
    logp = np.where(tl > 0, logp, np.where(ll == 0, 0.0, ninf))  # T = 0: only "" is possible
    loss = -logp
    # beta (it includes lpe[t] like alpha), started at each sample's own last frame
    beta = np.full((tmax, bsz, smax), ninf, dtype=x.dtype)
    sidx = np.arange(smax)[None, :]
    end_ok = svalid & ((sidx == slen[:, None] - 1) | (sidx == slen[:, None] - 2))
    nxt = np.full((bsz, smax), ninf, dtype=x.dtype)
    for t in range(tmax - 1, -1, -1):
        rec = _lse(nxt, _unshift(nxt, 1), np.where(_unshift(skip, 2, False), _unshift(nxt, 2),
                                                   ninf)) + lpe[t]
        start = np.where(end_ok, lpe[t], ninf)
        cur = np.where((t == tl - 1)[:, None], start, np.where((t < tl - 1)[:, None], rec, ninf))
        beta[t] = np.where(svalid, cur, ninf)
        nxt = beta[t]
    # occupancy of each extended label position, summed per class: d loss / d logits
    gamma = np.exp(alpha + beta - lpe - logp[None, :, None])
    gamma = np.where(np.isfinite(gamma), gamma, 0)
    onehot = ext[:, :, None] == np.arange(c)[None, None, :]  # [B, S, C]
    occ = np.einsum("tbs,bsc->tbc", gamma, onehot.astype(x.dtype))
    live = (np.arange(tmax)[:, None] < tl[None, :]) & np.isfinite(loss)[None, :]
    grad = np.where(live[:, :, None], np.exp(lp) - occ, 0)
    if norm_by_times:
        grad = grad / np.maximum(tl, 1).astype(x.dtype)[None, :, None]
    return down(arr(loss, x.dtype), logits.dtype), \
        down(arr(grad, x.dtype), logits.dtype)


def _ctc_canon(attrs):
    b = attrs["blank"]
    b = b.item() if hasattr(b, "item") else b
    if isinstance(b, bool) or not isinstance(b, (int, np.integer)):
        raise InvalidTypeError(f"'blank' must be an int, got {b!r}")
    return {"blank": int(b), "norm_by_times": bool(attrs["norm_by_times"])}


defop("ctc_loss", ("logits", "labels", "input_lengths", "label_lengths"),
      {"blank": 0, "norm_by_times": False}, outputs=("loss", "grad"), infer=_ctc_infer,
      reference=_ctc_ref, canon=_ctc_canon, promote=(0,), to_float=True, family="loss",
      api=False, method=False,
      doc="CTC loss per sequence over softmax(logits) [T, B, C], with its gradient.")


# ---------------------------------------------------------------- hierarchical sigmoid
def _hs_canon(attrs):
    n = attrs["num_classes"]
    n = n.item() if hasattr(n, "item") else n
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
        raise InvalidArgumentError(f"'num_classes' must be an int >= 2, got {n!r}")
    return {"num_classes": int(n)}


def _hs_infer(input, label, weight, bias=None, path_table=None, path_code=None,  # noqa: A002
              num_classes=2):
    require_real_float(input, "input")
    require_real_float(weight, "weight")
    require_int(label, "label")
    if len(input.shape) != 2 or len(weight.shape) != 2:
        raise InvalidArgumentError(f"input {shp(input.shape)} must be [N, D] and weight "
                                   f"{shp(weight.shape)} [num_classes - 1, D]")
    if _known(input.shape[1], weight.shape[1]) and input.shape[1] != weight.shape[1]:
        raise InvalidArgumentError(f"input {shp(input.shape)} and weight {shp(weight.shape)} "
                                   f"must have one feature size")
    if (path_table is None) != (path_code is None):
        raise InvalidArgumentError("path_table and path_code must be given together")
    if path_table is not None:
        require_int(path_table, "path_table")
        require_int(path_code, "path_code")
        _same_shape(path_table, path_code, "path_table", "path_code")
    if bias is not None:
        require_real_float(bias, "bias")
    return TensorType((input.shape[0], 1), input.dtype)


def _hs_ref(input, label, weight, bias=None, path_table=None, path_code=None,  # noqa: A002
            num_classes=2):
    _hs_infer(*_types_of(input, label, weight, bias, path_table, path_code),
              num_classes=num_classes)
    x = up(input)
    n = x.shape[0]
    lab = label.reshape(-1).astype(np.int64)
    if lab.size != n:
        raise InvalidArgumentError(f"label {list(label.shape)} must hold one class per sample "
                                   f"({n})")
    if path_table is None:
        if n and (lab.min() < 0 or lab.max() >= num_classes):
            raise InvalidArgumentError(f"labels must lie in [0, {num_classes})")
        code = lab + num_classes
        width = (num_classes - 1).bit_length()  # Paddle's code_length for the default tree
        j = np.arange(width)
        length = np.array([int(v).bit_length() - 1 for v in code.tolist()], dtype=np.int64)
        valid = j[None, :] < length[:, None]
        node = (code[:, None] >> (j[None, :] + 1)) - 1
        bits = (code[:, None] >> j[None, :]) & 1
    else:
        node = path_table.astype(np.int64)
        bits = path_code.astype(np.int64)
        # a path ends at its first negative entry
        valid = np.cumprod(node >= 0, axis=1).astype(bool)
    node = np.where(valid, node, 0)
    if node.size and (node.max() >= weight.shape[0]):
        raise InvalidArgumentError(f"a path uses node {int(node.max())} but weight has "
                                   f"{weight.shape[0]} rows")
    w = up(weight).astype(x.dtype)
    pre = np.einsum("nd,nld->nl", x, w[node])
    if bias is not None:
        pre = pre + up(bias).astype(x.dtype).reshape(-1)[node]
    pre = np.clip(pre, -40.0, 40.0)
    # Paddle's kernel leaves 0 in the slots past a path's end and sums softplus over every
    # slot, so each of them adds log(2): reproduced so losses match Paddle's
    terms = np.where(valid, softplus_np(pre) - bits * pre, np.log(2.0))
    out = np.add.reduce(terms, axis=1, keepdims=True) if terms.shape[1] else \
        np.zeros((n, 1), x.dtype)
    return down(arr(out, x.dtype), input.dtype)


defop("hsigmoid_loss", ("input", "label", "weight", "bias?", "path_table?", "path_code?"),
      {"num_classes": 2}, infer=_hs_infer, reference=_hs_ref, canon=_hs_canon,
      promote=(0, 2, 3), to_float=True, family="loss", api=False, method=False,
      doc="Hierarchical sigmoid loss over the default complete binary tree or a custom one.")
