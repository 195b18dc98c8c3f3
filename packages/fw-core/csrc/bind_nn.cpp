// Bindings of the kernel family: convolution, pooling, normalization and softmax.
//
// Every function takes preallocated, C-contiguous NumPy arrays (outputs
// included: the Python wrappers in fw/core/kernels/cpu_nn.py allocate them),
// float32 or bfloat16 passed as uint16 bits, validates shapes against each
// other, and runs the kernel with the GIL released. Geometry that the shapes
// do not fix (strides, paddings, ...) comes as int sequences, one entry per
// spatial dim.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <tuple>
#include <utility>
#include <string>
#include <vector>

#include "nn_conv.hpp"
#include "nn_norm.hpp"
#include "nn_pool.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

using InArray = nb::ndarray<nb::ro, nb::device::cpu, nb::c_contig>;
using OutArray = nb::ndarray<nb::device::cpu, nb::c_contig>;
using IntVec = std::vector<int64_t>;

fw::DType to_dtype(const nb::dlpack::dtype &d) {
    using code = nb::dlpack::dtype_code;
    if (d.lanes != 1) return fw::DType::undefined;
    if (d.code == uint8_t(code::Float) && d.bits == 32) return fw::DType::f32;
    if ((d.code == uint8_t(code::UInt) || d.code == uint8_t(code::Bfloat)) && d.bits == 16) return fw::DType::bf16;
    return fw::DType::undefined;
}

std::string dtype_text(const nb::dlpack::dtype &d) {
    using code = nb::dlpack::dtype_code;
    if (d.code == uint8_t(code::Float)) return "float" + std::to_string(d.bits);
    if (d.code == uint8_t(code::Int)) return "int" + std::to_string(d.bits);
    if (d.code == uint8_t(code::UInt)) return d.bits == 16 ? "bfloat16" : "uint" + std::to_string(d.bits);
    if (d.code == uint8_t(code::Bfloat)) return "bfloat16";
    if (d.code == uint8_t(code::Bool)) return "bool";
    return "dtype(code=" + std::to_string(d.code) + ")";
}

template <class A>
std::string describe(const A &a) {
    std::string s = dtype_text(a.dtype()) + "[";
    for (size_t i = 0; i < a.ndim(); ++i) s += (i ? ", " : "") + std::to_string(a.shape(i));
    return s + "]";
}

// A float operand (f32 or bf16 bits) of dtype `want` (undefined: any float).
template <class A>
fw::Operand fop(const char *op, const char *what, const A &a, fw::DType want = fw::DType::undefined) {
    fw::Operand o;
    o.data = const_cast<void *>(static_cast<const void *>(a.data()));
    o.ndim = int(a.ndim());
    o.shape = a.shape_ptr();
    o.dtype = to_dtype(a.dtype());
    if (o.dtype == fw::DType::undefined || (want != fw::DType::undefined && o.dtype != want))
        throw nb::type_error((std::string(op) + ": " + what + " " + describe(a) + " must be " +
                              (want == fw::DType::undefined ? std::string("float32 or bfloat16 (uint16 bits)")
                                                            : std::string(fw::dtype_name(want))))
                                 .c_str());
    return o;
}

template <class A>
const int32_t *int32_data(const char *op, const char *what, const A &a) {
    const auto d = a.dtype();
    if (d.code != uint8_t(nb::dlpack::dtype_code::Int) || d.bits != 32 || d.lanes != 1)
        throw nb::type_error((std::string(op) + ": " + what + " " + describe(a) + " must be int32").c_str());
    return static_cast<const int32_t *>(a.data());
}

template <class A, class B>
void same_shape(const char *op, const char *wa, const A &a, const char *wb, const B &b) {
    bool ok = a.ndim() == b.ndim();
    for (size_t i = 0; ok && i < a.ndim(); ++i) ok = a.shape(i) == b.shape(i);
    if (!ok)
        throw std::invalid_argument(std::string(op) + ": " + wa + " " + describe(a) + " and " + wb + " " +
                                    describe(b) + " must have the same shape");
}

void need(bool cond, const std::string &msg) {
    if (!cond) throw std::invalid_argument(msg);
}

// ---------------------------------------------------------------- convolution

