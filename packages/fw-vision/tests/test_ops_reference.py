"""fw.vision.ops against independent NumPy references written as plain loops (one
sample, one pixel at a time), on hypothesis-drawn boxes and shapes."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fw
import fw.nn.functional as F
import fw.vision.ops as ops

SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@st.composite
def box_sets(draw, max_n=12, size=20.0):
    n = draw(st.integers(1, max_n))
    seed = draw(st.integers(0, 2 ** 31 - 1))
    rng = np.random.default_rng(seed)
    x1 = rng.uniform(0, size * 0.7, n)
    y1 = rng.uniform(0, size * 0.7, n)
    w = rng.uniform(0.5, size * 0.5, n)
    h = rng.uniform(0.5, size * 0.5, n)
    boxes = np.stack([x1, y1, x1 + w, y1 + h], 1).astype(np.float32)
    scores = rng.permutation(n).astype(np.float32) / n  # distinct: no tie-order question
    cats = rng.integers(0, 3, n)
    return boxes, scores, cats


def ref_iou(a, b):
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def ref_nms(boxes, order, thr):
    keep = []
    for i in order:
        if all(ref_iou(boxes[i], boxes[k]) <= thr for k in keep):
            keep.append(int(i))
    return keep


@SETTINGS
@given(box_sets(), st.floats(0.05, 0.9))
def test_nms_matches_greedy_reference(data, thr):
    boxes, scores, cats = data
    got = ops.nms(fw.to_tensor(boxes), thr).numpy()
    assert got.dtype == np.int64
    assert got.tolist() == ref_nms(boxes.astype(np.float64), range(len(boxes)), thr)
    order = np.argsort(-scores)
    got = ops.nms(fw.to_tensor(boxes), thr, scores=fw.to_tensor(scores)).numpy()
    assert got.tolist() == ref_nms(boxes.astype(np.float64), order, thr)


@SETTINGS
@given(box_sets(), st.floats(0.05, 0.9), st.integers(1, 12))
def test_batched_nms_is_nms_within_each_category(data, thr, top_k):
    boxes, scores, cats = data
    keep = []
    for c in range(3):
        idx = [i for i in np.argsort(-scores) if cats[i] == c]
        keep += ref_nms(boxes.astype(np.float64), idx, thr)
    keep = sorted(keep, key=lambda i: -scores[i])
    got = ops.nms(fw.to_tensor(boxes), thr, fw.to_tensor(scores), fw.to_tensor(cats),
                  [0, 1, 2]).numpy()
    assert got.tolist() == keep
    k = min(top_k, len(boxes))
    got = ops.nms(fw.to_tensor(boxes), thr, fw.to_tensor(scores), fw.to_tensor(cats),
                  [0, 1, 2], top_k=k).numpy()
    assert got.tolist() == keep[:k]


@SETTINGS
@given(box_sets(max_n=6, size=1.0), box_sets(max_n=5, size=1.0))
def test_box_coder_decode_inverts_encode(priors, targets):
    p, t = priors[0], targets[0]
    var = np.random.default_rng(len(p)).uniform(0.1, 0.5, (len(p), 4)).astype(np.float32)
    enc = ops.box_coder(fw.to_tensor(p), fw.to_tensor(var), fw.to_tensor(t))
    assert enc.shape == [len(t), len(p), 4]
    # reference of one entry, written out
    i, j = len(t) - 1, len(p) - 1
    pw, ph = p[j, 2] - p[j, 0], p[j, 3] - p[j, 1]
    tw, th = t[i, 2] - t[i, 0], t[i, 3] - t[i, 1]
    want = [((t[i, 0] + t[i, 2]) / 2 - (p[j, 0] + pw / 2)) / pw / var[j, 0],
            ((t[i, 1] + t[i, 3]) / 2 - (p[j, 1] + ph / 2)) / ph / var[j, 1],
            math.log(tw / pw) / var[j, 2], math.log(th / ph) / var[j, 3]]
    np.testing.assert_allclose(enc.numpy()[i, j], want, rtol=1e-4, atol=1e-4)
    dec = ops.box_coder(fw.to_tensor(p), fw.to_tensor(var), enc, "decode_center_size")
    np.testing.assert_allclose(dec.numpy(), np.broadcast_to(t[:, None], dec.shape),
                               rtol=1e-4, atol=1e-5)


def ref_bilinear(img, y, x):
    """Paddle's RoI Align sample (Detectron): zero beyond one pixel outside, clamp."""
    h, w = img.shape
    if y < -1 or y > h or x < -1 or x > w:
        return 0.0
    y, x = max(y, 0.0), max(x, 0.0)
    y0, x0 = int(y), int(x)
    if y0 >= h - 1:
        y0 = y1 = h - 1
        y = float(y0)
    else:
        y1 = y0 + 1
    if x0 >= w - 1:
        x0 = x1 = w - 1
        x = float(x0)
    else:
        x1 = x0 + 1
    ly, lx = y - y0, x - x0
    return ((1 - ly) * (1 - lx) * img[y0, x0] + (1 - ly) * lx * img[y0, x1]
            + ly * (1 - lx) * img[y1, x0] + ly * lx * img[y1, x1])


