"""Paddle 3.3's remaining loss functions: ``multi_label_margin_loss``,
``margin_cross_entropy`` (ArcFace / CosFace / SphereFace margins), ``class_center_sample``
(PartialFC's class sampling), ``adaptive_log_softmax_with_loss`` and ``rnnt_loss``.

All but `rnnt_loss` are compositions of fw ops (their gradients come from the ops'
VJP rules). `rnnt_loss` runs the transducer's forward-backward recursion in NumPy and
returns its exact gradient through a `PyLayer` (the recursion is sequential in time and
label position; composing it from fw ops would record ``T * U`` tiny ops).
`margin_cross_entropy` and `class_center_sample` take Paddle's ``group`` argument for
model parallelism; fw computes them on one process (``group=None`` or False).
"""

from __future__ import annotations

import numpy as np

import fw
from fw.core.errors import InvalidArgumentError, UnsupportedError
from fw.nn.functional._helpers import check_reduction

__all__ = ["multi_label_margin_loss", "margin_cross_entropy", "class_center_sample",
           "adaptive_log_softmax_with_loss", "rnnt_loss"]


def _np(t):
    return np.asarray(t.numpy() if isinstance(t, fw.Tensor) else t)


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def multi_label_margin_loss(input, label, reduction="mean", name=None):  # noqa: A002
    """Multi-class multi-label hinge loss:
    ``loss(x, y) = sum_{j in targets, i not in targets} max(0, 1 - (x[j] - x[i])) / C``.

    Args:
        input (Tensor): ``[N, C]`` (or ``[C]``) scores.
        label (Tensor): int ``[N, C]`` (or ``[C]``): the target classes of each sample,
            ended by the first -1 (the rest is ignored).
        reduction (str, optional): 'none', 'mean' (default) or 'sum'.
        name (str, optional): unused.

    Returns:
        Tensor: ``[N]`` with 'none', else a scalar.

    Examples:
        >>> import fw
        >>> import fw.nn.functional as F
        >>> x = fw.to_tensor([[0.1, 0.2, 0.4, 0.8]])
        >>> y = fw.to_tensor([[3, 0, -1, 1]])
        >>> round(float(F.multi_label_margin_loss(x, y)), 4)
        0.85
    """
    fn = "multi_label_margin_loss"
    check_reduction(reduction, fn)
    if not isinstance(input, fw.Tensor) or input.ndim not in (1, 2):
        raise InvalidArgumentError(f"{fn}: input must be [N, C] or [C], got "
                                   f"{getattr(input, 'shape', type(input).__name__)}")
    lab = _np(label)
    if lab.dtype.kind not in "iu" or lab.shape != tuple(input.shape):
        raise InvalidArgumentError(f"{fn}: label must be an integer tensor of input's shape "
                                   f"{input.shape}, got {lab.dtype} {list(lab.shape)}")
    one = input.ndim == 1
    x = input.unsqueeze(0) if one else input
    lab = lab.reshape(x.shape)
    n, c = x.shape
    is_t = np.zeros((n, c), bool)  # class j is a target of sample n
    for r in range(n):
        for v in lab[r]:
            if v < 0:
                break
            if v >= c:
                raise InvalidArgumentError(f"{fn}: label value {v} is out of range [0, {c})")
            is_t[r, v] = True
    pair = (is_t[:, :, None] & ~is_t[:, None, :]).astype(np.dtype(x.dtype.name))
    # margin[n, j, i] = 1 - x[n, j] + x[n, i]
    margin = 1.0 - x.unsqueeze(2) + x.unsqueeze(1)
    loss = (fw.nn.functional.relu(margin) * fw.to_tensor(pair)).sum(axis=[1, 2]) / c
    if one:
        loss = loss.squeeze(0)
    return _reduce(loss, reduction)