// Geometry of a convolution from its src / weight / dst arrays and attributes.
template <class S, class W, class D>
fw::nn::ConvGeom conv_geom(const char *op, const S &src, const W &w, const D &dst, const IntVec &stride,
                           const IntVec &dilation, const IntVec &pad_l, const IntVec &pad_r, int64_t groups,
                           bool channel_last) {
    const int nd = int(src.ndim()) - 2;
    need(nd >= 1 && nd <= 3 && w.ndim() == src.ndim() && dst.ndim() == src.ndim(),
         std::string(op) + ": x " + describe(src) + ", weight " + describe(w) + " and output " + describe(dst) +
             " must all have 3 to 5 dims");
    need(stride.size() == size_t(nd) && dilation.size() == size_t(nd) && pad_l.size() == size_t(nd) &&
             pad_r.size() == size_t(nd),
         std::string(op) + ": stride, dilation and paddings need one entry per spatial dim (" +
             std::to_string(nd) + ")");
    fw::nn::ConvGeom g;
    g.nd = nd;
    g.channel_last = channel_last;
    g.N = int64_t(src.shape(0));
    g.C = int64_t(channel_last ? src.shape(src.ndim() - 1) : src.shape(1));
    g.O = int64_t(w.shape(0));
    g.G = groups;
    const int64_t dst_c = int64_t(channel_last ? dst.shape(dst.ndim() - 1) : dst.shape(1));
    need(int64_t(dst.shape(0)) == g.N && dst_c == g.O && groups >= 1 && g.C == int64_t(w.shape(1)) * groups,
         std::string(op) + ": channels of x " + describe(src) + ", weight " + describe(w) + " (groups=" +
             std::to_string(groups) + ") and output " + describe(dst) + " do not match");
    const int off = channel_last ? 1 : 2;
    for (int i = 0; i < nd; ++i) {
        g.in[i] = int64_t(src.shape(off + i));
        g.out[i] = int64_t(dst.shape(off + i));
        g.k[i] = int64_t(w.shape(2 + i));
        g.stride[i] = stride[i];
        g.dil[i] = dilation[i];
        g.pad_l[i] = pad_l[i];
        g.pad_r[i] = pad_r[i];
    }
    fw::nn::check_geometry(g, op);
    return g;
}

void py_conv_forward(const InArray &x, const InArray &w, OutArray &y, std::optional<InArray> bias,
                     std::optional<InArray> residual, const std::string &activation, const IntVec &stride,
                     const IntVec &dilation, const IntVec &pad_l, const IntVec &pad_r, int64_t groups,
                     bool channel_last, uint64_t weight_stamp) {
    const char *op = "conv";
    auto g = conv_geom(op, x, w, y, stride, dilation, pad_l, pad_r, groups, channel_last);
    auto xo = fop(op, "x", x);
    auto wo = fop(op, "weight", w, xo.dtype);
    auto yo = fop(op, "out", y, xo.dtype);
    fw::nn::ConvEpilogue ep;
    fw::Operand bo, ro;
    if (bias) {
        bo = fop(op, "bias", *bias, xo.dtype);
        need(bias->ndim() == 1 && int64_t(bias->shape(0)) == g.O,
             std::string(op) + ": bias " + describe(*bias) + " must be [" + std::to_string(g.O) + "]");
        ep.bias = &bo;
    }
    if (residual) {
        ro = fop(op, "residual", *residual, xo.dtype);
        same_shape(op, "residual", *residual, "out", y);
        need(ro.data != yo.data, std::string(op) + ": residual must not be the output buffer");
        ep.residual = &ro;
    }
    ep.act = fw::parse_activation(activation.data(), activation.size());
    nb::gil_scoped_release nogil;
    fw::nn::conv_forward(g, xo, wo, yo, ep, weight_stamp);
}

void py_conv_backward_data(const InArray &gy, const InArray &w, OutArray &gx, const IntVec &stride,
                           const IntVec &dilation, const IntVec &pad_l, const IntVec &pad_r, int64_t groups,
                           bool channel_last) {
    const char *op = "conv backward data";
    auto g = conv_geom(op, gx, w, gy, stride, dilation, pad_l, pad_r, groups, channel_last);
    auto go = fop(op, "grad_out", gy);
    auto wo = fop(op, "weight", w, go.dtype);
    auto xo = fop(op, "grad_x", gx, go.dtype);
    nb::gil_scoped_release nogil;
    fw::nn::conv_backward_data(g, go, wo, xo);
}

