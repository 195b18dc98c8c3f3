// Binding of the weight-only linear kernel (nn_woq.hpp): `woq_linear_forward`. Arrays
// are C-contiguous NumPy arrays; the output is preallocated by the Python wrapper in
// fw/core/kernels/cpu/quant.py. Every shape and dtype is checked here, so a direct call
// with bad arguments raises instead of reading out of bounds.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <optional>
#include <string>

#include "nn_woq.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

using InArray = nb::ndarray<nb::ro, nb::device::cpu, nb::c_contig>;
using OutArray = nb::ndarray<nb::device::cpu, nb::c_contig>;

template <class A>
std::string describe(const A &a) {
    const auto d = a.dtype();
    using code = nb::dlpack::dtype_code;
    std::string s = d.code == uint8_t(code::Float) ? "float" : d.code == uint8_t(code::Int) ? "int" : "uint";
    s += std::to_string(d.bits) + "[";
    for (size_t i = 0; i < a.ndim(); ++i) s += (i ? ", " : "") + std::to_string(a.shape(i));
    return s + "]";
}

template <class A>
bool is(const A &a, nb::dlpack::dtype_code c, int bits) {
    const auto d = a.dtype();
    return d.code == uint8_t(c) && d.bits == bits && d.lanes == 1;
}

[[noreturn]] void fail(const std::string &msg) { throw std::invalid_argument("weight_only_linear: " + msg); }

// The message is built only when the check fails (this runs on every decode step).
#define WOQ_NEED(cond, msg) \
    do {                    \
        if (!(cond)) fail(msg); \
    } while (0)

void py_woq(const InArray &x, const InArray &weight, const InArray &scale, std::optional<InArray> bias,
            OutArray &out, const std::string &weight_dtype, int64_t group_size) {
    using code = nb::dlpack::dtype_code;
    WOQ_NEED(weight_dtype == "int8" || weight_dtype == "int4",
         "weight_dtype='" + weight_dtype + "' must be 'int8' or 'int4'");
    const bool int4 = weight_dtype == "int4";
    WOQ_NEED(is(x, code::Float, 32) && x.ndim() == 2, "x " + describe(x) + " must be a 2-D float32 [M, K] array");
    WOQ_NEED(is(weight, code::Int, 8) && weight.ndim() == 2,
         "weight " + describe(weight) + " must be a 2-D int8 [N, K" + (int4 ? "/2" : "") + "] array");
    fw::nn::WoqArgs a;
    a.M = int64_t(x.shape(0));
    a.K = int64_t(x.shape(1));
    a.N = int64_t(weight.shape(0));
    a.int4 = int4;
    a.group_size = group_size;
    const int64_t kp = int64_t(weight.shape(1));
    WOQ_NEED(int4 ? 2 * kp == a.K : kp == a.K,
         "x " + describe(x) + " has K=" + std::to_string(a.K) + " but the " + weight_dtype + " weight " +
             describe(weight) + " holds " + std::to_string(int4 ? 2 * kp : kp) + " values per row");
    fw::nn::check_woq(a);
    const bool per_channel = group_size == -1;
    const int64_t groups = per_channel ? 1 : a.K / group_size;
    WOQ_NEED(is(scale, code::Float, 32) &&
             (per_channel ? scale.ndim() == 1 && int64_t(scale.shape(0)) == a.N
                          : scale.ndim() == 2 && int64_t(scale.shape(0)) == groups && int64_t(scale.shape(1)) == a.N),
         "weight_scale " + describe(scale) + " must be float32 of shape " +
             (per_channel ? "[" + std::to_string(a.N) + "]"
                          : "[" + std::to_string(groups) + ", " + std::to_string(a.N) + "]") +
             " for group_size=" + std::to_string(group_size));
    if (bias) {
        WOQ_NEED(is(*bias, code::Float, 32) && bias->ndim() == 1 && int64_t(bias->shape(0)) == a.N,
             "bias " + describe(*bias) + " must be float32 of shape [" + std::to_string(a.N) + "]");
        a.bias = static_cast<const float *>(bias->data());
    }
    WOQ_NEED(is(out, code::Float, 32) && out.ndim() == 2 && int64_t(out.shape(0)) == a.M &&
             int64_t(out.shape(1)) == a.N,
         "out " + describe(out) + " must be float32 of shape [" + std::to_string(a.M) + ", " + std::to_string(a.N) +
             "]");
    WOQ_NEED(out.data() != x.data(), "out must not be x's buffer");
    a.x = static_cast<const float *>(x.data());
    a.w = static_cast<const int8_t *>(weight.data());
    a.scale = static_cast<const float *>(scale.data());
    a.y = static_cast<float *>(out.data());
    nb::gil_scoped_release nogil;
    fw::nn::woq_linear(a);
}

}  // namespace

void bind_woq(nb::module_ &m) {
    m.def("woq_linear_forward", &py_woq, "x"_a, "weight"_a, "weight_scale"_a, "bias"_a.none(), "out"_a.noconvert(),
          "weight_dtype"_a, "group_size"_a,
          "out = x @ dequant(weight, weight_scale)^T + bias for float32 x [M, K] and an int8 [N, K] or packed "
          "int4 [N, K/2] weight with per-channel ([N]) or group-wise ([K/g, N]) scales; see nn_woq.hpp.");
    m.attr("woq_gemv_max_m") = fw::nn::kWoqTiledMaxM;
    m.def("woq_simd", &fw::nn::woq_simd, "Whether weight_only_linear's AVX2 GEMV runs on this CPU.");
}