def ref_roi_align(x, boxes, batch, ph, pw, scale, ratio, aligned):
    out = np.zeros((len(boxes), x.shape[1], ph, pw))
    off = 0.5 if aligned else 0.0
    for r, b in enumerate(boxes):
        x1, y1, x2, y2 = (v * scale - off for v in b)
        rw, rh = x2 - x1, y2 - y1
        if not aligned:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bh, bw = rh / ph, rw / pw
        gh = ratio if ratio > 0 else max(math.ceil(rh / ph), 0)  # empty box: no sample
        gw = ratio if ratio > 0 else max(math.ceil(rw / pw), 0)
        for c in range(x.shape[1]):
            for i in range(ph):
                for j in range(pw):
                    acc = 0.0
                    for iy in range(gh):
                        for ix in range(gw):
                            yy = y1 + i * bh + (iy + 0.5) * bh / gh
                            xx = x1 + j * bw + (ix + 0.5) * bw / gw
                            acc += ref_bilinear(x[batch[r], c], yy, xx)
                    out[r, c, i, j] = acc / max(gh * gw, 1)
    return out


@st.composite
def roi_problems(draw):
    n = draw(st.integers(1, 2))
    c = draw(st.integers(1, 3))
    h, w = draw(st.integers(3, 9)), draw(st.integers(3, 9))
    per = [draw(st.integers(0, 3)) for _ in range(n)]
    per[0] = max(per[0], 1)
    seed = draw(st.integers(0, 2 ** 31 - 1))
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, c, h, w))
    r = sum(per)
    x1 = rng.uniform(-2, w, r)
    y1 = rng.uniform(-2, h, r)
    bw = rng.uniform(0, w, r) * rng.choice([0.0, 1.0], r, p=[0.15, 0.85])  # some empty
    boxes = np.stack([x1, y1, x1 + bw, y1 + rng.uniform(0, h, r)], 1)
    return x, boxes, np.asarray(per, np.int32)


@SETTINGS
@given(roi_problems(), st.integers(1, 3), st.integers(1, 3), st.sampled_from([0.5, 1.0]),
       st.sampled_from([-1, 1, 2]), st.booleans())
def test_roi_align_matches_loop_reference(prob, ph, pw, scale, ratio, aligned):
    x, boxes, num = prob
    got = ops.roi_align(fw.to_tensor(x), fw.to_tensor(boxes), fw.to_tensor(num), (ph, pw),
                        scale, ratio, aligned).numpy()
    want = ref_roi_align(x, boxes, np.repeat(np.arange(len(num)), num), ph, pw, scale, ratio,
                         aligned)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


def c_round(v):
    return math.floor(v + 0.5) if v >= 0 else -math.floor(-v + 0.5)


def ref_roi_pool(x, boxes, batch, ph, pw, scale):
    h, w = x.shape[2:]
    out = np.zeros((len(boxes), x.shape[1], ph, pw))
    for r, b in enumerate(boxes):
        sx, sy, ex, ey = (c_round(v * scale) for v in b)
        rh, rw = max(ey - sy + 1, 1), max(ex - sx + 1, 1)
        for i in range(ph):
            for j in range(pw):
                hs = min(max(math.floor(i * rh / ph) + sy, 0), h)
                he = min(max(math.ceil((i + 1) * rh / ph) + sy, 0), h)
                ws = min(max(math.floor(j * rw / pw) + sx, 0), w)
                we = min(max(math.ceil((j + 1) * rw / pw) + sx, 0), w)
                if he > hs and we > ws:
                    out[r, :, i, j] = x[batch[r], :, hs:he, ws:we].max(axis=(1, 2))
    return out


