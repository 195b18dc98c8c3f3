"""cpu kernel of the loss family: softmax cross entropy (``cross_entropy_with_softmax``;
its explicit backward ``cross_entropy_with_softmax_grad`` is in
:mod:`fw.core.kernels.cpu.nn_grad`) for the case every classifier's training
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

from fw.core.kernels.cpu._common import _F32, C, _ndarray, attach

__all__ = ["register"]

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


def register() -> None:
    attach({"cross_entropy_with_softmax": _make_ce}, when=True)


register()