void py_conv_backward_weights(const InArray &x, const InArray &gy, OutArray &gw, std::optional<OutArray> gb,
                              const IntVec &stride, const IntVec &dilation, const IntVec &pad_l,
                              const IntVec &pad_r, int64_t groups, bool channel_last) {
    const char *op = "conv backward weights";
    auto g = conv_geom(op, x, gw, gy, stride, dilation, pad_l, pad_r, groups, channel_last);
    auto xo = fop(op, "x", x);
    auto go = fop(op, "grad_out", gy, xo.dtype);
    auto wo = fop(op, "grad_weight", gw, xo.dtype);
    fw::Operand bo;
    if (gb) {
        bo = fop(op, "grad_bias", *gb, xo.dtype);
        need(gb->ndim() == 1 && int64_t(gb->shape(0)) == g.O,
             std::string(op) + ": grad_bias " + describe(*gb) + " must be [" + std::to_string(g.O) + "]");
    }
    nb::gil_scoped_release nogil;
    fw::nn::conv_backward_weights(g, xo, go, wo, gb ? &bo : nullptr);
}

std::string py_conv_impl(const InArray &x, const InArray &w, const InArray &y, const IntVec &stride,
                         const IntVec &dilation, const IntVec &pad_l, const IntVec &pad_r, int64_t groups,
                         bool channel_last, int which) {
    need(which >= 0 && which <= 2, "conv_impl: which must be 0 (forward), 1 (backward data) or 2 (backward "
                                   "weights), got " + std::to_string(which));
    auto g = conv_geom("conv_impl", x, w, y, stride, dilation, pad_l, pad_r, groups, channel_last);
    return fw::nn::conv_impl(g, fop("conv_impl", "x", x).dtype, which);
}


// ---------------------------------------------------------------- pooling

template <class X, class Y>
fw::nn::PoolGeom pool_geom(const char *op, const X &x, const Y &y, const IntVec &kernel, const IntVec &stride,
                           const IntVec &pad_b, const IntVec &pad_e, bool channel_last, bool check = true) {
    const int nd = int(x.ndim()) - 2;
    need(nd >= 1 && nd <= 3 && y.ndim() == x.ndim(),
         std::string(op) + ": x " + describe(x) + " and out " + describe(y) + " must have 3 to 5 dims");
    fw::nn::PoolGeom g;
    g.nd = nd;
    g.channel_last = channel_last;
    g.N = int64_t(x.shape(0));
    g.C = int64_t(channel_last ? x.shape(x.ndim() - 1) : x.shape(1));
    const int64_t yc = int64_t(channel_last ? y.shape(y.ndim() - 1) : y.shape(1));
    need(int64_t(y.shape(0)) == g.N && yc == g.C,
         std::string(op) + ": x " + describe(x) + " and out " + describe(y) + " differ in batch or channels");
    const int off = channel_last ? 1 : 2;
    for (int i = 0; i < nd; ++i) {
        g.in[i] = int64_t(x.shape(off + i));
        g.out[i] = int64_t(y.shape(off + i));
    }
    if (!check) {
        for (int i = 0; i < nd; ++i) g.k[i] = g.stride[i] = 1;
        return g;
    }
    need(kernel.size() == size_t(nd) && stride.size() == size_t(nd) && pad_b.size() == size_t(nd) &&
             pad_e.size() == size_t(nd),
         std::string(op) + ": kernel, stride and paddings need one entry per spatial dim (" + std::to_string(nd) +
             ")");
    for (int i = 0; i < nd; ++i) {
        g.k[i] = kernel[i];
        g.stride[i] = stride[i];
        g.pad_b[i] = pad_b[i];
        g.pad_e[i] = pad_e[i];
    }
    fw::nn::check_pool_geometry(g, op);
    return g;
}

void py_max_pool_forward(const InArray &x, OutArray &y, std::optional<OutArray> mask, const IntVec &kernel,
                         const IntVec &stride, const IntVec &pad_b, const IntVec &pad_e, bool channel_last) {
    const char *op = "max_pool";
    auto g = pool_geom(op, x, y, kernel, stride, pad_b, pad_e, channel_last);
    auto xo = fop(op, "x", x);
    auto yo = fop(op, "out", y, xo.dtype);
    int32_t *mp = nullptr;
    if (mask) {
        same_shape(op, "mask", *mask, "out", y);
        mp = const_cast<int32_t *>(int32_data(op, "mask", *mask));
    }
    nb::gil_scoped_release nogil;
    fw::nn::max_pool_forward(g, xo, yo, mp);
}