def margin_cross_entropy(logits, label, margin1=1.0, margin2=0.5, margin3=0.0, scale=64.0,
                         group=None, return_softmax=False, reduction="mean"):
    """Softmax cross entropy with the combined angular margin of ArcFace/CosFace:
    the target logit ``cos(theta)`` becomes ``cos(margin1 * theta + margin2) - margin3``,
    then every logit is multiplied by `scale`.

    Args:
        logits (Tensor): ``[N, num_classes]`` cosines (normalised features times
            normalised class weights).
        label (Tensor): int ``[N]`` or ``[N, 1]``.
        margin1 (float, optional): the multiplicative angular margin (SphereFace).
            Default: 1.0.
        margin2 (float, optional): the additive angular margin (ArcFace).
            Default: 0.5.
        margin3 (float, optional): the additive cosine margin (CosFace).
            Default: 0.0.
        scale (float, optional): the logit scale. Default 64.
        group (optional): Paddle's model-parallel group; fw computes on one process
            (None or False).
        return_softmax (bool, optional): also return the softmax of the scaled logits.
        reduction (str, optional): 'mean' (default), 'sum' or None/'none' (``[N, 1]``).

    Returns:
        Tensor | tuple: the loss, and the softmax when asked for.

    Examples:
        >>> import fw
        >>> import fw.nn.functional as F
        >>> logits = fw.to_tensor([[0.5, 0.1], [0.2, 0.7]])
        >>> label = fw.to_tensor([0, 1])
        >>> loss = F.margin_cross_entropy(logits, label, 1.0, 0.0, 0.0, scale=1.0)
        >>> ref = F.cross_entropy(logits, label)
        >>> round(float(loss), 5) == round(float(ref), 5)
        True
    """
    fn = "margin_cross_entropy"
    if group not in (None, False):
        raise UnsupportedError(f"{fn}: group (model-parallel classes) is not supported; fw "
                               f"computes the loss on one process (group=None)")
    if reduction is None:
        reduction = "none"
    check_reduction(reduction, fn)
    if not isinstance(logits, fw.Tensor) or logits.ndim != 2:
        raise InvalidArgumentError(f"{fn}: logits must be [N, num_classes], got "
                                   f"{getattr(logits, 'shape', type(logits).__name__)}")
    lab = _np(label).reshape(-1).astype(np.int64)
    n, c = logits.shape
    if lab.shape[0] != n or (lab.size and (lab.min() < 0 or lab.max() >= c)):
        raise InvalidArgumentError(f"{fn}: label must hold {n} class indices in [0, {c}), "
                                   f"got {lab.tolist()}")
    onehot = fw.to_tensor(np.eye(c, dtype=np.dtype(logits.dtype.name))[lab])
    cos = fw.clip(logits, -1.0, 1.0)
    theta = fw.acos(fw.clip(cos, -1.0 + 1e-7, 1.0 - 1e-7))
    target = fw.cos(theta * margin1 + margin2) - margin3
    z = (cos + onehot * (target - cos)) * scale
    logp = fw.nn.functional.log_softmax(z, axis=-1)
    loss = -(logp * onehot).sum(axis=-1, keepdim=True)
    out = _reduce(loss, reduction)
    if return_softmax:
        return out, fw.exp(logp)
    return out


