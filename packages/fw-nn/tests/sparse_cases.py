"""Sparse cases run identically with `lib` = paddle (gen_sparse_fixture.py records
them) or fw (test_sparse_paddle_fixture.py compares): the inputs are fixed arrays,
so both sides see the same data. Each case returns a sparse or dense tensor (or a
tuple of them)."""

import numpy as np

R = np.random.default_rng(16)

# a 2-D pattern with an empty row, a 3-D one, and one with duplicate indices
IDX2 = np.array([[0, 0, 2, 3, 3], [1, 4, 0, 2, 4]], np.int64)
SHAPE2 = [5, 5]
IDX2B = np.array([[0, 1, 3, 3, 4], [1, 1, 2, 3, 0]], np.int64)
IDX3 = np.array([[0, 0, 1, 1, 1, 2], [0, 2, 1, 1, 3, 0], [1, 0, 2, 3, 1, 2]], np.int64)
SHAPE3 = [3, 4, 4]
DUP = np.array([[1, 0, 1, 1], [2, 0, 2, 0]], np.int64)
V5 = R.uniform(-0.9, 0.9, 5).astype(np.float32)
V5B = R.uniform(0.5, 2.0, 5).astype(np.float32)
V6 = R.uniform(-2, 2, 6).astype(np.float32)
VPOS = R.uniform(0.1, 3.0, 5).astype(np.float32)
DENSE = R.standard_normal(SHAPE2).astype(np.float32)
# an NDHWC point cloud: 2 samples in a 4x5x3 grid, 3 channels
VOX = np.array([[0, 0, 0, 0, 1, 1, 1], [0, 1, 1, 3, 0, 2, 3], [0, 2, 3, 4, 1, 1, 0],
                [1, 0, 2, 2, 0, 1, 2]], np.int64)
VOXV = R.standard_normal((7, 3)).astype(np.float32)
VOXSHAPE = [2, 4, 5, 3, 3]
W3 = R.standard_normal((3, 3, 3, 3, 2)).astype(np.float32)
W2 = R.standard_normal((2, 2, 2, 3, 2)).astype(np.float32)
BIAS = R.standard_normal(2).astype(np.float32)

UNARY = ["abs", "sin", "tan", "asin", "atan", "sinh", "tanh", "asinh", "atanh", "sqrt",
         "square", "log1p", "expm1", "deg2rad", "rad2deg", "neg"]
POSITIVE = {"sqrt", "log1p"}


