"""cuDNN convolutions through ctypes: ``conv`` (cudnnConvolutionForward),
``conv_transpose`` (cudnnConvolutionBackwardData; it is also conv's input gradient) and
``conv_grad_weight`` (cudnnConvolutionBackwardFilter), for 1-D, 2-D and 3-D inputs in
both layouts, with strides, dilations and groups, in float32/float64/float16/bfloat16.

CuPy 14 has no cuDNN binding, so this module calls cuDNN 9's legacy API (still in
``libcudnn.so.9``, which dispatches to ``libcudnn_cnn``/``libcudnn_ops``) with ctypes.
The library is found, in order, at ``FW_CUDNN_LIBRARY`` (a file or a folder), in the
``nvidia-cudnn-cu13``/``-cu12`` pip packages (``nvidia/cudnn/lib``), and through the
system loader. Without it (or without CuPy) this module imports and does nothing:
`kernels` returns no kernels and the ops keep their other gpu kernels.

How a call runs (the same sequence as PyTorch's legacy cuDNN path,
aten/src/ATen/native/cudnn/Conv_v7.cpp; written anew here):

- the op's attributes go through fw's own geometry (`conv_geometry`,
  `conv_transpose_geometry`) into a `ConvSpec`: cuDNN's ``x``/``w``/``y`` dimensions
  (``[N, C, *S]``, 1-D lifted to 2-D), packed NCHW or NHWC strides, symmetric pads,
  strides, dilations, groups, the data/compute/math types. cuDNN pads symmetrically, so
  an asymmetric ``conv``/``conv_grad_weight`` padding pads x explicitly by the
  difference first; a ``conv_transpose`` whose output cuDNN cannot express runs the
  fallback;
- per (spec, device): descriptors, the algorithm (the first that
  ``cudnnGetConvolution*Algorithm_v7``'s heuristics rank, that reports success and
  whose workspace fits `WORKSPACE_LIMIT`) and its workspace size, cached;
- per call: the handle of this thread and device (``cudnnCreate`` once), bound to
  CuPy's current stream, the workspace from CuPy's memory pool, the cuDNN call, the
  bias (``cudnnAddTensor``; bfloat16 through float32 in CuPy).

Math types: float16/bfloat16 use ``CUDNN_TENSOR_OP_MATH`` (float32 accumulation);
float32 uses ``CUDNN_FMA_MATH`` (plain float32, as the reference multiplies) unless
fw's TF32 switch for convolutions is on (``FW_GPU_CONV_TF32=1``, `conv.TF32`), then
``CUDNN_DEFAULT_MATH``, which lets cuDNN 8+ use TF32 tensor cores (PyTorch picks FMA
math when TF32 is off for the same reason).

Switch: ``FW_GPU_CUDNN=1`` puts these kernels in front of the ops' gpu kernels (the
RawKernels of `conv`, else the reference), which run whatever cuDNN does not take
(empty or oversized tensors, mixed dtypes, an algorithm search that finds nothing:
recorded in `FAILURES`, warned about once). ``FW_GPU_CUDNN=0`` or
``FW_GPU_DISABLE=cudnn`` turns them off. `DEFAULT_ON` is False until a GPU run has
verified them against the reference (docs/gpu.md). An error of cuDNN while running a
planned call raises `CudnnError` naming the cuDNN function, the op, the shapes and
dtype and cuDNN's own message.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib.util
import os
import threading
import warnings
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from fw.core.errors import InternalError
from fw.core.kernels.gpu._raw import memo
from fw.core.ops.conv import (
    _check_conv,
    conv_geometry,
    conv_transpose_geometry,
    join_layout,
    split_layout,
)

__all__ = ["CudnnError", "ConvSpec", "DEFAULT_ON", "FAILURES", "WORKSPACE_LIMIT", "enabled",
           "library_candidates", "library", "conv_spec", "conv_transpose_spec",
           "grad_weight_spec", "math_type", "kernels"]

# on by default only once a GPU run verified every kernel here against the reference
DEFAULT_ON = False
# largest workspace an algorithm may ask for (bytes); FW_CUDNN_WORKSPACE_MB overrides
WORKSPACE_LIMIT = int(os.environ.get("FW_CUDNN_WORKSPACE_MB", "1024")) << 20
# (op, spec, device) -> why cuDNN did not take it (the fallback ran)
FAILURES: dict = {}

_BF16 = np.dtype(ml_dtypes.bfloat16)
# cudnnDataType_t (cudnn_graph.h)
_DATA = {np.dtype(np.float32): 0, np.dtype(np.float64): 1, np.dtype(np.float16): 2, _BF16: 9}
_DATA_BY_NAME = {d.name: v for d, v in _DATA.items()}
_NCHW, _NHWC = 0, 1  # cudnnTensorFormat_t
_CROSS_CORRELATION = 1  # cudnnConvolutionMode_t
_DEFAULT_MATH, _TENSOR_OP_MATH, _FMA_MATH = 0, 1, 3  # cudnnMathType_t
_SUCCESS, _BAD_PARAM, _NOT_SUPPORTED = 0, 2000, 3000
_I32 = 2 ** 31 - 1
_ALGOS = 16  # perf entries asked of the heuristics


class CudnnError(InternalError):
    """A cuDNN call returned an error status."""


def _truthy(v):
    return v.strip().lower() in ("1", "true", "yes", "on")


def enabled(env=None) -> bool:
    """Whether the cuDNN kernels go in front of the conv ops' gpu kernels:
    ``FW_GPU_CUDNN`` (1/0; `DEFAULT_ON` when unset), and not named in
    ``FW_GPU_DISABLE`` (``cudnn``) nor ``FW_GPU_RAW=0``."""
    env = os.environ if env is None else env
    if env.get("FW_GPU_RAW", "1").strip().lower() in ("0", "false", "no", "off"):
        return False
    if "cudnn" in {s.strip() for s in env.get("FW_GPU_DISABLE", "").split(",")}:
        return False
    v = env.get("FW_GPU_CUDNN")
    return DEFAULT_ON if v is None or not v.strip() else _truthy(v)


# ---------------------------------------------------------------- the library
def library_candidates(env=None) -> list:
    """Paths (or loader names) to try for ``libcudnn.so.9``, in order."""
    env = os.environ if env is None else env
    out = []
    given = env.get("FW_CUDNN_LIBRARY", "").strip()
    if given:
        out.append(os.path.join(given, "libcudnn.so.9") if os.path.isdir(given) else given)
        return out  # an explicit choice is the only one
    dirs = []
    try:
        spec = importlib.util.find_spec("nvidia.cudnn")
        dirs += list(spec.submodule_search_locations or []) if spec else []
    except (ImportError, ValueError):
        pass
    try:  # the "nvidia" namespace package may span several site-packages
        spec = importlib.util.find_spec("nvidia")
        for d in (spec.submodule_search_locations or []) if spec else []:
            dirs.append(os.path.join(d, "cudnn"))
    except (ImportError, ValueError):
        pass
    for d in dict.fromkeys(dirs):
        p = os.path.join(d, "lib", "libcudnn.so.9")
        if os.path.isfile(p):
            out.append(p)
    out.append("libcudnn.so.9")
    found = ctypes.util.find_library("cudnn")
    if found:
        out.append(found)
    return list(dict.fromkeys(out))


_c_int_p = ctypes.POINTER(ctypes.c_int)
_vp = ctypes.c_void_p


class _PerfStruct(ctypes.Structure):
    # cudnnConvolution{Fwd,BwdData,BwdFilter}AlgoPerf_t share this layout (cudnn_cnn.h)
    _fields_ = [("algo", ctypes.c_int), ("status", ctypes.c_int), ("time", ctypes.c_float),
                ("memory", ctypes.c_size_t), ("determinism", ctypes.c_int),
                ("mathType", ctypes.c_int), ("reserved", ctypes.c_int * 3)]


_SIGNATURES = {
    "cudnnGetVersion": (ctypes.c_size_t, []),
    "cudnnGetErrorString": (ctypes.c_char_p, [ctypes.c_int]),
    "cudnnCreate": (ctypes.c_int, [ctypes.POINTER(_vp)]),
    "cudnnSetStream": (ctypes.c_int, [_vp, _vp]),
    "cudnnCreateTensorDescriptor": (ctypes.c_int, [ctypes.POINTER(_vp)]),
    "cudnnSetTensorNdDescriptor": (ctypes.c_int, [_vp, ctypes.c_int, ctypes.c_int, _c_int_p,
                                                  _c_int_p]),
    "cudnnGetTensorNdDescriptor": (ctypes.c_int, [_vp, ctypes.c_int, _c_int_p, _c_int_p,
                                                  _c_int_p, _c_int_p]),
    "cudnnCreateFilterDescriptor": (ctypes.c_int, [ctypes.POINTER(_vp)]),
    "cudnnSetFilterNdDescriptor": (ctypes.c_int, [_vp, ctypes.c_int, ctypes.c_int,
                                                  ctypes.c_int, _c_int_p]),
    "cudnnCreateConvolutionDescriptor": (ctypes.c_int, [ctypes.POINTER(_vp)]),
    "cudnnSetConvolutionNdDescriptor": (ctypes.c_int, [_vp, ctypes.c_int, _c_int_p, _c_int_p,
                                                       _c_int_p, ctypes.c_int, ctypes.c_int]),
    "cudnnSetConvolutionGroupCount": (ctypes.c_int, [_vp, ctypes.c_int]),
    "cudnnGetConvolutionGroupCount": (ctypes.c_int, [_vp, _c_int_p]),
    "cudnnSetConvolutionMathType": (ctypes.c_int, [_vp, ctypes.c_int]),
    "cudnnGetConvolutionMathType": (ctypes.c_int, [_vp, _c_int_p]),
    "cudnnGetConvolutionNdForwardOutputDim": (ctypes.c_int, [_vp, _vp, _vp, ctypes.c_int,
                                                             _c_int_p]),
    "cudnnGetConvolutionForwardAlgorithm_v7": (
        ctypes.c_int, [_vp, _vp, _vp, _vp, _vp, ctypes.c_int, _c_int_p,
                       ctypes.POINTER(_PerfStruct)]),
    "cudnnGetConvolutionBackwardDataAlgorithm_v7": (
        ctypes.c_int, [_vp, _vp, _vp, _vp, _vp, ctypes.c_int, _c_int_p,
                       ctypes.POINTER(_PerfStruct)]),
    "cudnnGetConvolutionBackwardFilterAlgorithm_v7": (
        ctypes.c_int, [_vp, _vp, _vp, _vp, _vp, ctypes.c_int, _c_int_p,
                       ctypes.POINTER(_PerfStruct)]),
    "cudnnGetConvolutionForwardWorkspaceSize": (
        ctypes.c_int, [_vp, _vp, _vp, _vp, _vp, ctypes.c_int, ctypes.POINTER(ctypes.c_size_t)]),
    "cudnnGetConvolutionBackwardDataWorkspaceSize": (
        ctypes.c_int, [_vp, _vp, _vp, _vp, _vp, ctypes.c_int, ctypes.POINTER(ctypes.c_size_t)]),
    "cudnnGetConvolutionBackwardFilterWorkspaceSize": (
        ctypes.c_int, [_vp, _vp, _vp, _vp, _vp, ctypes.c_int, ctypes.POINTER(ctypes.c_size_t)]),
    # (handle, alpha, desc, ptr, desc, ptr, conv, algo, ws, ws_size, beta, desc, ptr)
    "cudnnConvolutionForward": (
        ctypes.c_int, [_vp, _vp, _vp, _vp, _vp, _vp, _vp, ctypes.c_int, _vp, ctypes.c_size_t,
                       _vp, _vp, _vp]),
    "cudnnConvolutionBackwardData": (
        ctypes.c_int, [_vp, _vp, _vp, _vp, _vp, _vp, _vp, ctypes.c_int, _vp, ctypes.c_size_t,
                       _vp, _vp, _vp]),
    "cudnnConvolutionBackwardFilter": (
        ctypes.c_int, [_vp, _vp, _vp, _vp, _vp, _vp, _vp, ctypes.c_int, _vp, ctypes.c_size_t,
                       _vp, _vp, _vp]),
    "cudnnAddTensor": (ctypes.c_int, [_vp, _vp, _vp, _vp, _vp, _vp, _vp]),
}


class _Lib:
    """libcudnn with its functions' C signatures set; `call` checks the status."""

    def __init__(self, cdll, path):
        self.cdll = cdll
        self.path = path
        for name, (res, args) in _SIGNATURES.items():
            f = getattr(cdll, name)
            f.restype = res
            f.argtypes = args
        self.version = int(cdll.cudnnGetVersion())

    def error_string(self, status) -> str:
        s = self.cdll.cudnnGetErrorString(int(status))
        return s.decode(errors="replace") if s else f"status {status}"

    def call(self, name, *args, what=""):
        """Call `name`; a status other than success raises CudnnError naming it, `what`
        (the op and its operands; a callable is formatted only then) and cuDNN's text."""
        st = getattr(self.cdll, name)(*args)
        if st != _SUCCESS:
            what = what() if callable(what) else what
            raise CudnnError(f"{name} failed{' in ' + what if what else ''}: "
                             f"{self.error_string(st)} (status {st})")
        return st