@SETTINGS
@given(roi_problems(), st.integers(1, 3), st.integers(1, 3), st.sampled_from([0.5, 1.0]))
def test_roi_pool_matches_loop_reference(prob, ph, pw, scale):
    x, boxes, num = prob
    got = ops.roi_pool(fw.to_tensor(x), fw.to_tensor(boxes), fw.to_tensor(num), (ph, pw),
                       scale).numpy()
    want = ref_roi_pool(x, boxes, np.repeat(np.arange(len(num)), num), ph, pw, scale)
    np.testing.assert_allclose(got, want, rtol=0, atol=0)


def ref_psroi_pool(x, boxes, batch, ph, pw, scale):
    h, w = x.shape[2:]
    co = x.shape[1] // (ph * pw)
    out = np.zeros((len(boxes), co, ph, pw))
    for r, b in enumerate(boxes):
        sx, sy = c_round(b[0]) * scale, c_round(b[1]) * scale
        ex, ey = (c_round(b[2]) + 1) * scale, (c_round(b[3]) + 1) * scale
        bh, bw = max(ey - sy, 0.1) / ph, max(ex - sx, 0.1) / pw
        for k in range(co):
            for i in range(ph):
                for j in range(pw):
                    hs = min(max(math.floor(i * bh + sy), 0), h)
                    he = min(max(math.ceil((i + 1) * bh + sy), 0), h)
                    ws = min(max(math.floor(j * bw + sx), 0), w)
                    we = min(max(math.ceil((j + 1) * bw + sx), 0), w)
                    if he > hs and we > ws:
                        out[r, k, i, j] = x[batch[r], (k * ph + i) * pw + j, hs:he, ws:we].mean()
    return out


@SETTINGS
@given(roi_problems(), st.integers(1, 2), st.integers(1, 3), st.sampled_from([0.5, 1.0]))
def test_psroi_pool_matches_loop_reference(prob, ph, pw, scale):
    x, boxes, num = prob
    x = np.concatenate([x] * (ph * pw), axis=1)  # channels divisible by ph * pw
    x = x + np.arange(x.shape[1])[None, :, None, None]  # every channel distinct
    got = ops.psroi_pool(fw.to_tensor(x), fw.to_tensor(boxes), fw.to_tensor(num), (ph, pw),
                         scale).numpy()
    want = ref_psroi_pool(x, boxes, np.repeat(np.arange(len(num)), num), ph, pw, scale)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


def ref_deform_sample(img, y, x):
    """Deformable-conv bilinear sample: zero outside (-1, H) x (-1, W); missing corners 0."""
    h, w = img.shape
    if not (y > -1 and x > -1 and y < h and x < w):
        return 0.0
    y0, x0 = math.floor(y), math.floor(x)
    acc = 0.0
    for yy, wy in ((y0, 1 - (y - y0)), (y0 + 1, y - y0)):
        for xx, wx in ((x0, 1 - (x - x0)), (x0 + 1, x - x0)):
            if 0 <= yy < h and 0 <= xx < w:
                acc += wy * wx * img[yy, xx]
    return acc


def ref_deform_conv(x, off, wgt, mask, stride, pad, dil, dg, groups):
    n, c, h, w = x.shape
    cout, cg, kh, kw = wgt.shape
    ho, wo = off.shape[2:]
    out = np.zeros((n, cout, ho, wo))
    cpg = c // dg
    for b in range(n):
        for o in range(cout):
            g = o // (cout // groups)
            for i in range(ho):
                for j in range(wo):
                    acc = 0.0
                    for ci in range(cg):
                        cin = g * cg + ci
                        d = cin // cpg
                        for u in range(kh):
                            for v in range(kw):
                                t = u * kw + v
                                oc = d * 2 * kh * kw + 2 * t  # offset channel (dy)
                                y = i * stride - pad + u * dil + off[b, oc, i, j]
                                xx = j * stride - pad + v * dil + off[b, oc + 1, i, j]
                                s = ref_deform_sample(x[b, cin], y, xx)
                                if mask is not None:
                                    s *= mask[b, d * kh * kw + t, i, j]
                                acc += wgt[o, ci, u, v] * s
                    out[b, o, i, j] = acc
    return out


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2 ** 31 - 1), st.sampled_from([(1, 1), (2, 1), (1, 2), (2, 2)]),
       st.integers(1, 2), st.integers(0, 1), st.booleans())
