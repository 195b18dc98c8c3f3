// Bindings of the int8 kernels (nn_int8.hpp): `qconv_forward`, `qmatmul_forward`,
// their implementation queries and the CPU's int8 capability. Arrays are C-contiguous
// NumPy arrays, outputs preallocated by the Python wrappers in
// fw/core/kernels/cpu/int8.py; scales and zero points come as 1-element (or
// per-channel) float32 / int32 arrays that stay alive for the call.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "nn_int8.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

using InArray = nb::ndarray<nb::ro, nb::device::cpu, nb::c_contig>;
using OutArray = nb::ndarray<nb::device::cpu, nb::c_contig>;
using IntVec = std::vector<int64_t>;
using fw::nn::QType;

std::string describe(const InArray &a) {
    const auto d = a.dtype();
    using code = nb::dlpack::dtype_code;
    std::string s = d.code == uint8_t(code::Float) ? "float" : d.code == uint8_t(code::Int) ? "int" : "uint";
    s += std::to_string(d.bits) + "[";
    for (size_t i = 0; i < a.ndim(); ++i) s += (i ? ", " : "") + std::to_string(a.shape(i));
    return s + "]";
}

QType qtype(const InArray &a) {
    const auto d = a.dtype();
    using code = nb::dlpack::dtype_code;
    if (d.lanes != 1) return QType(0);
    if (d.bits == 8 && d.code == uint8_t(code::UInt)) return QType::u8;
    if (d.bits == 8 && d.code == uint8_t(code::Int)) return QType::s8;
    if (d.bits == 32 && d.code == uint8_t(code::Float)) return QType::f32;
    return QType(0);
}

void need(bool cond, const std::string &msg) {
    if (!cond) throw std::invalid_argument(msg);
}

const float *f32s(const char *op, const char *what, const InArray &a, int64_t n1, int64_t n2 = -1) {
    need(qtype(a) == QType::f32 && (int64_t(a.size()) == n1 || int64_t(a.size()) == n2),
         std::string(op) + ": " + what + " " + describe(a) + " must be float32 with " + std::to_string(n1) +
             (n2 > 0 ? " or " + std::to_string(n2) : std::string()) + " elements");
    return static_cast<const float *>(a.data());
}

const int32_t *i32(const char *op, const char *what, const std::optional<InArray> &a) {
    if (!a) return nullptr;
    const auto d = a->dtype();
    need(d.code == uint8_t(nb::dlpack::dtype_code::Int) && d.bits == 32 && a->size() == 1,
         std::string(op) + ": " + what + " " + describe(*a) + " must be int32 with 1 element");
    return static_cast<const int32_t *>(a->data());
}

// Scales, zero points, bias, activation and residual of either op, checked.
fw::nn::QuantArgs quant_args(const char *op, int64_t channels, QType yt, const InArray &x_scale,
                             const std::optional<InArray> &x_zp, const InArray &w_scale,
                             const std::optional<InArray> &y_scale, const std::optional<InArray> &y_zp,
                             const std::optional<InArray> &bias, const std::string &activation,
                             const std::optional<InArray> &residual, bool residual_before_act,
                             const IntVec &y_shape, std::optional<std::pair<float, float>> clip) {
    fw::nn::QuantArgs q;
    q.x_scale = f32s(op, "x_scale", x_scale, 1);
    q.x_zp = i32(op, "x_zero_point", x_zp);
    q.w_scale = f32s(op, "w_scale", w_scale, 1, channels);
    q.n_w_scale = int64_t(w_scale.size());
    if (yt != QType::f32) {
        need(bool(y_scale), std::string(op) + ": a uint8/int8 output needs y_scale");
        q.y_scale = f32s(op, "y_scale", *y_scale, 1);
        q.y_zp = i32(op, "y_zero_point", y_zp);
    } else {
        need(!y_scale && !y_zp, std::string(op) + ": a float32 output takes no y_scale / y_zero_point");
    }
    if (bias) {
        need(bias->ndim() == 1, std::string(op) + ": bias " + describe(*bias) + " must be 1-D");
        q.bias = f32s(op, "bias", *bias, channels);
    }
    q.act = fw::parse_activation(activation.data(), activation.size());
    if (residual) {
        bool same = residual->ndim() == y_shape.size();
        for (size_t i = 0; same && i < y_shape.size(); ++i) same = int64_t(residual->shape(i)) == y_shape[i];
        need(same && qtype(*residual) == QType::f32,
             std::string(op) + ": residual " + describe(*residual) + " must be float32 of the output's shape");
        q.residual = static_cast<const float *>(residual->data());
        q.residual_before_act = residual_before_act;
    }
    if (clip) {
        need(clip->first <= clip->second, std::string(op) + ": clip bounds must be ordered");
        q.clip = true;
        q.clip_lo = clip->first;
        q.clip_hi = clip->second;
    }
    return q;
}