_LIB_LOCK = threading.Lock()
_LIB: list = []  # [] not tried yet, [None] absent, [_Lib]


def library():
    """The loaded cuDNN (>= 9), or None when it is absent (found and loaded once)."""
    with _LIB_LOCK:
        if not _LIB:
            lib = None
            for cand in library_candidates():
                try:
                    cdll = ctypes.CDLL(cand)
                    if int(cdll.cudnnGetVersion()) // 10000 < 9:
                        continue  # cuDNN 8 names its libraries differently; not supported
                    lib = _Lib(cdll, cand)
                    break
                except (OSError, AttributeError):
                    continue
            _LIB.append(lib)
        return _LIB[0]


# ---------------------------------------------------------------- specs (pure shapes)
@dataclass(frozen=True)
class ConvSpec:
    """One cuDNN convolution: the dimensions of cuDNN's ``x`` (input), ``w`` (filter,
    ``[K, C/groups, *kernel]``) and ``y`` (output), all ``[N, C, *S]`` with packed
    strides of the layout (NHWC when `channel_last`, and the filter then in
    ``CUDNN_TENSOR_NHWC`` format), symmetric `pads`, `strides`, `dilations`, `groups`,
    and what the op must do around the call: `pre_pad` ((begin, end) of x's spatial
    dims to pad explicitly first, or None), `lifted` (a 1-D op run as 2-D with height
    1)."""
    x_dims: tuple
    w_dims: tuple
    y_dims: tuple
    pads: tuple
    strides: tuple
    dilations: tuple
    groups: int
    channel_last: bool
    dtype: str
    pre_pad: tuple | None
    lifted: bool

    @property
    def data_type(self) -> int:
        return _DATA_BY_NAME[self.dtype]

    @property
    def compute_type(self) -> int:
        return 1 if self.dtype == "float64" else 0  # double for double, else float

    def x_strides(self):
        return packed_strides(self.x_dims, self.channel_last)

    def y_strides(self):
        return packed_strides(self.y_dims, self.channel_last)