def test_deform_conv2d_matches_loop_reference(seed, g, stride, pad, with_mask):
    dg, groups = g
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(1, 4, 5, 5))
    wgt = rng.normal(size=(2 * groups, 4 // groups, 2, 3))
    ho = (5 + 2 * pad - 2) // stride + 1
    wo = (5 + 2 * pad - 3) // stride + 1
    off = rng.normal(0, 2, (1, 2 * dg * 6, ho, wo))
    mask = rng.uniform(size=(1, dg * 6, ho, wo)) if with_mask else None
    got = ops.deform_conv2d(fw.to_tensor(x), fw.to_tensor(off), fw.to_tensor(wgt), None,
                            stride, pad, 1, dg, groups,
                            None if mask is None else fw.to_tensor(mask)).numpy()
    want = ref_deform_conv(x, off, wgt, mask, stride, pad, 1, dg, groups)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)


def test_deform_conv2d_zero_offset_is_conv2d():
    rng = np.random.default_rng(0)
    x = fw.to_tensor(rng.normal(size=(2, 4, 7, 6)).astype(np.float32))
    w = fw.to_tensor(rng.normal(size=(6, 2, 3, 3)).astype(np.float32))
    b = fw.to_tensor(rng.normal(size=(6,)).astype(np.float32))
    off = fw.zeros([2, 2 * 9, 4, 3])
    got = ops.deform_conv2d(x, off, w, b, stride=2, padding=1, groups=2).numpy()
    want = F.conv2d(x, w, b, stride=2, padding=1, groups=2).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    ones = fw.ones([2, 9, 4, 3])
    got_v2 = ops.deform_conv2d(x, off, w, b, stride=2, padding=1, groups=2, mask=ones)
    np.testing.assert_allclose(got_v2.numpy(), want, rtol=1e-5, atol=1e-5)


def test_prior_box_centers_and_sizes():
    feat, img = fw.zeros([1, 1, 2, 3]), fw.zeros([1, 1, 20, 30])
    boxes, var = ops.prior_box(feat, img, min_sizes=[4.0], max_sizes=[9.0],
                               aspect_ratios=[2.0], flip=True)
    b = boxes.numpy()
    assert b.shape == (2, 3, 4, 4)  # ratios 1, 2, 1/2 and the sqrt(4*9) square
    # cell (1, 2): center ((2 + .5) * 10, (1 + .5) * 10) = (25, 15)
    cx, cy = 25.0, 15.0
    half = [(2.0, 2.0), (2 * math.sqrt(2), 2 / math.sqrt(2)), (2 / math.sqrt(2), 2 * math.sqrt(2)),
            (3.0, 3.0)]
    want = [[(cx - a) / 30, (cy - c) / 20, (cx + a) / 30, (cy + c) / 20] for a, c in half]
    np.testing.assert_allclose(b[1, 2], want, rtol=1e-6)
    np.testing.assert_allclose(var.numpy()[1, 2], [[0.1, 0.1, 0.2, 0.2]] * 4, rtol=1e-6)


def test_yolo_box_one_cell_by_hand():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(1, 2 * 7, 3, 4)).astype(np.float32)
    anchors = [10, 14, 23, 27]
    boxes, scores = ops.yolo_box(fw.to_tensor(x), fw.to_tensor(np.array([[60, 80]], np.int32)),
                                 anchors, 2, 0.0, 16, clip_bbox=False)
    a, k, l = 1, 2, 3  # anchor, row, column
    v = x[0, a * 7:(a + 1) * 7, k, l].astype(np.float64)
    sig = lambda t: 1 / (1 + math.exp(-t))  # noqa: E731
    cx, cy = (l + sig(v[0])) * 80 / 4, (k + sig(v[1])) * 60 / 3
    bw, bh = math.exp(v[2]) * 23 * 80 / 64, math.exp(v[3]) * 27 * 60 / 48
    i = a * 12 + k * 4 + l
    np.testing.assert_allclose(boxes.numpy()[0, i],
                               [cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2], rtol=1e-5)
    np.testing.assert_allclose(scores.numpy()[0, i], [sig(v[4]) * sig(v[5]), sig(v[4]) * sig(v[6])],
                               rtol=1e-5)