void py_avg_pool_forward(const InArray &x, OutArray &y, const IntVec &kernel, const IntVec &stride,
                         const IntVec &pad_b, const IntVec &pad_e, bool exclusive, double divisor_override,
                         bool channel_last) {
    const char *op = "avg_pool";
    auto g = pool_geom(op, x, y, kernel, stride, pad_b, pad_e, channel_last);
    auto xo = fop(op, "x", x);
    auto yo = fop(op, "out", y, xo.dtype);
    nb::gil_scoped_release nogil;
    fw::nn::avg_pool_forward(g, xo, yo, exclusive, divisor_override);
}

void py_max_pool_backward(const InArray &gy, const InArray &mask, OutArray &gx, bool channel_last) {
    const char *op = "max_pool backward";
    auto g = pool_geom(op, gx, gy, {}, {}, {}, {}, channel_last, false);
    auto go = fop(op, "grad_out", gy, fw::DType::f32);
    auto xo = fop(op, "grad_x", gx, fw::DType::f32);
    same_shape(op, "mask", mask, "grad_out", gy);
    const int32_t *mp = int32_data(op, "mask", mask);
    nb::gil_scoped_release nogil;
    fw::nn::max_pool_backward(g, static_cast<const float *>(go.data), mp, static_cast<float *>(xo.data));
}

void py_avg_pool_backward(const InArray &gy, OutArray &gx, const IntVec &kernel, const IntVec &stride,
                          const IntVec &pad_b, const IntVec &pad_e, bool exclusive, double divisor_override,
                          bool channel_last) {
    const char *op = "avg_pool backward";
    auto g = pool_geom(op, gx, gy, kernel, stride, pad_b, pad_e, channel_last);
    auto go = fop(op, "grad_out", gy, fw::DType::f32);
    auto xo = fop(op, "grad_x", gx, fw::DType::f32);
    nb::gil_scoped_release nogil;
    fw::nn::avg_pool_backward(g, static_cast<const float *>(go.data), static_cast<float *>(xo.data), exclusive,
                              divisor_override);
}

// ---------------------------------------------------------------- normalization

// A float32 vector of n elements (or absent).
template <class A>
float *vec(const char *op, const char *what, const A &a, int64_t n) {
    auto o = fop(op, what, a, fw::DType::f32);
    need(a.ndim() == 1 && int64_t(a.shape(0)) == n,
         std::string(op) + ": " + what + " " + describe(a) + " must be [" + std::to_string(n) + "]");
    return static_cast<float *>(o.data);
}

template <class A>
float *opt_vec(const char *op, const char *what, const std::optional<A> &a, int64_t n) {
    return a ? vec(op, what, *a, n) : nullptr;
}

fw::nn::BnGeom bn_geom(const char *op, const InArray &x, bool channel_last) {
    need(x.ndim() >= 2, std::string(op) + ": x " + describe(x) + " must have at least 2 dims");
    fw::nn::BnGeom g;
    g.channel_last = channel_last;
    g.N = int64_t(x.shape(0));
    g.C = int64_t(channel_last ? x.shape(x.ndim() - 1) : x.shape(1));
    g.P = 1;
    for (size_t i = channel_last ? 1 : 2; i < (channel_last ? x.ndim() - 1 : x.ndim()); ++i) g.P *= int64_t(x.shape(i));
    need(g.N * g.C * g.P > 0, std::string(op) + ": x " + describe(x) + " is empty");
    return g;
}

