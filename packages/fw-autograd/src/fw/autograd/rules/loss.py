"""VJP rules of loss functions.

Each loss is differentiated through a re-expression with fw ops that mirrors its
reference kernel (`_util.composite`), so weights, ``ignore_index``, soft labels and
every reduction get their gradients from the same code path, and second
derivatives come for free. ``ctc_loss`` returns its own gradient (as warp-ctc
does); its rule scales that and supports first order only.

cross_entropy_with_softmax (its use_softmax form) uses the explicit backward op
``cross_entropy_with_softmax_grad`` for a first-order eager backward (see
`_explicit`): the gradient is ``softmax - onehot`` scaled per sample, from the
softmax the forward returned.
"""

from __future__ import annotations

import numpy as np

import fw
from fw.autograd._registry import vjp
from fw.autograd.rules._explicit import all_zero, explicit
from fw.autograd.rules._util import composite, reshape_to, vjp_of
from fw.core.errors import UnsupportedError
from fw.core.ops import call


def _reduce(loss, reduction):
    if reduction == "none":
        return loss
    if reduction == "sum":
        return fw.sum(loss)
    return fw.mean(loss)


def _log_softmax(x, axis):
    return call("log_softmax", x, axis=axis)


def _ce_fn(logits, label, weight, soft_label, ignore_index, reduction,
           axis, use_softmax):
    nd = logits.ndim
    ax = axis % nd
    logp = _log_softmax(logits, ax) if use_softmax else fw.log(logits)
    sm = fw.exp(logp) if use_softmax else logits
    c = logits.shape[ax]
    wshape = [1] * nd
    wshape[ax] = c
    per_w = None
    if soft_label:
        lab = label.astype(logits.dtype)
        loss = -fw.sum(lab * logp, axis=ax, keepdim=True)
        if weight is not None:
            per_w = fw.sum(lab * reshape_to(weight, wshape), axis=ax, keepdim=True)
        ignored = None
    else:
        keep = label.ndim == nd
        lab = label if keep else fw.unsqueeze(label, ax)
        ignored = lab == ignore_index
        safe = fw.where(ignored, fw.zeros_like(lab), lab)
        picked = fw.take_along_axis(logp, safe, axis=ax)
        loss = fw.where(ignored, fw.zeros_like(picked), -picked)
        if weight is not None:
            per_w = fw.where(ignored, fw.zeros_like(picked),
                             fw.take_along_axis(fw.broadcast_to(reshape_to(weight, wshape),
                                                                list(logp.shape)), safe, ax))
        if not keep:
            loss = fw.squeeze(loss, ax)
            ignored = fw.squeeze(ignored, ax)
            per_w = None if per_w is None else fw.squeeze(per_w, ax)
    if per_w is not None:
        loss = loss * per_w
    if reduction == "mean":
        total = fw.sum(loss)
        if per_w is not None:
            den = fw.sum(per_w)
        elif not soft_label and ignore_index >= 0:
            den = fw.sum(fw.logical_not(ignored).astype(loss.dtype))
        else:
            den = float(loss.size)
        if isinstance(den, float):
            out = total / (den if den != 0 else 1.0)
        else:
            out = total / fw.where(den == 0, fw.ones_like(den), den)
    else:
        out = _reduce(loss, reduction)
    return out, sm


@vjp("cross_entropy_with_softmax", outputs=True)
def _ce_vjp(ctx, g):
    a = ctx.attrs
    # a weight or soft label that requires grad, or the use_softmax=False form (log of
    # probabilities), go through the re-expression
    if not explicit(ctx) or not a["use_softmax"] or ctx.needs(1) or ctx.needs(2) \
            or not ctx.needs(0):
        return vjp_of(_ce_fn, ctx, g)
    _, label, weight = ctx.inputs
    sm = ctx.outputs[1]
    gl = call("cross_entropy_with_softmax_grad", sm, label, weight, g[0],
              soft_label=a["soft_label"], ignore_index=a["ignore_index"],
              reduction=a["reduction"], axis=a["axis"])
    if not all_zero(g[1]):  # the returned softmax has a gradient of its own
        gl = gl + call("softmax_grad", sm, g[1], axis=a["axis"])
    return gl, None, None


@composite("nll_loss")
def _nll_fn(input, label, weight, ignore_index, reduction):  # noqa: A002
    ignored = label == ignore_index
    safe = fw.where(ignored, fw.zeros_like(label), label)
    picked = fw.squeeze(fw.take_along_axis(input, fw.unsqueeze(safe, 1), axis=1), 1)
    if weight is None:
        per_w = fw.where(ignored, fw.zeros_like(picked), fw.ones_like(picked))
    else:
        w = reshape_to(fw.gather(weight, reshape_to(safe, [safe.size])), list(safe.shape))
        per_w = fw.where(ignored, fw.zeros_like(picked), w.astype(picked.dtype))
    loss = -picked * per_w
    if reduction == "mean":
        den = fw.sum(per_w)
        return fw.sum(loss) / fw.where(den == 0, fw.ones_like(den), den)
    return _reduce(loss, reduction)