def ref_matrix_nms(boxes, scores, score_thr, post_thr, top_k, keep_k, gaussian, sigma,
                   background):
    """SOLOv2's matrix NMS, one candidate at a time (normalized boxes)."""
    rows = []
    for c in range(scores.shape[0]):
        if c == background:
            continue
        cand = [i for i in np.argsort(-scores[c], kind="stable") if scores[c, i] > score_thr]
        if top_k > -1:
            cand = cand[:top_k]
        comp = [max([ref_iou(boxes[cand[k]], boxes[cand[j]]) for k in range(j)], default=0.0)
                for j in range(len(cand))]
        for i in range(len(cand)):
            decay = 1.0
            for j in range(i):
                iou = ref_iou(boxes[cand[j]], boxes[cand[i]])
                d = (math.exp((comp[j] ** 2 - iou ** 2) * sigma) if gaussian
                     else (1 - iou) / (1 - comp[j]))
                decay = min(decay, d)
            s = scores[c, cand[i]] * decay
            if s > post_thr:
                rows.append((c, s, cand[i]))
    rows.sort(key=lambda r: -r[1])
    return rows[:keep_k] if keep_k > -1 else rows


@SETTINGS
@given(box_sets(max_n=10, size=1.0), st.booleans(), st.integers(-1, 6), st.integers(-1, 8))
def test_matrix_nms_matches_loop_reference(data, gaussian, top_k, keep_k):
    boxes, _, _ = data
    n = len(boxes)
    scores = np.random.default_rng(n * 7 + top_k).uniform(size=(3, n)).astype(np.float32)
    out, num, index = ops.matrix_nms(fw.to_tensor(boxes[None]), fw.to_tensor(scores[None]),
                                     0.2, 0.15, top_k, keep_k, gaussian, 2.0, 0,
                                     return_index=True)
    want = ref_matrix_nms(boxes.astype(np.float64), scores.astype(np.float64), 0.2, 0.15,
                          top_k, keep_k, gaussian, 2.0, 0)
    assert num.numpy().tolist() == [len(want)]
    got = out.numpy()
    np.testing.assert_array_equal(got[:, 0], [r[0] for r in want])
    np.testing.assert_allclose(got[:, 1], [r[1] for r in want], rtol=1e-5)
    np.testing.assert_array_equal(index.numpy().ravel(), [r[2] for r in want])
    np.testing.assert_array_equal(got[:, 2:], boxes[[r[2] for r in want]].reshape(-1, 4))


@SETTINGS
@given(box_sets(max_n=12, size=600.0), st.integers(2, 3), st.integers(4, 6),
       st.booleans())