def packed_strides(dims, channel_last):
    """Element strides of a packed ``[N, C, *S]`` tensor (NCHW), or of one stored as
    ``[N, *S, C]`` (NHWC) when `channel_last`."""
    dims = [int(d) for d in dims]
    if not channel_last:
        st, acc = [], 1
        for d in reversed(dims):
            st.append(acc)
            acc *= d
        return tuple(reversed(st))
    c, sp = dims[1], dims[2:]
    st_sp, acc = [], c
    for d in reversed(sp):
        st_sp.append(acc)
        acc *= d
    return (acc, 1) + tuple(reversed(st_sp))


def math_type(dtype, tf32=False) -> int:
    """cudnnMathType_t for `dtype`: tensor ops for float16/bfloat16, FMA only for
    float32 unless `tf32` (then the default, which allows TF32 tensor cores)."""
    d = np.dtype(dtype)
    if d in (np.dtype(np.float16), _BF16):
        return _TENSOR_OP_MATH
    if d == np.float32:
        return _DEFAULT_MATH if tf32 else _FMA_MATH
    return _DEFAULT_MATH


def _lift(nd, vals, one):
    return (one,) + tuple(vals) if nd == 1 else tuple(vals)


def _fits(*dims_list):
    return all(int(np.prod(d, dtype=np.int64)) <= _I32 and min(d) > 0 for d in dims_list)