void py_batch_norm_forward(const InArray &x, OutArray &y, std::optional<InArray> scale, std::optional<InArray> shift,
                           const InArray &rm, const InArray &rv, OutArray &mean_out, OutArray &var_out,
                           OutArray &saved_mean, OutArray &saved_inv_std, double eps, double momentum,
                           bool training, bool channel_last) {
    const char *op = "batch_norm";
    auto g = bn_geom(op, x, channel_last);
    auto xo = fop(op, "x", x);
    same_shape(op, "x", x, "out", y);
    auto yo = fop(op, "out", y, xo.dtype);
    const int64_t C = g.C;
    float *sc = opt_vec(op, "weight", scale, C), *sh = opt_vec(op, "bias", shift, C);
    float *prm = vec(op, "running_mean", rm, C), *prv = vec(op, "running_var", rv, C);
    float *mo = vec(op, "mean_out", mean_out, C), *vo = vec(op, "variance_out", var_out, C);
    float *sm = vec(op, "saved_mean", saved_mean, C), *si = vec(op, "saved_inv_std", saved_inv_std, C);
    nb::gil_scoped_release nogil;
    fw::nn::batch_norm_forward(g, xo, yo, sc, sh, prm, prv, mo, vo, sm, si, float(eps), float(momentum), training);
}

void py_batch_norm_backward(const InArray &x, const InArray &gy, std::optional<InArray> scale, const InArray &mean,
                            const InArray &inv_std, OutArray &gx, OutArray &gscale, OutArray &gshift, double eps,
                            bool batch_stats, bool channel_last) {
    const char *op = "batch_norm backward";
    auto g = bn_geom(op, x, channel_last);
    auto xo = fop(op, "x", x);
    same_shape(op, "x", x, "grad_out", gy);
    same_shape(op, "x", x, "grad_x", gx);
    auto go = fop(op, "grad_out", gy, xo.dtype);
    auto gxo = fop(op, "grad_x", gx, xo.dtype);
    const int64_t C = g.C;
    float *sc = opt_vec(op, "weight", scale, C), *pm = vec(op, "saved_mean", mean, C);
    float *pi = vec(op, "saved_inv_std", inv_std, C);
    float *gs = vec(op, "grad_weight", gscale, C), *gb = vec(op, "grad_bias", gshift, C);
    nb::gil_scoped_release nogil;
    fw::nn::batch_norm_backward(g, xo, go, sc, pm, pi, float(eps), batch_stats, gxo, gs, gb);
}

std::pair<int64_t, int64_t> ln_split(const char *op, const InArray &x, int64_t begin) {
    need(begin >= 0 && begin < int64_t(x.ndim()),
         std::string(op) + ": begin_norm_axis " + std::to_string(begin) + " out of range for x " + describe(x));
    int64_t M = 1, D = 1;
    for (size_t i = 0; i < x.ndim(); ++i) (int64_t(i) < begin ? M : D) *= int64_t(x.shape(i));
    need(M * D > 0, std::string(op) + ": x " + describe(x) + " is empty");
    return {M, D};
}

void py_layer_norm_forward(const InArray &x, OutArray &y, std::optional<InArray> scale, std::optional<InArray> shift,
                           OutArray &mean, OutArray &inv_std, double eps, int64_t begin) {
    const char *op = "layer_norm";
    auto [M, D] = ln_split(op, x, begin);
    auto xo = fop(op, "x", x);
    same_shape(op, "x", x, "out", y);
    auto yo = fop(op, "out", y, xo.dtype);
    float *sc = opt_vec(op, "weight", scale, D), *sh = opt_vec(op, "bias", shift, D);
    need(mean.size() == size_t(M) && inv_std.size() == size_t(M),
         std::string(op) + ": mean and inv_std must have " + std::to_string(M) + " elements");
    float *pm = static_cast<float *>(fop(op, "mean", mean, fw::DType::f32).data);
    float *pi = static_cast<float *>(fop(op, "inv_std", inv_std, fw::DType::f32).data);
    nb::gil_scoped_release nogil;
    fw::nn::layer_norm_forward(M, D, xo, yo, sc, sh, float(eps), pm, pi);
}

void py_layer_norm_backward(const InArray &x, const InArray &gy, std::optional<InArray> scale, const InArray &mean,
                            const InArray &inv_std, OutArray &gx, OutArray &gscale, OutArray &gshift, double eps,
                            int64_t begin) {
    const char *op = "layer_norm backward";
    auto [M, D] = ln_split(op, x, begin);
    auto xo = fop(op, "x", x);
    same_shape(op, "x", x, "grad_out", gy);
    same_shape(op, "x", x, "grad_x", gx);
    auto go = fop(op, "grad_out", gy, xo.dtype);
    auto gxo = fop(op, "grad_x", gx, xo.dtype);
    float *sc = opt_vec(op, "weight", scale, D);
    need(mean.size() == size_t(M) && inv_std.size() == size_t(M),
         std::string(op) + ": mean and inv_std must have " + std::to_string(M) + " elements");
    float *pm = static_cast<float *>(fop(op, "mean", mean, fw::DType::f32).data);
    float *pi = static_cast<float *>(fop(op, "inv_std", inv_std, fw::DType::f32).data);
    float *gs = vec(op, "grad_weight", gscale, D), *gb = vec(op, "grad_bias", gshift, D);
    nb::gil_scoped_release nogil;
    fw::nn::layer_norm_backward(M, D, xo, go, sc, pm, pi, float(eps), gxo, gs, gb);
}