@composite("binary_cross_entropy")
def _bce_fn(input, label, weight, reduction):  # noqa: A002
    y = label.astype(input.dtype)
    loss = -(y * fw.maximum(fw.log(input), -100.0)
             + (1 - y) * fw.maximum(fw.log1p(-input), -100.0))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def _bce_logits_terms(x, y):
    return fw.maximum(x, 0.0) - x * y + fw.log1p(fw.exp(-fw.abs(x)))


@composite("binary_cross_entropy_with_logits")
def _bcel_fn(logit, label, weight, pos_weight, reduction):
    y = label.astype(logit.dtype)
    if pos_weight is None:
        loss = _bce_logits_terms(logit, y)
    else:
        # pos_weight scales only the -y*log(sigmoid(x)) term (Paddle 3.x, PyTorch):
        # (1 - y)*x + (1 + (pos_weight - 1)*y) * softplus(-x)
        sp = fw.maximum(-logit, 0.0) + fw.log1p(fw.exp(-fw.abs(logit)))
        loss = (1 - y) * logit + (1 + (pos_weight - 1) * y) * sp
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


@composite("kl_div")
def _kl_fn(input, label, reduction, log_target):  # noqa: A002
    y = label.astype(input.dtype)
    if log_target:
        loss = fw.exp(y) * (y - input)
    else:
        pos = y > 0
        loss = fw.where(pos, y * (fw.log(fw.where(pos, y, fw.ones_like(y))) - input),
                        fw.zeros_like(y * input))
    shape = fw.broadcast_shape(list(input.shape), list(label.shape))
    loss = fw.broadcast_to(loss, shape)
    if reduction == "batchmean":
        if loss.ndim and loss.shape[0] < 0:  # a dynamic batch (IR): its run-time size
            return fw.sum(loss) / fw.cast(fw.shape(loss)[0], loss.dtype)
        return fw.sum(loss) / float(loss.shape[0])
    return _reduce(loss, reduction)


@composite("smooth_l1_loss")
def _sl1_fn(input, label, reduction, delta):  # noqa: A002
    d = fw.abs(input - label)
    loss = fw.where(d < delta, 0.5 * d * d, delta * d - 0.5 * delta * delta)
    return _reduce(loss, reduction)


@composite("margin_ranking_loss")
def _mr_fn(input, other, label, margin, reduction):  # noqa: A002
    loss = fw.maximum(-label * (input - other) + margin, 0.0)
    return _reduce(loss, reduction)


@composite("sigmoid_focal_loss")
def _focal_fn(logit, label, normalizer, alpha, gamma, reduction):
    y = label.astype(logit.dtype)
    ce = _bce_logits_terms(logit, y)
    p = fw.sigmoid(logit)
    p_t = p * y + (1 - p) * (1 - y)
    alpha_t = alpha * y + (1 - alpha) * (1 - y)
    loss = alpha_t * ce * (1 - p_t) ** gamma
    if normalizer is not None:
        loss = loss / reshape_to(normalizer, [])
    return _reduce(loss, reduction)


@composite("hsigmoid_loss")
def _hs_fn(input, label, weight, bias, path_table, path_code,  # noqa: A002
           num_classes):
    # the tree paths are integer bookkeeping, computed on the host
    n = input.shape[0]
    lab = np.asarray(label.numpy()).reshape(-1).astype(np.int64)
    if path_table is None:
        code = lab + num_classes
        width = (num_classes - 1).bit_length()
        j = np.arange(width)
        length = np.array([int(v).bit_length() - 1 for v in code.tolist()], dtype=np.int64)
        valid = j[None, :] < length[:, None]
        node = (code[:, None] >> (j[None, :] + 1)) - 1
        bits = (code[:, None] >> j[None, :]) & 1
    else:
        node = np.asarray(path_table.numpy()).astype(np.int64)
        bits = np.asarray(path_code.numpy()).astype(np.int64)
        valid = np.cumprod(node >= 0, axis=1).astype(bool)
    node = np.where(valid, node, 0)
    if node.shape[1] == 0:
        return fw.zeros([n, 1], dtype=input.dtype) + 0 * fw.sum(input)
    rows = weight[fw.to_tensor(node)]  # [N, L, D]
    pre = fw.einsum("nd,nld->nl", input, rows)
    if bias is not None:
        pre = pre + reshape_to(bias, [-1])[fw.to_tensor(node)]
    pre = fw.clip(pre, -40.0, 40.0)
    sp = call("softplus", pre, beta=1.0, threshold=20.0)
    terms = fw.where(fw.to_tensor(valid), sp - fw.to_tensor(bits).astype(pre.dtype) * pre,
                     fw.full_like(pre, float(np.log(2.0))))
    return fw.sum(terms, axis=1, keepdim=True)


@vjp("ctc_loss", inputs=False, outputs=True)
def _ctc_loss(ctx, g):
    if not explicit(ctx):  # a backward that is itself differentiated (create_graph)
        raise UnsupportedError("ctc_loss: only first-order gradients are available (the op "
                               "computes its gradient itself); create_graph=True is not "
                               "supported through it")
    gl = g[0]
    grad = ctx.outputs[1]
    return reshape_to(gl, [1, -1, 1]) * grad, None, None, None