def _split(shape, channel_last):
    return split_layout(tuple(int(s) for s in shape), channel_last)


def _spec(x_dims, w_dims, y_dims, pads, strides, dils, groups, cl, dtype, pre_pad, nd):
    if nd not in (1, 2, 3) or np.dtype(dtype) not in _DATA:
        return None
    if not _fits(x_dims, w_dims, y_dims):
        return None
    lift = nd == 1
    if lift:
        x_dims = tuple(x_dims[:2]) + (1,) + tuple(x_dims[2:])
        w_dims = tuple(w_dims[:2]) + (1,) + tuple(w_dims[2:])
        y_dims = tuple(y_dims[:2]) + (1,) + tuple(y_dims[2:])
        pre_pad = None if pre_pad is None else ((0, 0),) + tuple(pre_pad)
    return ConvSpec(tuple(x_dims), tuple(w_dims), tuple(y_dims), _lift(nd, pads, 0),
                    _lift(nd, strides, 1), _lift(nd, dils, 1), int(groups), bool(cl),
                    np.dtype(dtype).name, pre_pad, lift)


def _pads_split(pads):
    """Symmetric pads cuDNN takes and the explicit (begin, end) pad left over."""
    sym = tuple(min(b, e) for b, e in pads)
    extra = tuple((b - s, e - s) for (b, e), s in zip(pads, sym))
    return sym, (extra if any(b or e for b, e in extra) else None)