def cases(lib):
    S = lib.sparse

    def coo(idx=IDX2, v=V5, shape=SHAPE2):
        return S.sparse_coo_tensor(lib.to_tensor(idx), lib.to_tensor(v), shape)

    def csr(idx=IDX2, v=V5, shape=SHAPE2):
        return coo(idx, v, shape).to_sparse_csr()

    c = {}
    for name in UNARY:
        v = VPOS if name in POSITIVE else V5
        c[f"{name}_coo"] = lambda n=name, v=v: getattr(S, n)(coo(v=v))
        c[f"{name}_csr"] = lambda n=name, v=v: getattr(S, n)(csr(v=v))
    c["pow_coo"] = lambda: S.pow(coo(v=VPOS), 2.5)
    c["pow_csr"] = lambda: S.pow(csr(v=VPOS), 3)
    c["isnan"] = lambda: S.isnan(coo(v=np.where(V5 > 0, np.nan, V5).astype(np.float32)))
    c["cast"] = lambda: S.cast(coo(), "int32", "float64")
    c["cast_csr"] = lambda: S.cast(csr(), None, "float64")
    c["coalesce"] = lambda: S.coalesce(coo(DUP, V5[:4], [2, 3]))
    c["to_csr_3d"] = lambda: csr(IDX3, V6, SHAPE3)
    c["csr_to_coo"] = lambda: csr().to_sparse_coo(2)
    c["to_dense_dup"] = lambda: coo(DUP, V5[:4], [2, 3]).to_dense()
    c["dense_to_coo"] = lambda: lib.to_tensor(np.where(DENSE > 0.5, DENSE, 0)).to_sparse_coo(2)
    c["dense_to_csr"] = lambda: lib.to_tensor(np.where(DENSE > 0.5, DENSE, 0)).to_sparse_csr()
    for axis in (None, 0, 1, -1):
        for kd in (False, True):
            c[f"sum_coo_{axis}_{kd}"] = lambda a=axis, k=kd: S.sum(coo(), axis=a, keepdim=k)
    c["sum_coo3_1"] = lambda: S.sum(coo(IDX3, V6, SHAPE3), axis=1)
    c["sum_csr_none"] = lambda: S.sum(csr())
    c["sum_csr_last"] = lambda: S.sum(csr(), axis=-1)
    # (a batched CSR's sum(axis=-1) is not recorded: Paddle 3.3 returns shape [B, M] with
    # inconsistent crows, and to_dense of it segfaults; fw keeps [B, M, 1], tested on NumPy)
    c["sum_dtype"] = lambda: S.sum(coo(), axis=0, dtype="float64")
    c["reshape_coo"] = lambda: S.reshape(coo(), [25, 1])
    c["reshape_coo3"] = lambda: S.reshape(coo(IDX3, V6, SHAPE3), [4, -1, 2])
    c["reshape_csr"] = lambda: S.reshape(csr(IDX3, V6, SHAPE3), [12, 4])
    c["transpose_coo"] = lambda: S.transpose(coo(), [1, 0])
    c["transpose_coo3"] = lambda: S.transpose(coo(IDX3, V6, SHAPE3), [2, 0, 1])
    c["transpose_csr"] = lambda: S.transpose(csr(), [1, 0])
    c["transpose_csr3"] = lambda: S.transpose(csr(IDX3, V6, SHAPE3), [0, 2, 1])
    c["slice_coo"] = lambda: S.slice(coo(), [0, 1], [1, -4], [4, 5])
    c["slice_coo3"] = lambda: S.slice(coo(IDX3, V6, SHAPE3), [0], [1], [3])
    c["slice_csr"] = lambda: S.slice(csr(), [1], [1], [3])
    for op in ("add", "subtract", "multiply", "divide"):
        c[f"{op}_coo"] = lambda o=op: getattr(S, o)(coo(), coo(IDX2B, V5B))
        c[f"{op}_csr"] = lambda o=op: getattr(S, o)(csr(), csr(IDX2B, V5B))
    c["mask_as_coo"] = lambda: S.mask_as(lib.to_tensor(DENSE), coo())
    c["mask_as_csr"] = lambda: S.mask_as(lib.to_tensor(DENSE), csr())
    c["is_same_shape"] = lambda: lib.to_tensor(
        [S.is_same_shape(coo(), coo(IDX2B, V5B)), S.is_same_shape(coo(), csr(IDX3, V6, SHAPE3))])
    F = S.nn.functional
    c["relu"] = lambda: F.relu(coo())
    c["relu6"] = lambda: S.nn.ReLU6()(csr(v=V5 * 10))
    c["leaky_relu"] = lambda: S.nn.LeakyReLU(0.2)(coo())
    c["softmax_csr"] = lambda: S.nn.Softmax()(csr())
    c["softmax_csr3"] = lambda: F.softmax(csr(IDX3, V6, SHAPE3))

    def vox(stop_gradient=True):
        return S.sparse_coo_tensor(lib.to_tensor(VOX), lib.to_tensor(VOXV), VOXSHAPE,
                                   stop_gradient=stop_gradient)

    c["conv3d_pad1"] = lambda: F.conv3d(vox(), lib.to_tensor(W3), lib.to_tensor(BIAS),
                                        padding=1)
    c["conv3d_stride2"] = lambda: F.conv3d(vox(), lib.to_tensor(W2), None, stride=2)
    c["conv3d_dil"] = lambda: F.conv3d(vox(), lib.to_tensor(W3), None, padding=[1, 2, 1],
                                       dilation=[1, 2, 1])
    c["subm_conv3d"] = lambda: F.subm_conv3d(vox(), lib.to_tensor(W3), lib.to_tensor(BIAS),
                                             padding=1)
    pix = S.sparse_coo_tensor(lib.to_tensor(VOX[[0, 2, 3]]), lib.to_tensor(VOXV), [2, 5, 3, 3])
    c["conv2d"] = lambda: F.conv2d(pix, lib.to_tensor(W3[0]), lib.to_tensor(BIAS), stride=[2, 1],
                                   padding=1)
    c["subm_conv2d"] = lambda: F.subm_conv2d(pix, lib.to_tensor(W3[1]), None, padding=1)
    c["max_pool3d"] = lambda: F.max_pool3d(vox(), 2)
    c["max_pool3d_pad"] = lambda: S.nn.MaxPool3D(3, stride=2, padding=1)(vox())
    c["batch_norm"] = lambda: S.nn.BatchNorm(3)(vox())

    def conv_grads(subm):
        x = vox(stop_gradient=False)
        w = lib.to_tensor(W3)
        w.stop_gradient = False
        f = F.subm_conv3d if subm else F.conv3d
        y = f(x, w, None, padding=1)
        n = int(np.prod(y.values().shape))
        wts = np.arange(n, dtype=np.float32).reshape(y.values().shape) / 100
        (y.values() * lib.to_tensor(wts)).sum().backward()
        return w.grad

    # (the input values' gradient of Paddle's sparse conv comes back as None on CPU:
    # fw's is checked against central differences in test_sparse_ops.py)
    c["conv3d_grad_w"] = lambda: conv_grads(False)
    c["subm_conv3d_grad_w"] = lambda: conv_grads(True)

    # gradients w.r.t. the values
    def grad_of(make, reduce_fn):
        x = make()
        x.stop_gradient = False
        reduce_fn(x).backward()
        return x.grad

    c["grad_softmax_csr"] = lambda: grad_of(
        csr, lambda x: (F.softmax(x).to_dense() * lib.to_tensor(DENSE)).sum())
    c["grad_softmax_coo"] = lambda: grad_of(
        coo, lambda x: (F.softmax(x).to_dense() * lib.to_tensor(DENSE)).sum())
    c["grad_sin_coo"] = lambda: grad_of(coo, lambda x: S.sin(x).values().sum())
    c["grad_to_dense"] = lambda: grad_of(
        coo, lambda x: (x.to_dense() * lib.to_tensor(DENSE)).sum())
    c["grad_multiply"] = lambda: grad_of(
        coo, lambda x: S.multiply(x, coo(IDX2B, V5B)).to_dense().sum())
    return c
