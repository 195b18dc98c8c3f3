// Bindings of a float32 forward convolution bound once (`ConvPlan`) and of the
// channel-last depthwise 3x3 kernel (nn_dwconv.hpp).
//
// Why a plan: `conv_forward` receives its geometry as four Python lists, an activation
// name and eleven other arguments on every call, converts them and re-derives and
// re-checks the geometry from the arrays: ~13 nanobind conversions per call. A compiled
// predictor calls each convolution with the same attributes and, per input shape, the
// same geometry, so fw.core.kernels.cpu.prepared makes one ConvPlan per (op, input
// shape) and calls it with the five arrays only. The plan checks the arrays against the
// geometry it holds (shapes, dtypes, contiguity: integer comparisons) and runs the same
// `fw::nn::conv_forward` as `conv_forward`, so results are bit-identical.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>
#include <vector>

#include "activation.hpp"
#include "nn_conv.hpp"
#include "nn_conv_small.hpp"
#include "nn_dwconv.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

using F32In = nb::ndarray<nb::ro, float, nb::device::cpu, nb::c_contig>;
using F32Out = nb::ndarray<float, nb::device::cpu, nb::c_contig>;
using IntVec = std::vector<int64_t>;

std::string dims_text(const IntVec &d) {
    std::string s = "[";
    for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
    return s + "]";
}

template <class A>
std::string shape_text(const A &a) {
    std::string s = "[";
    for (size_t i = 0; i < a.ndim(); ++i) s += (i ? ", " : "") + std::to_string(a.shape(i));
    return s + "]";
}

template <class A>
bool has_shape(const A &a, const IntVec &d) {
    if (a.ndim() != d.size()) return false;
    for (size_t i = 0; i < d.size(); ++i)
        if (int64_t(a.shape(i)) != d[i]) return false;
    return true;
}

fw::Operand f32_operand(void *data, int ndim, const int64_t *shape) {
    fw::Operand o;
    o.data = data;
    o.ndim = ndim;
    o.shape = shape;
    o.dtype = fw::DType::f32;
    return o;
}

// The geometry of (x, weight, out) shapes and attributes, checked as conv_forward does.
fw::nn::ConvGeom plan_geom(const char *op, const IntVec &xs, const IntVec &ws, const IntVec &ys,
                           const IntVec &stride, const IntVec &dilation, const IntVec &pad_l,
                           const IntVec &pad_r, int64_t groups, bool channel_last) {
    const int nd = int(xs.size()) - 2;
    auto need = [&](bool ok, const std::string &why) {
        if (!ok)
            throw std::invalid_argument(std::string(op) + ": " + why + " (x " + dims_text(xs) + ", weight " +
                                        dims_text(ws) + ", out " + dims_text(ys) + ")");
    };
    need(nd >= 1 && nd <= 3 && ws.size() == xs.size() && ys.size() == xs.size(),
         "x, weight and out must all have 3 to 5 dims");
    need(stride.size() == size_t(nd) && dilation.size() == size_t(nd) && pad_l.size() == size_t(nd) &&
             pad_r.size() == size_t(nd),
         "stride, dilation and paddings need one entry per spatial dim");
    for (auto v : {&xs, &ws, &ys})
        for (int64_t d : *v) need(d >= 1 && d <= (int64_t(1) << 40), "dims must be positive");
    fw::nn::ConvGeom g;
    g.nd = nd;
    g.channel_last = channel_last;
    g.N = xs[0];
    g.C = channel_last ? xs.back() : xs[1];
    g.O = ws[0];
    g.G = groups;
    const int64_t yc = channel_last ? ys.back() : ys[1];
    need(ys[0] == g.N && yc == g.O && groups >= 1 && g.C == ws[1] * groups,
         "channels of x, weight (groups=" + std::to_string(groups) + ") and out do not match");
    const int off = channel_last ? 1 : 2;
    for (int i = 0; i < nd; ++i) {
        g.in[i] = xs[off + i];
        g.out[i] = ys[off + i];
        g.k[i] = ws[2 + i];
        g.stride[i] = stride[i];
        g.dil[i] = dilation[i];
        g.pad_l[i] = pad_l[i];
        g.pad_r[i] = pad_r[i];
    }
    fw::nn::check_geometry(g, op);
    return g;
}