// ---------------------------------------------------------------- softmax

std::tuple<int64_t, int64_t, int64_t> sm_split(const char *op, const InArray &x, int64_t axis) {
    need(axis >= 0 && axis < int64_t(x.ndim()),
         std::string(op) + ": axis " + std::to_string(axis) + " out of range for x " + describe(x));
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < int64_t(x.ndim()); ++i)
        if (i < axis) outer *= int64_t(x.shape(i));
        else if (i > axis) inner *= int64_t(x.shape(i));
    const int64_t len = int64_t(x.shape(size_t(axis)));
    need(outer * len * inner > 0, std::string(op) + ": x " + describe(x) + " is empty");
    return {outer, len, inner};
}

void py_softmax_forward(const InArray &x, OutArray &y, int64_t axis, bool log) {
    const char *op = log ? "log_softmax" : "softmax";
    auto [outer, len, inner] = sm_split(op, x, axis);
    auto xo = fop(op, "x", x);
    same_shape(op, "x", x, "out", y);
    auto yo = fop(op, "out", y, xo.dtype);
    nb::gil_scoped_release nogil;
    fw::nn::softmax_forward(outer, len, inner, xo, yo, log);
}

void py_softmax_backward(const InArray &y, const InArray &gy, OutArray &gx, int64_t axis, bool log) {
    const char *op = log ? "log_softmax backward" : "softmax backward";
    auto [outer, len, inner] = sm_split(op, y, axis);
    auto yo = fop(op, "out", y, fw::DType::f32);
    same_shape(op, "out", y, "grad_out", gy);
    same_shape(op, "out", y, "grad_x", gx);
    auto go = fop(op, "grad_out", gy, fw::DType::f32);
    auto gxo = fop(op, "grad_x", gx, fw::DType::f32);
    need(gxo.data != yo.data && gxo.data != go.data, std::string(op) + ": grad_x must not alias its inputs");
    nb::gil_scoped_release nogil;
    fw::nn::softmax_backward(outer, len, inner, static_cast<const float *>(yo.data),
                             static_cast<const float *>(go.data), static_cast<float *>(gxo.data), log);
}

// Whether every element is finite (no NaN, no +-Inf): the fused kernels' guard
// (fw/core/kernels/cpu/fused.py). Branch-free so the compiler vectorizes it.
bool py_all_finite(const InArray &a) {
    auto o = fop("all_finite", "x", a);
    const int64_t n = int64_t(a.size());
    if (o.dtype == fw::DType::f32) {
        const uint32_t *p = static_cast<const uint32_t *>(o.data);
        uint32_t bad = 0;
        for (int64_t i = 0; i < n; ++i) bad |= uint32_t((p[i] & 0x7f800000u) == 0x7f800000u);
        return !bad;
    }
    const uint16_t *p = static_cast<const uint16_t *>(o.data);
    uint32_t bad = 0;
    for (int64_t i = 0; i < n; ++i) bad |= uint32_t((p[i] & 0x7f80u) == 0x7f80u);
    return !bad;
}

bool py_any_nan(const InArray &a) {
    auto o = fop("any_nan", "x", a);
    const int64_t n = int64_t(a.size());
    bool r = false;
    if (o.dtype == fw::DType::f32) {
        const float *p = static_cast<const float *>(o.data);
        for (int64_t i = 0; i < n; ++i) r |= p[i] != p[i];
    } else {
        const uint16_t *p = static_cast<const uint16_t *>(o.data);
        for (int64_t i = 0; i < n; ++i) r |= (p[i] & 0x7fff) > 0x7f80;
    }
    return r;
}

}  // namespace

void bind_int8(nb::module_ &m);  // nn_int8_bind.cpp
void bind_woq(nb::module_ &m);   // nn_woq_bind.cpp
void bind_conv_small(nb::module_ &m);  // nn_conv_small_bind.cpp