def class_center_sample(label, num_classes, num_samples, group=None):
    """Sample class centers for PartialFC: every class present in `label` plus random
    other classes up to `num_samples`; labels are remapped to positions among them.

    Args:
        label (Tensor): int ``[N]`` class labels.
        num_classes (int): the number of classes.
        num_samples (int): the number of class centers to keep (at least the number of
            distinct labels, which are all kept).
        group (optional): Paddle's model-parallel group; one process here (None/False).

    Returns:
        tuple: ``remapped_label`` ``[N]`` and ``sampled_class_center`` (the positive
        classes in increasing order, then the sampled negative ones).

    Examples:
        >>> import fw
        >>> import fw.nn.functional as F
        >>> _ = fw.seed(2)
        >>> label = fw.to_tensor([1, 5, 1])
        >>> remapped, centers = F.class_center_sample(label, 10, 4)
        >>> remapped.tolist(), centers.tolist()[:2], centers.shape
        ([0, 1, 0], [1, 5], [4])
    """
    fn = "class_center_sample"
    if group not in (None, False):
        raise UnsupportedError(f"{fn}: group (model-parallel classes) is not supported; fw "
                               f"samples on one process (group=None)")
    lab = _np(label)
    if lab.dtype.kind not in "iu" or lab.ndim != 1:
        raise InvalidArgumentError(f"{fn}: label must be a 1-D integer tensor, got "
                                   f"{lab.dtype} {list(lab.shape)}")
    if lab.size and (lab.min() < 0 or lab.max() >= num_classes):
        raise InvalidArgumentError(f"{fn}: labels must lie in [0, num_classes={num_classes})")
    if not 0 < num_samples <= num_classes:
        raise InvalidArgumentError(f"{fn}: num_samples must be in (0, num_classes="
                                   f"{num_classes}], got {num_samples}")
    pos = np.unique(lab)
    centers = pos
    if len(pos) < num_samples:
        rest = np.setdiff1d(np.arange(num_classes), pos)
        # a random permutation from fw's generator: fw.seed makes the draw reproducible
        perm = fw.randperm(len(rest)).numpy()
        centers = np.concatenate([pos, rest[perm[:num_samples - len(pos)]]])
    remap = np.searchsorted(pos, lab)
    dt = lab.dtype if lab.dtype in (np.int32, np.int64) else np.int64
    return fw.to_tensor(remap.astype(dt)), fw.to_tensor(centers.astype(dt))


def adaptive_log_softmax_with_loss(input, label, head_weight, tail_weights, cutoffs,  # noqa: A002
                                   head_bias=None, name=None):
    """Adaptive softmax (Grave et al., 2017): frequent classes in a head, the rest in
    clusters reached through the head, each a low-rank projection.

    Args:
        input (Tensor): ``[N, in_features]`` (or ``[in_features]``).
        label (Tensor): int ``[N]`` (or a scalar) in ``[0, n_classes)``.
        head_weight (Tensor): ``[in_features, shortlist + n_clusters]``.
        tail_weights (list): per cluster ``[proj [in_features, hsz], out [hsz, osz]]``.
        cutoffs (list[int]): the class boundaries, ending with ``n_classes``.
        head_bias (Tensor, optional): ``[shortlist + n_clusters]``.
        name (str, optional): unused.

    Returns:
        tuple: ``output`` (the log-probability of each target, ``[N]``) and ``loss``
        (the mean of ``-output``).

    Examples:
        >>> import fw
        >>> import fw.nn.functional as F
        >>> _ = fw.seed(0)
        >>> x = fw.randn([3, 8])
        >>> head = fw.randn([8, 3])  # shortlist 2 + 1 cluster
        >>> tail = [[fw.randn([8, 2]), fw.randn([2, 3])]]
        >>> out, loss = F.adaptive_log_softmax_with_loss(x, fw.to_tensor([0, 1, 4]),
        ...                                             head, tail, [2, 5])
        >>> out.shape, bool((out < 0).all())
        ([3], True)
    """
    fn = "adaptive_log_softmax_with_loss"
    lab = _np(label)
    if lab.ndim > 1:
        raise InvalidArgumentError(f"{fn}: label must be 0-D or 1-D (multi-label is not "
                                   f"supported), got shape {list(lab.shape)}")
    batched = lab.ndim == 1
    x = input if batched else input.unsqueeze(0)
    lab = lab.reshape(-1).astype(np.int64)
    if x.ndim != 2 or x.shape[0] != lab.shape[0]:
        raise InvalidArgumentError(f"{fn}: input {input.shape} and label {list(lab.shape)} "
                                   f"do not match ([N, in_features] and [N])")
    cutoffs = [int(c) for c in cutoffs]
    if lab.size and (lab.min() < 0 or lab.max() >= cutoffs[-1]):
        raise InvalidArgumentError(
            f"{fn}: label values should be in [0, n_classes - 1], but values in range "
            f"[{lab.min()}, {lab.max()}] were found")
    if len(tail_weights) != len(cutoffs) - 1:
        raise InvalidArgumentError(f"{fn}: {len(cutoffs) - 1} clusters need as many "
                                   f"tail_weights, got {len(tail_weights)}")
    head = fw.matmul(x, head_weight)
    if head_bias is not None:
        head = head + head_bias
    head_lp = fw.nn.functional.log_softmax(head, axis=1)
    short = cutoffs[0]
    gather = lab.copy()  # the head column of each sample: its class, or its cluster
    parts, rows = [], []
    bounds = [0, *cutoffs]
    for i in range(1, len(bounds)):
        lo, hi = bounds[i - 1], bounds[i]
        r = np.nonzero((lab >= lo) & (lab < hi))[0]
        if i == 1 or r.size == 0:
            continue
        gather[r] = short + i - 2
        xs = fw.index_select(x, fw.to_tensor(r), axis=0)
        proj, out_w = tail_weights[i - 2]
        lp = fw.nn.functional.log_softmax(fw.matmul(fw.matmul(xs, proj), out_w), axis=1)
        rel = fw.to_tensor((lab[r] - lo)[:, None])
        parts.append(fw.take_along_axis(lp, rel, axis=1).squeeze(1))
        rows.append(r)
    output = fw.take_along_axis(head_lp, fw.to_tensor(gather[:, None]), axis=1).squeeze(1)
    if parts:
        r = np.concatenate(rows)
        tail = fw.zeros([x.shape[0]], output.dtype)
        tail = fw.scatter(tail, fw.to_tensor(r), fw.concat(parts))
        output = output + tail
    loss = (-output).mean()
    if not batched:
        output = output.squeeze(0)
    return output, loss