class ConvPlan {
public:
    ConvPlan(IntVec x_shape, IntVec w_shape, IntVec out_shape, bool bias, bool residual,
             const std::string &activation, const IntVec &stride, const IntVec &dilation, const IntVec &pad_l,
             const IntVec &pad_r, int64_t groups, bool channel_last)
        : xs_(std::move(x_shape)), ws_(std::move(w_shape)), ys_(std::move(out_shape)), bias_(bias),
          residual_(residual) {
        g_ = plan_geom("ConvPlan", xs_, ws_, ys_, stride, dilation, pad_l, pad_r, groups, channel_last);
        act_ = fw::parse_activation(activation.data(), activation.size());
    }

    void call(const F32In &x, const F32In &w, F32Out &y, std::optional<F32In> bias, std::optional<F32In> residual,
              uint64_t weight_stamp) {
        auto bad = [&](const std::string &what) {
            throw std::invalid_argument("ConvPlan: " + what + " (the plan: x " + dims_text(xs_) + ", weight " +
                                        dims_text(ws_) + ", out " + dims_text(ys_) + ", bias " +
                                        (bias_ ? "yes" : "no") + ", residual " + (residual_ ? "yes" : "no") +
                                        ")");
        };
        if (!has_shape(x, xs_)) bad("x " + shape_text(x) + " does not match");
        if (!has_shape(w, ws_)) bad("weight " + shape_text(w) + " does not match");
        if (!has_shape(y, ys_)) bad("out " + shape_text(y) + " does not match");
        if (bias.has_value() != bias_) bad(bias ? "got a bias" : "bias missing");
        if (residual.has_value() != residual_) bad(residual ? "got a residual" : "residual missing");
        if (bias && !has_shape(*bias, IntVec{g_.O})) bad("bias " + shape_text(*bias) + " must be [" + std::to_string(g_.O) + "]");
        if (residual && !has_shape(*residual, ys_)) bad("residual " + shape_text(*residual) + " must have out's shape");
        if (residual && residual->data() == y.data()) bad("residual must not be the output buffer");
        fw::Operand xo = f32_operand(const_cast<float *>(x.data()), int(xs_.size()), xs_.data());
        fw::Operand wo = f32_operand(const_cast<float *>(w.data()), int(ws_.size()), ws_.data());
        fw::Operand yo = f32_operand(y.data(), int(ys_.size()), ys_.data());
        fw::Operand bo, ro;
        fw::nn::ConvEpilogue ep;
        ep.act = act_;
        if (bias) {
            bo = f32_operand(const_cast<float *>(bias->data()), 1, &g_.O);
            ep.bias = &bo;
        }
        if (residual) {
            ro = f32_operand(const_cast<float *>(residual->data()), int(ys_.size()), ys_.data());
            ep.residual = &ro;
        }
        nb::gil_scoped_release nogil;
        fw::nn::conv_forward(g_, xo, wo, yo, ep, weight_stamp);
    }

    std::string impl() const {
        fw::nn::ConvEpilogue ep;
        ep.act = act_;
        if (fw::nn::dw3x3_applies(g_, fw::DType::f32, ep) && !residual_) return fw::nn::dw3x3_impl();
        if (fw::nn::conv_small_applies(g_, fw::DType::f32, residual_, act_))
            return std::string("fw_conv_small:") + fw::nn::conv_small_isa();  // nn_conv_small.cpp
        return fw::nn::conv_impl(g_, fw::DType::f32, 0);
    }

private:
    IntVec xs_, ws_, ys_;
    bool bias_, residual_;
    fw::nn::ConvGeom g_;
    fw::Activation act_ = fw::Activation::none;
};