IntVec shape_of(const OutArray &a) {
    IntVec s;
    for (size_t i = 0; i < a.ndim(); ++i) s.push_back(int64_t(a.shape(i)));
    return s;
}

std::string describe_out(const OutArray &a) {
    IntVec s = shape_of(a);
    std::string r = "[";
    for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
    return r + "]";
}

QType out_type(const char *op, const OutArray &y) {
    const auto d = y.dtype();
    using code = nb::dlpack::dtype_code;
    if (d.bits == 8 && d.code == uint8_t(code::UInt)) return QType::u8;
    if (d.bits == 8 && d.code == uint8_t(code::Int)) return QType::s8;
    if (d.bits == 32 && d.code == uint8_t(code::Float)) return QType::f32;
    throw nb::type_error((std::string(op) + ": out " + describe_out(y) + " must be uint8, int8 or float32").c_str());
}

fw::nn::ConvGeom qgeom(const char *op, const InArray &x, const InArray &w, const OutArray &y, const IntVec &stride,
                       const IntVec &dilation, const IntVec &pad_l, const IntVec &pad_r, int64_t groups,
                       bool channel_last) {
    const int nd = int(x.ndim()) - 2;
    need(nd >= 1 && nd <= 3 && w.ndim() == x.ndim() && y.ndim() == x.ndim(),
         std::string(op) + ": x " + describe(x) + ", weight " + describe(w) + " and out " + describe_out(y) +
             " must all have 3 to 5 dims");
    need(stride.size() == size_t(nd) && dilation.size() == size_t(nd) && pad_l.size() == size_t(nd) &&
             pad_r.size() == size_t(nd),
         std::string(op) + ": stride, dilation and paddings need one entry per spatial dim");
    fw::nn::ConvGeom g;
    g.nd = nd;
    g.channel_last = channel_last;
    g.N = int64_t(x.shape(0));
    g.C = int64_t(channel_last ? x.shape(x.ndim() - 1) : x.shape(1));
    g.O = int64_t(w.shape(0));
    g.G = groups;
    const int64_t yc = int64_t(channel_last ? y.shape(y.ndim() - 1) : y.shape(1));
    need(int64_t(y.shape(0)) == g.N && yc == g.O && groups >= 1 && g.C == int64_t(w.shape(1)) * groups,
         std::string(op) + ": channels of x " + describe(x) + ", weight " + describe(w) + " (groups=" +
             std::to_string(groups) + ") and out " + describe_out(y) + " do not match");
    const int off = channel_last ? 1 : 2;
    for (int i = 0; i < nd; ++i) {
        g.in[i] = int64_t(x.shape(off + i));
        g.out[i] = int64_t(y.shape(off + i));
        g.k[i] = int64_t(w.shape(2 + i));
        g.stride[i] = stride[i];
        g.dil[i] = dilation[i];
        g.pad_l[i] = pad_l[i];
        g.pad_r[i] = pad_r[i];
    }
    fw::nn::check_geometry(g, op);
    return g;
}

void check_xw(const char *op, const InArray &x, const InArray &w) {
    const QType xt = qtype(x);
    if (xt != QType::u8 && xt != QType::s8)
        throw nb::type_error((std::string(op) + ": x " + describe(x) + " must be uint8 or int8").c_str());
    if (qtype(w) != QType::s8)
        throw nb::type_error((std::string(op) + ": weight " + describe(w) + " must be int8").c_str());
}

void py_qconv(const InArray &x, const InArray &w, OutArray &y, const InArray &x_scale,
              std::optional<InArray> x_zp, const InArray &w_scale, std::optional<InArray> y_scale,
              std::optional<InArray> y_zp, std::optional<InArray> bias, const std::string &activation,
              std::optional<InArray> residual, bool residual_before_act,
              std::optional<std::pair<float, float>> clip, const IntVec &stride,
              const IntVec &dilation, const IntVec &pad_l, const IntVec &pad_r, int64_t groups, bool channel_last,
              uint64_t weight_stamp) {
    const char *op = "quantized_conv2d";
    check_xw(op, x, w);
    const QType yt = out_type(op, y);
    auto g = qgeom(op, x, w, y, stride, dilation, pad_l, pad_r, groups, channel_last);
    auto q = quant_args(op, g.O, yt, x_scale, x_zp, w_scale, y_scale, y_zp, bias, activation, residual,
                        residual_before_act, shape_of(y), clip);
    need(!residual || residual->data() != y.data(), std::string(op) + ": residual must not be the output buffer");
    nb::gil_scoped_release nogil;
    fw::nn::qconv_forward(g, qtype(x), x.data(), static_cast<const int8_t *>(w.data()), yt, y.data(), q,
                          weight_stamp);
}