def _rnnt_one(lp, labels, blank, lam):
    """Loss and gradient wrt the log-probs ``lp [T, U+1, V]`` of one sequence (FastEmit
    scales the label emissions' gradient by ``1 + lam``, Yu et al. 2021)."""
    t_len, u1, _ = lp.shape
    blank_lp = lp[:, :, blank]
    emit = np.full((t_len, u1), -np.inf)
    if u1 > 1:
        emit[:, :-1] = np.take_along_axis(lp[:, :-1, :], labels[None, :, None], 2)[..., 0]
    alpha = np.full((t_len, u1), -np.inf)
    alpha[0, 0] = 0.0
    for t in range(t_len):
        for u in range(u1):
            if t == 0 and u == 0:
                continue
            a = alpha[t - 1, u] + blank_lp[t - 1, u] if t > 0 else -np.inf
            b = alpha[t, u - 1] + emit[t, u - 1] if u > 0 else -np.inf
            alpha[t, u] = np.logaddexp(a, b)
    beta = np.full((t_len, u1), -np.inf)
    beta[-1, -1] = blank_lp[-1, -1]
    for t in range(t_len - 1, -1, -1):
        for u in range(u1 - 1, -1, -1):
            if t == t_len - 1 and u == u1 - 1:
                continue
            a = beta[t + 1, u] + blank_lp[t, u] if t < t_len - 1 else -np.inf
            b = beta[t, u + 1] + emit[t, u] if u < u1 - 1 else -np.inf
            beta[t, u] = np.logaddexp(a, b)
    ll = beta[0, 0]
    grad = np.zeros_like(lp)
    # d(-ll)/d blank(t, u) = -exp(alpha(t,u) + blank(t,u) + beta(next) - ll)
    nxt = np.full((t_len, u1), -np.inf)
    nxt[:-1] = beta[1:]
    nxt[-1, -1] = 0.0
    grad[:, :, blank] = -np.exp(alpha + blank_lp + nxt - ll)
    if u1 > 1:
        g = -np.exp(alpha[:, :-1] + emit[:, :-1] + beta[:, 1:] - ll) * (1.0 + lam)
        sub = grad[:, :-1, :]  # a view: the label emissions' entries written in place
        idx = np.broadcast_to(labels[None, :, None], (t_len, u1 - 1, 1))
        np.put_along_axis(sub, idx, np.take_along_axis(sub, idx, 2) + g[..., None], 2)
    return -ll, grad