void bind_nn(nb::module_ &m) {
    bind_int8(m);
    bind_woq(m);
    bind_conv_small(m);
    m.def("conv_forward", &py_conv_forward, "x"_a, "weight"_a, "out"_a.noconvert(), "bias"_a.none(), "residual"_a.none(),
          "activation"_a, "stride"_a, "dilation"_a, "pad_l"_a, "pad_r"_a, "groups"_a, "channel_last"_a,
          "weight_stamp"_a = 0,
          "out = act(conv(x, weight) + bias) + residual (oneDNN), written into out. x [N, C, *S] "
          "(channel_last: [N, *S, C]), weight [O, C/groups, *K], out [N, O, *Q] in x's layout; "
          "dilation 1 = dense. weight_stamp != 0 promises that (weight's address, stamp) names "
          "bytes that never change: the weights are then reordered for the primitive once.");
    m.def("conv_backward_data", &py_conv_backward_data, "grad_out"_a, "weight"_a, "grad_x"_a.noconvert(), "stride"_a,
          "dilation"_a, "pad_l"_a, "pad_r"_a, "groups"_a, "channel_last"_a,
          "grad_x = the adjoint of conv(., weight) applied to grad_out (also conv_transpose's forward).");
    m.def("conv_backward_weights", &py_conv_backward_weights, "x"_a, "grad_out"_a, "grad_weight"_a.noconvert(),
          "grad_bias"_a.noconvert().none(), "stride"_a, "dilation"_a, "pad_l"_a, "pad_r"_a, "groups"_a, "channel_last"_a,
          "grad_weight (and grad_bias = sum of grad_out over batch and space) of conv(x, weight).");
    m.def("conv_impl", &py_conv_impl, "x"_a, "weight"_a, "out"_a, "stride"_a, "dilation"_a, "pad_l"_a,
          "pad_r"_a, "groups"_a, "channel_last"_a, "which"_a,
          "The oneDNN implementation of a conv pass (0 forward, 1 backward data, 2 backward weights).");
    m.def("conv_set_layout_policy", &fw::nn::conv_set_layout_policy, "policy"_a,
          "0: automatic; 1: oneDNN works on the caller's plain activations; 2: oneDNN picks the "
          "activation layout (with reorders). For tuning and tests.");
    m.def("conv_layout_policy", &fw::nn::conv_layout_policy);
    m.def("conv_set_prefer_jit_dw", &fw::nn::conv_set_prefer_jit_dw, "on"_a,
          "Channel-last float32 depthwise forward convolutions take oneDNN's jit_dw kernel where "
          "it is offered (True, the default) or oneDNN's first choice, brdgmm_dw (False). For "
          "benchmarks and tests.");
    m.def("conv_prefer_jit_dw", &fw::nn::conv_prefer_jit_dw);

    m.def("max_pool_forward", &py_max_pool_forward, "x"_a, "out"_a.noconvert(), "mask"_a.noconvert().none(), "kernel"_a, "stride"_a,
          "pad_b"_a, "pad_e"_a, "channel_last"_a,
          "Max pooling into out; mask (int32, out's shape, or None) gets the flat spatial index of each max.");
    m.def("avg_pool_forward", &py_avg_pool_forward, "x"_a, "out"_a.noconvert(), "kernel"_a, "stride"_a, "pad_b"_a, "pad_e"_a,
          "exclusive"_a, "divisor_override"_a, "channel_last"_a,
          "Average pooling into out; divisor_override <= 0 means none.");
    m.def("max_pool_backward", &py_max_pool_backward, "grad_out"_a, "mask"_a, "grad_x"_a.noconvert(), "channel_last"_a,
          "grad_x (float32) = scatter-add of grad_out at the flat spatial positions mask (int32).");
    m.def("avg_pool_backward", &py_avg_pool_backward, "grad_out"_a, "grad_x"_a.noconvert(), "kernel"_a, "stride"_a, "pad_b"_a,
          "pad_e"_a, "exclusive"_a, "divisor_override"_a, "channel_last"_a,
          "grad_x (float32) of avg_pool_forward for grad_out (float32).");
    m.def("batch_norm_forward", &py_batch_norm_forward, "x"_a, "out"_a.noconvert(), "weight"_a.none(),
          "bias"_a.none(), "running_mean"_a, "running_var"_a, "mean_out"_a.noconvert(),
          "variance_out"_a.noconvert(), "saved_mean"_a.noconvert(), "saved_inv_std"_a.noconvert(),
          "epsilon"_a, "momentum"_a, "training"_a, "channel_last"_a,
          "fw's batch_norm into preallocated outputs; statistics and weight/bias are float32 [C].");
    m.def("batch_norm_backward", &py_batch_norm_backward, "x"_a, "grad_out"_a, "weight"_a.none(), "saved_mean"_a,
          "saved_inv_std"_a, "grad_x"_a.noconvert(), "grad_weight"_a.noconvert(), "grad_bias"_a.noconvert(), "epsilon"_a, "batch_stats"_a,
          "channel_last"_a, "Gradients of batch_norm's out w.r.t. x, weight and bias.");
    m.def("layer_norm_forward", &py_layer_norm_forward, "x"_a, "out"_a.noconvert(), "weight"_a.none(),
          "bias"_a.none(), "mean"_a.noconvert(), "inv_std"_a.noconvert(), "epsilon"_a, "begin_norm_axis"_a,
          "fw's layer_norm into preallocated outputs; weight/bias/mean/inv_std are float32.");
    m.def("layer_norm_backward", &py_layer_norm_backward, "x"_a, "grad_out"_a, "weight"_a.none(), "mean"_a,
          "inv_std"_a, "grad_x"_a.noconvert(), "grad_weight"_a.noconvert(), "grad_bias"_a.noconvert(), "epsilon"_a, "begin_norm_axis"_a,
          "Gradients of layer_norm's out w.r.t. x, weight and bias (flattened, float32).");
    m.def("softmax_forward", &py_softmax_forward, "x"_a, "out"_a.noconvert(), "axis"_a, "log"_a,
          "softmax (log=False) or log_softmax along axis into out.");
    m.def("softmax_backward", &py_softmax_backward, "out"_a, "grad_out"_a, "grad_x"_a.noconvert(), "axis"_a, "log"_a,
          "grad_x of (log_)softmax from its result out and grad_out (float32).");
    m.def("all_finite", &py_all_finite, "x"_a,
          "Whether a float32 / bfloat16 (uint16 bits) array holds no NaN and no infinity.");
    m.def("any_nan", &py_any_nan, "x"_a, "Whether a float32 / bfloat16 (uint16 bits) array holds a NaN.");
    m.def("nn_set_cache_capacity", &fw::nn::cache_set_capacity, "capacity"_a,
          "Bounds each nn primitive cache (LRU, per primitive kind); 0 disables caching.");
    m.def("nn_clear_cache", &fw::nn::cache_clear, "Empties the nn primitive caches.");
    m.def(
        "nn_cache_info",
        []() {
            nb::dict d;
            for (int i = 0; i < int(fw::nn::Kind::count); ++i) {
                auto k = fw::nn::Kind(i);
                const fw::CacheStats s = fw::nn::cache(k).stats();
                nb::dict e;
                e["hits"] = s.hits;
                e["misses"] = s.misses;
                e["evictions"] = s.evictions;
                e["size"] = s.size;
                e["capacity"] = s.capacity;
                d[fw::nn::kind_name(k)] = e;
            }
            return d;
        },
        "Per primitive kind: dict with hits, misses, evictions, size, capacity.");
    m.def(
        "nn_cached_impls",
        []() {
            nb::dict d;
            for (int i = 0; i < int(fw::nn::Kind::count); ++i) {
                auto k = fw::nn::Kind(i);
                nb::list l;
                for (auto &s : fw::nn::cached_impls(k)) l.append(nb::str(s.c_str()));
                d[fw::nn::kind_name(k)] = l;
            }
            return d;
        },
        "Per primitive kind: the oneDNN implementation name of every cached primitive "
        "(\"ref...\" is oneDNN's slow reference fallback).");
    m.def(
        "nn_packed_constants",
        []() {
            size_t n = 0;
            for (int i = 0; i < int(fw::nn::Kind::count); ++i)
                for (auto &p : fw::nn::cache(fw::nn::Kind(i)).values()) n += p->packed_count();
            return n;
        },
        "How many constant inputs (weights) the cached primitives hold reordered.");
}