@memo
def conv_spec(x_shape, w_shape, dtype, stride=1, padding=0, dilation=1, groups=1,
              channel_last=False):
    """The `ConvSpec` of ``conv`` (cudnnConvolutionForward), or None when cuDNN does
    not take it (the fallback runs and raises any error with its own message)."""
    n, c, sp, cout, ks = _check_conv(tuple(x_shape), tuple(w_shape), None, groups,
                                     channel_last, False)
    strides, pads, dils, outs = conv_geometry(sp, ks, stride, padding, dilation)
    sym, extra = _pads_split(pads)
    xsp = tuple(s + b + e for s, (b, e) in zip(sp, extra)) if extra else tuple(sp)
    return _spec((n, c) + xsp, (cout, c // groups) + tuple(ks), (n, cout) + tuple(outs), sym,
                 strides, dils, groups, channel_last, dtype, extra, len(sp))


@memo
def conv_transpose_spec(x_shape, w_shape, dtype, stride=1, padding=0, output_padding=0,
                        dilation=1, groups=1, output_size=None, channel_last=False):
    """The `ConvSpec` of ``conv_transpose`` as cudnnConvolutionBackwardData: cuDNN's
    ``y`` (dy) is the op's input, ``x`` (dx) its output, ``w`` its weight
    ``[C_in, C_out/groups, *K]``. cuDNN places dx at ``q*stride - pad + k*dilation``
    with one pad per dim and requires conv(dx) to have dy's size; outputs for which
    the op's begin pad gives no such size (an end pad larger than the begin pad, say)
    return None."""
    n, c, sp, cout, ks = _check_conv(tuple(x_shape), tuple(w_shape), None, groups,
                                     channel_last, True)
    strides, pads, dils, outs = conv_transpose_geometry(sp, ks, stride, padding,
                                                        output_padding, dilation, output_size)
    begin = tuple(b for b, _ in pads)
    for i, o, b, s, d, k in zip(sp, outs, begin, strides, dils, ks):
        span = o + 2 * b - (d * (k - 1) + 1)
        if span < 0 or span // s + 1 != i:
            return None
    return _spec((n, cout) + tuple(outs), (c, cout // groups) + tuple(ks), (n, c) + tuple(sp),
                 begin, strides, dils, groups, channel_last, dtype, None, len(sp))


@memo
def grad_weight_spec(x_shape, grad_out_shape, dtype, kernel_size, stride=1, padding=0,
                     dilation=1, groups=1, channel_last=False):
    """The `ConvSpec` of ``conv_grad_weight`` (cudnnConvolutionBackwardFilter; ``w`` is
    the weight gradient), or None (also when grad_out's shape is not conv's)."""
    if len(x_shape) < 3 or len(grad_out_shape) != len(x_shape) or groups < 1:
        return None
    n, c, sp = _split(x_shape, channel_last)
    gn, cout, gsp = _split(grad_out_shape, channel_last)
    ks = tuple(kernel_size) * len(sp) if len(kernel_size) == 1 else tuple(kernel_size)
    if len(ks) != len(sp) or c % groups or cout % groups or gn != n:
        return None
    strides, pads, dils, outs = conv_geometry(sp, ks, stride, padding, dilation)
    if tuple(outs) != tuple(gsp):
        return None
    sym, extra = _pads_split(pads)
    xsp = tuple(s + b + e for s, (b, e) in zip(sp, extra)) if extra else tuple(sp)
    return _spec((n, c) + xsp, (cout, c // groups) + ks, (n, cout) + tuple(outs), sym, strides,
                 dils, groups, channel_last, dtype, extra, len(sp))


# ---------------------------------------------------------------- descriptors
def _ints(vals):
    return (ctypes.c_int * len(vals))(*[int(v) for v in vals])


class _Descs:
    """The tensor, filter and convolution descriptors of one spec (kept for the
    process, like the plans that hold them)."""

    def __init__(self, lib, op: str, spec: ConvSpec, tf32: bool, what: str):
        self.lib = lib
        c = lib.call
        self.x = self._tensor(spec.x_dims, spec.x_strides(), spec.data_type, what)
        self.y = self._tensor(spec.y_dims, spec.y_strides(), spec.data_type, what)
        self.w = _vp()
        c("cudnnCreateFilterDescriptor", ctypes.byref(self.w), what=what)
        c("cudnnSetFilterNdDescriptor", self.w, spec.data_type,
          _NHWC if spec.channel_last else _NCHW, len(spec.w_dims), _ints(spec.w_dims),
          what=what)
        self.conv = _vp()
        k = len(spec.pads)
        c("cudnnCreateConvolutionDescriptor", ctypes.byref(self.conv), what=what)
        c("cudnnSetConvolutionNdDescriptor", self.conv, k, _ints(spec.pads),
          _ints(spec.strides), _ints(spec.dilations), _CROSS_CORRELATION, spec.compute_type,
          what=what)
        c("cudnnSetConvolutionGroupCount", self.conv, spec.groups, what=what)
        self.math = math_type(spec.dtype, tf32)
        c("cudnnSetConvolutionMathType", self.conv, self.math, what=what)
        # the op's output (bias added in place): y of conv, x (dx) of conv_transpose
        self.out = self.x if op == "conv_transpose" else self.y
        self.bias = None
        if op != "conv_grad_weight" and spec.dtype != "bfloat16":
            # (bfloat16 bias adds go through CuPy in float32)
            dims = spec.x_dims if op == "conv_transpose" else spec.y_dims
            bd = (1, dims[1]) + (1,) * (len(dims) - 2)
            self.bias = self._tensor(bd, packed_strides(bd, False), spec.data_type, what)

    def _tensor(self, dims, strides, dt, what):
        d = _vp()
        self.lib.call("cudnnCreateTensorDescriptor", ctypes.byref(d), what=what)
        self.lib.call("cudnnSetTensorNdDescriptor", d, dt, len(dims), _ints(dims),
                      _ints(strides), what=what)
        return d

    def forward_output_dims(self):
        """cuDNN's own output size of a forward convolution of its x descriptor (a check
        of the descriptors against fw's geometry; needs no GPU)."""
        nb = ctypes.c_int()
        dims, st = (ctypes.c_int * 8)(), (ctypes.c_int * 8)()
        self.lib.call("cudnnGetTensorNdDescriptor", self.x, 8, ctypes.byref(ctypes.c_int()),
                      ctypes.byref(nb), dims, st)
        out = (ctypes.c_int * 8)()
        self.lib.call("cudnnGetConvolutionNdForwardOutputDim", self.conv, self.x, self.w,
                      nb.value, out)
        return tuple(out[: nb.value])


# ---------------------------------------------------------------- plans and handles
_OPS = {  # op -> (algorithm query, workspace query, run)
    "conv": ("cudnnGetConvolutionForwardAlgorithm_v7",
             "cudnnGetConvolutionForwardWorkspaceSize", "cudnnConvolutionForward"),
    "conv_transpose": ("cudnnGetConvolutionBackwardDataAlgorithm_v7",
                       "cudnnGetConvolutionBackwardDataWorkspaceSize",
                       "cudnnConvolutionBackwardData"),
    "conv_grad_weight": ("cudnnGetConvolutionBackwardFilterAlgorithm_v7",
                         "cudnnGetConvolutionBackwardFilterWorkspaceSize",
                         "cudnnConvolutionBackwardFilter"),
}


def _operands(op, d):
    """The three descriptors in the order each cuDNN function takes them."""
    if op == "conv":
        return d.x, d.w, d.conv, d.y
    if op == "conv_transpose":
        return d.w, d.y, d.conv, d.x
    return d.x, d.y, d.conv, d.w


class _Plan:
    def __init__(self, op, spec, descs, algo, ws):
        self.op, self.spec, self.descs, self.algo, self.ws = op, spec, descs, algo, ws
        # alpha/beta are double for double data, float otherwise (cuDNN's rule)
        f = ctypes.c_double if spec.dtype == "float64" else ctypes.c_float
        self.one, self.zero = f(1.0), f(0.0)


def _choose(lib, handle, op, descs, what):
    """(algorithm, workspace bytes): the heuristics' first success whose math type
    the dtype allows and whose workspace fits, or raises CudnnError."""
    query, wsq, _ = _OPS[op]
    perf = (_PerfStruct * _ALGOS)()
    count = ctypes.c_int()
    a, b, conv, c = _operands(op, descs)
    what = what() if callable(what) else what
    lib.call(query, handle, a, b, conv, c, _ALGOS, ctypes.byref(count), perf, what=what)
    why = []
    for p in perf[: count.value]:
        if p.status != _SUCCESS:
            continue
        if descs.math == _FMA_MATH and p.mathType in (_TENSOR_OP_MATH, 2):
            continue  # would run float32 on TF32 tensor cores
        size = ctypes.c_size_t()
        if descs.math != _FMA_MATH:  # the algorithm's math type, as PyTorch does
            lib.call("cudnnSetConvolutionMathType", conv, p.mathType, what=what)
        st = getattr(lib.cdll, wsq)(handle, a, b, conv, c, p.algo, ctypes.byref(size))
        if st != _SUCCESS:
            why.append(f"algo {p.algo}: {lib.error_string(st)}")
            continue
        if size.value > WORKSPACE_LIMIT:
            why.append(f"algo {p.algo}: workspace {size.value} B")
            continue
        return p.algo, size.value
    raise CudnnError(f"{query} found no usable algorithm in {what}"
                     + (f" ({'; '.join(why)})" if why else ""))


_TLS = threading.local()


def _handle(lib, cp):
    """This thread's cuDNN handle for the current device, bound to CuPy's current
    stream (a handle must not be shared between threads that run concurrently)."""
    handles = getattr(_TLS, "handles", None)
    if handles is None:
        handles = _TLS.handles = {}
    dev = cp.cuda.Device().id
    h = handles.get(dev)
    if h is None:
        h = _vp()
        lib.call("cudnnCreate", ctypes.byref(h), what="creating a handle")
        handles[dev] = h
    lib.call("cudnnSetStream", h, _vp(cp.cuda.get_current_stream().ptr),
             what="binding the handle to CuPy's current stream")
    return h


# ---------------------------------------------------------------- the kernels
def _describe(op, arrays, attrs):
    parts = [f"{k} {list(a.shape)} {a.dtype}" for k, a in arrays.items() if a is not None]
    geo = ", ".join(f"{k}={v}" for k, v in attrs.items())
    return f"{op}({', '.join(parts)}; {geo})"


def _bits(cp, a):
    """`a` as unsigned ints of its width for copies and pads (CuPy 14 does not promise
    elementwise kernels for bfloat16)."""
    return a.view(cp.uint16) if a.dtype.itemsize == 2 else a


def _contig(cp, a):
    if a.flags.c_contiguous:
        return a
    return cp.ascontiguousarray(_bits(cp, a)).view(a.dtype)


def _lift_array(a, spec, channel_last):
    """A 1-D op's [N, C, L] / [N, L, C] array as [N, C, 1, L] / [N, 1, L, C]."""
    if not spec.lifted:
        return a
    sh = a.shape
    return a.reshape((sh[0], 1) + sh[1:]) if channel_last else a.reshape(sh[:2] + (1,) + sh[2:])


def _pre_pad(cp, x, spec):
    """x padded explicitly by spec.pre_pad (its spatial axes), zeros in every dtype."""
    if spec.pre_pad is None:
        return x
    sp = list(spec.pre_pad)
    widths = [(0, 0)] + sp + [(0, 0)] if spec.channel_last else [(0, 0), (0, 0)] + sp
    return cp.pad(_bits(cp, x), widths).view(x.dtype)


def _weight_in(cp, w, spec):
    """The weight as cuDNN's filter: OIHW as it is, KRSC (channels last) for NHWC."""
    w = w.reshape(spec.w_dims)
    if not spec.channel_last:
        return _contig(cp, w)
    perm = (0,) + tuple(range(2, w.ndim)) + (1,)
    return cp.ascontiguousarray(_bits(cp, w).transpose(perm)).view(w.dtype)


def kernels(cp, fallbacks: dict) -> dict:
    """cuDNN kernels of the ops in `fallbacks` (op name -> the kernel to run where cuDNN
    does not take a call), or {} when they are off or cuDNN is absent."""
    if cp is None or not enabled():
        return {}
    lib = library()
    if lib is None:
        return {}
    plans: dict = {}
    lock = threading.Lock()
    warned: set = set()

    def tf32():
        from fw.core.kernels.gpu import conv as gconv

        return bool(gconv.TF32)

    def plan_for(op, spec, what):
        """The cached plan of `spec` on this device, or None (cuDNN refused it)."""
        key = (op, spec, tf32() if spec.dtype == "float32" else False, cp.cuda.Device().id)
        p = plans.get(key)
        if p is not None or key in plans:
            return p
        with lock:
            if key in plans:
                return plans[key]
            what = what()  # formatted once per plan, not per call
            try:
                descs = _Descs(lib, op, spec, key[2], what)
                algo, ws = _choose(lib, _handle(lib, cp), op, descs, what)
                p = _Plan(op, spec, descs, algo, ws)
            except CudnnError as e:
                p = None
                FAILURES[key] = str(e)
                if op not in warned:
                    warned.add(op)
                    warnings.warn(f"fw cudnn: {e}; this {op} runs the other gpu kernel",
                                  RuntimeWarning, stacklevel=3)
            plans[key] = p
            return p

    def run(p, a_ptr, b_ptr, out_ptr, what):
        h = _handle(lib, cp)
        ws = cp.empty((p.ws,), cp.uint8) if p.ws else None
        a, b, conv, c = _operands(p.op, p.descs)
        lib.call(_OPS[p.op][2], h, ctypes.byref(p.one), a, _vp(a_ptr), b, _vp(b_ptr), conv,
                 p.algo, _vp(ws.data.ptr if ws is not None else 0), p.ws,
                 ctypes.byref(p.zero), c, _vp(out_ptr), what=what)
        return h

    def add_bias(p, h, out, bias, what):
        """out += bias (per channel), in place."""
        if bias is None:
            return
        if p.descs.bias is None:  # bfloat16: in float32 through CuPy
            shape = [1] * out.ndim
            shape[-1 if p.spec.channel_last else 1] = bias.shape[0]
            summed = (out.astype(cp.float32) + bias.astype(cp.float32).reshape(shape)) \
                .astype(out.dtype)
            _bits(cp, out)[...] = _bits(cp, summed)  # a bit copy, not a bfloat16 kernel
            return
        b = _contig(cp, bias)
        lib.call("cudnnAddTensor", h, ctypes.byref(p.one), p.descs.bias, _vp(b.data.ptr),
                 ctypes.byref(p.one), p.descs.out, _vp(out.data.ptr), what=what)

    def same_float(*arrays):
        d = arrays[0].dtype
        return d in _DATA and all(a is None or a.dtype == d for a in arrays) \
            and all(a is None or a.size for a in arrays)

    out = {}
    conv_fb = fallbacks.get("conv")
    if conv_fb is not None:
        def conv(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1,
                 channel_last=False):
            spec = None
            if same_float(x, weight, bias) and isinstance(x, cp.ndarray):
                try:
                    spec = conv_spec(x.shape, weight.shape, x.dtype, stride, padding,
                                     dilation, groups, channel_last)
                except Exception:  # the fallback raises the error with its own message
                    spec = None
            p = None
            if spec is not None:
                def what():
                    return _describe("conv", {"x": x, "weight": weight, "bias": bias},
                                     {"stride": stride, "padding": padding,
                                      "dilation": dilation, "groups": groups,
                                      "channel_last": channel_last})
                p = plan_for("conv", spec, what)
            if p is None:
                return conv_fb(x, weight, bias, stride=stride, padding=padding,
                               dilation=dilation, groups=groups, channel_last=channel_last)
            xs = _pre_pad(cp, _lift_array(_contig(cp, x), spec, channel_last), spec)
            xs = _contig(cp, xs)
            w = _weight_in(cp, weight, spec)
            res = cp.empty(join_layout(spec.y_dims[0], spec.y_dims[1], spec.y_dims[2:],
                                       channel_last), x.dtype)
            h = run(p, xs.data.ptr, w.data.ptr, res.data.ptr, what)
            add_bias(p, h, res, bias, what)
            return _unlift(res, spec, channel_last)
        out["conv"] = conv

    convt_fb = fallbacks.get("conv_transpose")
    if convt_fb is not None:
        def conv_transpose(x, weight, bias=None, stride=1, padding=0, output_padding=0,
                           dilation=1, groups=1, output_size=None, channel_last=False):
            spec = None
            if same_float(x, weight, bias) and isinstance(x, cp.ndarray):
                try:
                    spec = conv_transpose_spec(x.shape, weight.shape, x.dtype, stride,
                                               padding, output_padding, dilation, groups,
                                               output_size, channel_last)
                except Exception:
                    spec = None
            p = None
            if spec is not None:
                def what():
                    return _describe("conv_transpose", {"x": x, "weight": weight,
                                                        "bias": bias},
                                     {"stride": stride, "padding": padding,
                                      "output_padding": output_padding, "dilation": dilation,
                                      "groups": groups, "output_size": output_size,
                                      "channel_last": channel_last})
                p = plan_for("conv_transpose", spec, what)
            if p is None:
                return convt_fb(x, weight, bias, stride=stride, padding=padding,
                                output_padding=output_padding, dilation=dilation,
                                groups=groups, output_size=output_size,
                                channel_last=channel_last)
            dy = _contig(cp, _lift_array(_contig(cp, x), spec, channel_last))
            w = _weight_in(cp, weight, spec)
            res = cp.empty(join_layout(spec.x_dims[0], spec.x_dims[1], spec.x_dims[2:],
                                       channel_last), x.dtype)
            h = run(p, w.data.ptr, dy.data.ptr, res.data.ptr, what)
            add_bias(p, h, res, bias, what)
            return _unlift(res, spec, channel_last)
        out["conv_transpose"] = conv_transpose

    cgw_fb = fallbacks.get("conv_grad_weight")
    if cgw_fb is not None:
        def conv_grad_weight(x, grad_out, kernel_size=None, stride=1, padding=0, dilation=1,
                             groups=1, channel_last=False):
            spec = None
            if same_float(x, grad_out) and isinstance(x, cp.ndarray) and kernel_size:
                try:
                    spec = grad_weight_spec(x.shape, grad_out.shape, x.dtype, kernel_size,
                                            stride, padding, dilation, groups, channel_last)
                except Exception:
                    spec = None
            p = None
            if spec is not None:
                def what():
                    return _describe("conv_grad_weight", {"x": x, "grad_out": grad_out},
                                     {"kernel_size": kernel_size, "stride": stride,
                                      "padding": padding, "dilation": dilation,
                                      "groups": groups, "channel_last": channel_last})
                p = plan_for("conv_grad_weight", spec, what)
            if p is None:
                return cgw_fb(x, grad_out, kernel_size=kernel_size, stride=stride,
                              padding=padding, dilation=dilation, groups=groups,
                              channel_last=channel_last)
            xs = _pre_pad(cp, _lift_array(_contig(cp, x), spec, channel_last), spec)
            xs = _contig(cp, xs)
            dy = _contig(cp, _lift_array(_contig(cp, grad_out), spec, channel_last))
            wd = spec.w_dims
            gw = cp.empty((wd[0],) + tuple(wd[2:]) + (wd[1],) if channel_last else wd, x.dtype)
            run(p, xs.data.ptr, dy.data.ptr, gw.data.ptr, what)
            if channel_last:  # KRSC -> KCRS
                perm = (0, gw.ndim - 1) + tuple(range(1, gw.ndim - 1))
                gw = cp.ascontiguousarray(_bits(cp, gw).transpose(perm)).view(x.dtype)
            if spec.lifted:
                gw = gw.reshape(gw.shape[:2] + gw.shape[3:])
            # the bias gradient in float32 (float64 for float64), as the reference sums
            axes = tuple(i for i in range(grad_out.ndim) if i != (grad_out.ndim - 1 if
                                                                  channel_last else 1))
            acc = cp.float64 if x.dtype == np.float64 else cp.float32
            gb = grad_out.astype(acc).sum(axis=axes)
            return gw, gb.astype(x.dtype)
        out["conv_grad_weight"] = conv_grad_weight
    return out


def _unlift(res, spec, channel_last):
    if not spec.lifted:
        return res
    sh = res.shape
    return res.reshape((sh[0],) + sh[2:]) if channel_last else res.reshape(sh[:2] + sh[3:])