def rnnt_loss(input, label, input_lengths, label_lengths, blank=0, fastemit_lambda=0.001,  # noqa: A002
              reduction="mean", name=None):
    """The RNN-Transducer loss (Graves, 2012) with FastEmit regularisation.

    Args:
        input (Tensor): ``[B, T_max, U_max + 1, V]`` log-probabilities of the joint
            network (as Paddle's CPU kernel, which does not normalise them itself).
        label (Tensor): int32 ``[B, U_max]`` label sequences (padded).
        input_lengths (Tensor): int32 ``[B]`` frames per sequence.
        label_lengths (Tensor): int32 ``[B]`` labels per sequence.
        blank (int, optional): the blank class. Default 0.
        fastemit_lambda (float, optional): FastEmit's weight (scales the gradient of
            label emissions by ``1 + lambda``; the loss value is unchanged).
        reduction (str, optional): 'none' (``[B]``), 'mean' (default) or 'sum'.
        name (str, optional): unused.

    Returns:
        Tensor: the loss.

    Examples:
        >>> import fw
        >>> import fw.nn.functional as F
        >>> lp = fw.full([1, 1, 2, 2], -0.6931471805599453, "float64")  # log(1/2)
        >>> loss = F.rnnt_loss(lp, fw.to_tensor([[1]], "int32"), fw.to_tensor([1], "int32"),
        ...                    fw.to_tensor([1], "int32"), reduction="none")
        >>> round(float(loss[0]), 6)  # one path: emit 1, then blank
        1.386294
    """
    fn = "rnnt_loss"
    check_reduction(reduction, fn)
    if not isinstance(input, fw.Tensor) or input.ndim != 4:
        raise InvalidArgumentError(f"{fn}: input must be [B, T, U + 1, V], got "
                                   f"{getattr(input, 'shape', type(input).__name__)}")
    b, t_max, u_max1, v = input.shape
    lab, il, ll = _np(label).astype(np.int64), _np(input_lengths).astype(np.int64), \
        _np(label_lengths).astype(np.int64)
    if lab.shape[0] != b or il.shape != (b,) or ll.shape != (b,):
        raise InvalidArgumentError(f"{fn}: label {list(lab.shape)}, input_lengths "
                                   f"{list(il.shape)} and label_lengths {list(ll.shape)} must "
                                   f"all have batch size {b}")
    if np.any(il < 1) or np.any(il > t_max) or np.any(ll < 0) or np.any(ll + 1 > u_max1):
        raise InvalidArgumentError(f"{fn}: lengths out of range: input_lengths {il.tolist()} "
                                   f"(T={t_max}), label_lengths {ll.tolist()} (U+1={u_max1})")
    if not 0 <= blank < v:
        raise InvalidArgumentError(f"{fn}: blank must be in [0, {v}), got {blank}")
    from fw.autograd import PyLayer

    lam = float(fastemit_lambda)

    class _RNNT(PyLayer):
        @staticmethod
        def forward(ctx, x):
            a = x.numpy().astype(np.float64)
            costs = np.zeros(b)
            grads = np.zeros_like(a)
            for i in range(b):
                seq = lab[i, :ll[i]]
                if np.any((seq < 0) | (seq >= v)):
                    raise InvalidArgumentError(f"{fn}: label values must be in [0, {v})")
                c, g = _rnnt_one(a[i, :il[i], :ll[i] + 1], seq, blank, lam)
                costs[i] = c
                grads[i, :il[i], :ll[i] + 1] = g
            ctx.grads = grads.astype(a.dtype if x.dtype == fw.float64 else np.float32)
            return fw.to_tensor(costs.astype(np.dtype(x.dtype.name)))

        @staticmethod
        def backward(ctx, dy):
            g = fw.to_tensor(ctx.grads.astype(np.dtype(dy.dtype.name)))
            return g * dy.reshape([b, 1, 1, 1])

    loss = _RNNT.apply(input)
    return _reduce(loss, reduction)
