"""cpu kernels of softmax cross entropy (``cross_entropy_with_softmax`` and its explicit
backward ``cross_entropy_with_softmax_grad``) for the case every classifier's training
step hits: float32/float64 logits with the classes on the last axis, hard int labels
without class weights, no ignored samples, finite logits.

The references (``fw.core.ops.loss`` / ``fw.core.ops.nn_grad``) handle every form (soft
labels, weights, ignore_index, any axis, low precision) with generic NumPy steps (one-hot
tables, ``take_along_axis``, masks) that cost ~10 passes over the logits and about
200 us on a [128, 10] batch; here it is one log-softmax, one exp and a gather by row.
Anything outside the case (including labels that are out of range or equal
``ignore_index``, whose errors and masking the reference owns) goes to the reference.
float32 rows take oneDNN's log-softmax when the native extension is loaded; the rest is
NumPy, so the kernels are registered with or without it.
"""

from __future__ import annotations

import numpy as np

from fw.core import _native
from fw.core.ops._registry import OPS

__all__ = ["register"]

C = _native.C
_F32 = np.dtype(np.float32)
_ndarray = np.ndarray
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _plain_rows(logits, label, weight, soft_label, axis, ignore_index, use_softmax=True):
    """(rows, classes, int label vector) when the fast case applies, else None."""
    if (weight is not None or soft_label or not use_softmax or type(logits) is not _ndarray
            or type(label) is not _ndarray or logits.dtype not in _FLOATS
            or label.dtype.kind not in "iu" or logits.ndim < 1 or not logits.size):
        return None
    nd = logits.ndim
    if axis not in (-1, nd - 1):
        return None
    c = logits.shape[-1]
    lead = logits.shape[:-1]
    if label.shape == lead + (1,):
        lab = label.reshape(-1)
    elif label.shape == lead:
        lab = label.reshape(-1)
    else:
        return None
    if not lab.size:
        return None
    # one compare for both bounds: negative labels wrap to huge unsigned values
    unsigned = lab.view(np.uint64) if lab.dtype.itemsize == 8 else lab.astype(np.int64).view(
        np.uint64)
    if (unsigned >= c).any():
        return None  # bad labels (the reference's error)
    if 0 <= ignore_index < c and (lab == ignore_index).any():
        return None  # ignored samples (the reference masks them)
    return lab.size, c, lab


def _flat_index(lab, n, c):
    """Positions of each row's label in the flattened [n, c] array."""
    return lab + np.arange(0, n * c, c)


def _ce_fast(logits, label, weight, soft_label, ignore_index, reduction, axis, use_softmax):
    """(loss, softmax), or None where the reference must answer."""
    plain = _plain_rows(logits, label, weight, soft_label, axis, ignore_index, use_softmax)
    if plain is None:
        return None
    n, c, lab = plain
    x = logits.reshape(n, c)
    if C is not None and x.dtype == _F32 and x.flags.c_contiguous:
        logp = np.empty_like(x)
        C.softmax_forward(x, logp, 1, True)  # oneDNN's log-softmax
    else:  # row reductions along a short axis are NumPy's slow case; still 3x faster
        logp = x - x.max(axis=1, keepdims=True)
        logp -= np.log(np.exp(logp).sum(axis=1, keepdims=True))
    if not np.isfinite(logp).all():  # inf logits: the reference's guarded shift
        return None
    loss = logp.reshape(-1).take(_flat_index(lab, n, c))
    loss = np.negative(loss, out=loss)
    sm = np.exp(logp, out=logp)
    if reduction == "none":
        out = loss.reshape(label.shape)
    else:
        out = np.add.reduce(loss)
        if reduction == "mean":
            out = out / x.dtype.type(n)
        out = np.asarray(out, x.dtype)
    return out, sm.reshape(logits.shape)


def _ce_grad_fast(softmax, label, weight, grad_loss, soft_label, ignore_index, reduction, axis):
    """The logits' gradient, or None where the reference must answer."""
    plain = _plain_rows(softmax, label, weight, soft_label, axis, ignore_index)
    if plain is None or type(grad_loss) is not _ndarray or grad_loss.dtype != softmax.dtype:
        return None
    n, c, lab = plain
    if reduction == "none":
        if grad_loss.size != n:
            return None
        f = grad_loss.reshape(n, 1)
        f_at_label = f[:, 0]
    elif grad_loss.shape != ():
        return None
    else:
        f = f_at_label = grad_loss / softmax.dtype.type(n) if reduction == "mean" else grad_loss
    g = softmax.reshape(n, c) * f  # a new array: the softmax stays intact
    g.reshape(-1)[_flat_index(lab, n, c)] -= f_at_label
    return g.reshape(softmax.shape)


def _make_ce(reference):
    def cross_entropy_with_softmax_cpu(logits, label, weight=None, soft_label=False,
                                       ignore_index=-100, reduction="mean", axis=-1,
                                       use_softmax=True):
        r = _ce_fast(logits, label, weight, soft_label, ignore_index, reduction, axis,
                     use_softmax)
        if r is None:
            r = reference(logits, label, weight, soft_label=soft_label,
                          ignore_index=ignore_index, reduction=reduction, axis=axis,
                          use_softmax=use_softmax)
        return r

    return cross_entropy_with_softmax_cpu


def _make_ce_grad(reference):
    def cross_entropy_with_softmax_grad_cpu(softmax, label, weight, grad_loss, soft_label=False,
                                            ignore_index=-100, reduction="mean", axis=-1):
        r = _ce_grad_fast(softmax, label, weight, grad_loss, soft_label, ignore_index,
                          reduction, axis)
        if r is None:
            r = reference(softmax, label, weight, grad_loss, soft_label=soft_label,
                          ignore_index=ignore_index, reduction=reduction, axis=axis)
        return r

    return cross_entropy_with_softmax_grad_cpu


def register() -> None:
    for name, make in (("cross_entropy_with_softmax", _make_ce),
                       ("cross_entropy_with_softmax_grad", _make_ce_grad)):
        op = OPS.get(name)
        if op is not None:
            op.kernels["cpu"] = make(op.reference)


register()