def test_distribute_fpn_proposals_matches_reference(data, lo, hi, pixel_offset):
    boxes, _, _ = data
    n = len(boxes)
    split = [n // 2, n - n // 2]
    multi, restore, per_level = ops.distribute_fpn_proposals(
        fw.to_tensor(boxes), lo, hi, 4, 224, pixel_offset,
        fw.to_tensor(np.array(split, np.int32)))
    off = 1.0 if pixel_offset else 0.0
    levels = []
    for b in boxes.astype(np.float64):
        scale = math.sqrt((b[2] - b[0] + off) * (b[3] - b[1] + off))
        levels.append(min(max(math.floor(math.log2(scale / 224 + 1e-8) + 4), lo), hi))
    concat = []
    for k, lvl in enumerate(range(lo, hi + 1)):
        mine = [i for i in range(n) if levels[i] == lvl]
        np.testing.assert_array_equal(multi[k].numpy().reshape(-1, 4), boxes[mine])
        assert per_level[k].numpy().tolist() == [sum(1 for i in mine if i < split[0]),
                                                 sum(1 for i in mine if i >= split[0])]
        concat += mine
    assert restore.numpy().ravel().tolist() == [concat.index(i) for i in range(n)]


def ref_yolo_loss(x, gt_box, gt_label, gt_score, anchors, mask, class_num, ignore, ratio,
                  smooth_labels, scale_xy):
    """YOLOv3 loss, one prediction and one box at a time."""
    n, _, h, w = x.shape
    per = 5 + class_num
    size = ratio * h
    sig = lambda t: 1 / (1 + math.exp(-t))  # noqa: E731
    sce = lambda v, t: max(v, 0) - v * t + math.log1p(math.exp(-abs(v)))  # noqa: E731

    def iou(a, b):  # center-format boxes
        iw = min(a[0] + a[2] / 2, b[0] + b[2] / 2) - max(a[0] - a[2] / 2, b[0] - b[2] / 2)
        ih = min(a[1] + a[3] / 2, b[1] + b[3] / 2) - max(a[1] - a[3] / 2, b[1] - b[3] / 2)
        inter = 0.0 if iw < 0 or ih < 0 else iw * ih
        union = a[2] * a[3] + b[2] * b[3] - inter
        return inter / union if union > 0 else 0.0

    pos, neg = (1 - min(1 / class_num, 1 / 40), min(1 / class_num, 1 / 40)) \
        if smooth_labels else (1.0, 0.0)
    bias = -0.5 * (scale_xy - 1)
    loss = np.zeros(n)
    for i in range(n):
        obj = np.zeros((len(mask), h, w))
        boxes = [g for g in gt_box[i] if g[2] > 0 and g[3] > 0]
        for j, a in enumerate(mask):
            for k in range(h):
                for l in range(w):
                    v = x[i, j * per:(j + 1) * per, k, l]
                    p = ((l + sig(v[0]) * scale_xy + bias) / h,
                         (k + sig(v[1]) * scale_xy + bias) / h,
                         math.exp(v[2]) * anchors[2 * a] / size,
                         math.exp(v[3]) * anchors[2 * a + 1] / size)
                    if max([iou(p, g) for g in boxes], default=0.0) > ignore:
                        obj[j, k, l] = -1
        for t, g in enumerate(gt_box[i]):
            if g[2] <= 0 or g[3] <= 0:
                continue
            gi, gj = min(int(g[0] * w), w - 1), min(int(g[1] * h), h - 1)
            ious = [iou((0, 0, g[2], g[3]), (0, 0, anchors[2 * q] / size,
                                             anchors[2 * q + 1] / size))
                    for q in range(len(anchors) // 2)]
            best = int(np.argmax(ious))
            if best not in mask:
                continue
            j = mask.index(best)
            v = x[i, j * per:(j + 1) * per, gj, gi]
            s = gt_score[i, t]
            wgt = (2 - g[2] * g[3]) * s
            loss[i] += wgt * (sce(v[0], g[0] * w - gi) + sce(v[1], g[1] * h - gj)
                              + abs(v[2] - math.log(g[2] * size / anchors[2 * best]))
                              + abs(v[3] - math.log(g[3] * size / anchors[2 * best + 1])))
            loss[i] += s * sum(sce(v[5 + c], pos if c == gt_label[i, t] else neg)
                               for c in range(class_num))
            obj[j, gj, gi] = s
        for j in range(len(mask)):
            for k in range(h):
                for l in range(w):
                    v = x[i, j * per + 4, k, l]
                    if obj[j, k, l] > 1e-5:
                        loss[i] += sce(v, 1.0) * obj[j, k, l]
                    elif obj[j, k, l] > -0.5:
                        loss[i] += sce(v, 0.0)
    return loss


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2 ** 31 - 1), st.integers(1, 6), st.booleans(),
       st.sampled_from([[0, 1], [1, 2, 3], [2]]), st.sampled_from([1.0, 1.2]))
def test_yolo_loss_matches_loop_reference(seed, nbox, smooth, mask, scale_xy):
    rng = np.random.default_rng(seed)
    anchors = [10, 13, 16, 30, 33, 23, 30, 61]
    x = rng.normal(size=(2, len(mask) * 7, 3, 3))
    gt = rng.uniform(0.05, 0.7, (2, nbox, 4))
    gt[:, :, 2:] *= rng.choice([0.0, 1.0], (2, nbox, 1), p=[0.2, 0.8])  # some padding
    if nbox > 1:
        gt[0, 1] = gt[0, 0] * [1.0, 1.0, 1.02, 0.98]  # a shared cell
    label = rng.integers(0, 2, (2, nbox)).astype(np.int32)
    score = rng.uniform(0.3, 1.0, (2, nbox))
    got = ops.yolo_loss(fw.to_tensor(x), fw.to_tensor(gt), fw.to_tensor(label), anchors, mask,
                        2, 0.4, 8, fw.to_tensor(score), smooth, scale_x_y=scale_xy).numpy()
    want = ref_yolo_loss(x, gt, label, score, anchors, mask, 2, 0.4, 8, smooth, scale_xy)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