void py_dwconv3x3(const F32In &x, const F32In &w, F32Out &y, std::optional<F32In> bias,
                  const std::string &activation, const IntVec &stride, const IntVec &pad_l, const IntVec &pad_r,
                  const std::string &isa) {
    const char *op = "dwconv3x3_forward";
    auto need = [&](bool ok, const std::string &why) {
        if (!ok)
            throw std::invalid_argument(std::string(op) + ": " + why + " (x float32" + shape_text(x) +
                                        ", weight float32" + shape_text(w) + ", out float32" + shape_text(y) + ")");
    };
    need(x.ndim() == 4 && w.ndim() == 4 && y.ndim() == 4, "x [N, H, W, C], weight [C, 1, 3, 3] and out [N, OH, OW, C]");
    const int64_t C = int64_t(x.shape(3));
    need(int64_t(w.shape(0)) == C && w.shape(1) == 1 && int64_t(y.shape(3)) == C && y.shape(0) == x.shape(0),
         "channels of x, weight and out do not match (weight must be [C, 1, 3, 3])");
    need(stride.size() == 2 && pad_l.size() == 2 && pad_r.size() == 2, "stride and paddings need 2 entries");
    fw::nn::DwIsa which = fw::nn::DwIsa::automatic;
    if (isa == "scalar") which = fw::nn::DwIsa::scalar;
    else if (isa == "avx2") which = fw::nn::DwIsa::avx2;
    else if (isa == "avx512") which = fw::nn::DwIsa::avx512;
    else need(isa == "auto", "isa must be 'auto', 'scalar', 'avx2' or 'avx512', got '" + isa + "'");
    fw::nn::ConvGeom g;
    g.nd = 2;
    g.channel_last = true;
    g.N = int64_t(x.shape(0));
    g.C = g.O = g.G = C;
    for (int i = 0; i < 2; ++i) {
        g.in[i] = int64_t(x.shape(1 + i));
        g.out[i] = int64_t(y.shape(1 + i));
        g.k[i] = int64_t(w.shape(2 + i));
        g.stride[i] = stride[i];
        g.dil[i] = 1;
        g.pad_l[i] = pad_l[i];
        g.pad_r[i] = pad_r[i];
    }
    if (bias) need(bias->ndim() == 1 && int64_t(bias->shape(0)) == C, "bias must be [C]");
    const int64_t xs[4] = {g.N, g.in[0], g.in[1], C}, ys[4] = {g.N, g.out[0], g.out[1], C};
    const int64_t wsh[4] = {C, 1, 3, 3};
    fw::Operand xo = f32_operand(const_cast<float *>(x.data()), 4, xs);
    fw::Operand wo = f32_operand(const_cast<float *>(w.data()), 4, wsh);
    fw::Operand yo = f32_operand(y.data(), 4, ys);
    fw::Operand bo;
    fw::nn::ConvEpilogue ep;
    ep.act = fw::parse_activation(activation.data(), activation.size());
    if (bias) {
        bo = f32_operand(const_cast<float *>(bias->data()), 1, &g.C);
        ep.bias = &bo;
    }
    nb::gil_scoped_release nogil;
    fw::nn::dw3x3_forward(g, xo, wo, yo, ep, 0, which);
}

}  // namespace

void bind_conv_plan(nb::module_ &m) {
    nb::class_<ConvPlan>(m, "ConvPlan",
                         "A float32 forward convolution bound to one geometry: x, weight and out shapes, "
                         "bias/residual presence, activation, stride, dilation, paddings, groups, layout "
                         "(checked once). Calling it runs conv_forward's kernel on arrays of exactly those "
                         "shapes (checked per call).")
        .def(nb::init<IntVec, IntVec, IntVec, bool, bool, const std::string &, const IntVec &, const IntVec &,
                      const IntVec &, const IntVec &, int64_t, bool>(),
             "x_shape"_a, "weight_shape"_a, "out_shape"_a, "bias"_a, "residual"_a, "activation"_a, "stride"_a,
             "dilation"_a, "pad_l"_a, "pad_r"_a, "groups"_a, "channel_last"_a)
        // noconvert: an array of another dtype or layout raises TypeError (the prepared
        // kernel then asks the table kernel) instead of being copied silently
        .def("__call__", &ConvPlan::call, "x"_a.noconvert(), "weight"_a.noconvert(), "out"_a.noconvert(),
             "bias"_a.noconvert().none(), "residual"_a.noconvert().none(), "weight_stamp"_a = 0,
             "out = act(conv(x, weight) + bias) + residual, written into out (float32, C-contiguous).")
        .def("impl", &ConvPlan::impl, "The kernel this plan runs (a oneDNN implementation name or fw's own).");
    m.def("dwconv3x3_forward", &py_dwconv3x3, "x"_a.noconvert(), "weight"_a.noconvert(), "out"_a.noconvert(),
          "bias"_a.noconvert().none(),
          "activation"_a, "stride"_a, "pad_l"_a, "pad_r"_a, "isa"_a = "auto",
          "fw's channel-last depthwise 3x3 kernel called directly: x [N, H, W, C], weight [C, 1, 3, 3], "
          "out [N, OH, OW, C] float32; stride 1 or 2, paddings 0 or 1; activation none, relu or relu6; "
          "isa 'auto' or a path this CPU runs ('scalar', 'avx2', 'avx512'). For tests and benchmarks.");
    m.def("dwconv3x3_isas", &fw::nn::dw3x3_isas, "The ISA paths of dwconv3x3_forward this CPU runs, best last.");
    m.def("conv_set_native_dw", &fw::nn::dw3x3_set_enabled, "on"_a,
          "Channel-last float32 depthwise 3x3 forward convolutions run fw's own kernel (True, the default) "
          "or oneDNN's (False). For the with/without benchmark and tests.");
    m.def("conv_native_dw", &fw::nn::dw3x3_enabled);
}