void py_qmatmul(const InArray &x, const InArray &w, OutArray &y, const InArray &x_scale,
                std::optional<InArray> x_zp, const InArray &w_scale, std::optional<InArray> y_scale,
                std::optional<InArray> y_zp, std::optional<InArray> bias, const std::string &activation,
                std::optional<InArray> residual, bool residual_before_act,
                std::optional<std::pair<float, float>> clip, uint64_t weight_stamp) {
    const char *op = "quantized_matmul";
    check_xw(op, x, w);
    const QType yt = out_type(op, y);
    need(x.ndim() == 2 && w.ndim() == 2 && y.ndim() == 2 && x.shape(1) == w.shape(0) && y.shape(0) == x.shape(0) &&
             y.shape(1) == w.shape(1),
         std::string(op) + ": x " + describe(x) + " @ weight " + describe(w) + " -> out " + describe_out(y) +
             " must be [M, K] @ [K, N] -> [M, N]");
    fw::nn::QMatmulGeom g;
    g.M = int64_t(x.shape(0));
    g.K = int64_t(x.shape(1));
    g.N = int64_t(w.shape(1));
    auto q = quant_args(op, g.N, yt, x_scale, x_zp, w_scale, y_scale, y_zp, bias, activation, residual,
                        residual_before_act, shape_of(y), clip);
    nb::gil_scoped_release nogil;
    fw::nn::qmatmul_forward(g, qtype(x), x.data(), static_cast<const int8_t *>(w.data()), yt, y.data(), q,
                            weight_stamp);
}

void py_quantize(const InArray &x, OutArray &q, float scale, int32_t zp, int32_t qmin, int32_t qmax) {
    const char *op = "quantize_linear";
    const QType qt = out_type(op, q);
    need(qtype(x) == QType::f32 && qt != QType::f32 && x.size() == q.size(),
         std::string(op) + ": x " + describe(x) + " must be float32 and q " + describe_out(q) +
             " uint8/int8 of as many elements");
    need(scale > 0.f, std::string(op) + ": scale must be > 0");
    nb::gil_scoped_release nogil;
    fw::nn::quantize_f32(static_cast<const float *>(x.data()), int64_t(x.size()), scale, zp, qmin, qmax, qt,
                         q.data());
}

void py_dequantize(const InArray &q, OutArray &x, float scale, int32_t zp) {
    const char *op = "dequantize_linear";
    const QType qt = qtype(q);
    need((qt == QType::u8 || qt == QType::s8) && out_type(op, x) == QType::f32 && x.size() == q.size(),
         std::string(op) + ": q " + describe(q) + " must be uint8/int8 and x " + describe_out(x) +
             " float32 of as many elements");
    nb::gil_scoped_release nogil;
    fw::nn::dequantize_to_f32(q.data(), qt, int64_t(q.size()), scale, zp, static_cast<float *>(x.data()));
}

}  // namespace

void bind_int8(nb::module_ &m) {
    m.def("qconv_forward", &py_qconv, "x"_a, "weight"_a, "out"_a.noconvert(), "x_scale"_a, "x_zero_point"_a.none(),
          "w_scale"_a, "y_scale"_a.none(), "y_zero_point"_a.none(), "bias"_a.none(), "activation"_a,
          "residual"_a.none(), "residual_before_act"_a, "clip"_a.none(), "stride"_a, "dilation"_a, "pad_l"_a, "pad_r"_a,
          "groups"_a, "channel_last"_a, "weight_stamp"_a = 0,
          "int8 convolution (u8/s8 x, s8 weight, int32 accumulation) with scales, zero points, "
          "bias, activation and residual fused, written into out (uint8/int8 requantized, or "
          "float32); see nn_int8.hpp.");
    m.def("qmatmul_forward", &py_qmatmul, "x"_a, "weight"_a, "out"_a.noconvert(), "x_scale"_a,
          "x_zero_point"_a.none(), "w_scale"_a, "y_scale"_a.none(), "y_zero_point"_a.none(), "bias"_a.none(),
          "activation"_a, "residual"_a.none(), "residual_before_act"_a, "clip"_a.none(), "weight_stamp"_a = 0,
          "int8 matmul x [M, K] (u8/s8) @ weight [K, N] (s8) with the epilogue of qconv_forward.");
    m.def("quantize_per_tensor", &py_quantize, "x"_a, "q"_a.noconvert(), "scale"_a, "zero_point"_a, "qmin"_a,
          "qmax"_a, "q = clip(rint(x / scale) + zero_point, qmin, qmax) (float32 arithmetic, NaN -> zero_point).");
    m.def("dequantize_per_tensor", &py_dequantize, "q"_a, "x"_a.noconvert(), "scale"_a, "zero_point"_a,
          "x = (q - zero_point) * scale in float32.");
    m.def("int8_cpu_isa", &fw::nn::cpu_isa, "oneDNN's effective CPU ISA name.");
    m.def("int8_exact_u8s8", &fw::nn::int8_exact_u8s8,
          "Whether the CPU multiplies u8 x s8 without int16 saturation (VNNI / AMX).");
}
