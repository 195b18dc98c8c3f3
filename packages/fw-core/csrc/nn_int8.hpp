// int8 convolution and matmul on oneDNN: 8-bit activations (u8 or s8) times s8
// weights with int32 accumulation, then a float epilogue fused as oneDNN
// attributes and post-ops, written as u8/s8 (requantized) or f32 (dequantized):
//
//   acc  = sum (x_q - x_zp) * w_q                       (int32, exact)
//   v    = acc * (x_scale * w_scale[o]) + bias[o]       (float; w_scale per tensor or per
//                                                        output channel)
//   v    = act(v + residual)   or   act(v) + residual   (residual float32, y-shaped)
//   y    = v                                             (f32 output)
//   v    = clip(v, clip_lo, clip_hi)                     (optional: a narrower range)
//   y    = saturate(round_half_even(v / y_scale) + y_zp) (u8/s8 output)
//
// the semantics of fw's `quantized_conv2d` / `quantized_matmul` ops (their NumPy
// references in fw/core/ops/int8.py are the specification). Scales and zero points
// are runtime arguments (oneDNN 3.x `set_scales_mask` / `set_zero_points_mask`), so
// one cached primitive serves every layer of its geometry whatever its scales.
//
// CPUs without VNNI (AVX2, AVX-512 without VNNI) multiply u8 x s8 with
// `vpmaddubsw`, which adds two products in int16 and saturates: u8 values above 127
// next to 8-bit weights can overflow (oneDNN's "Nuances of int8 computations"). fw's
// pass feeds such CPUs u8 activations in [0, 127] (non-negative values of a
// symmetric int8 quantization) or s8 activations, for which oneDNN shifts the source
// and compensates, scaling the weights down internally; tests/test_int8_native.py
// checks exactness against the int32 reference on this machine.
#pragma once

#include <string>

#include "nn_conv.hpp"

namespace fw {
namespace nn {

// Element types of the int8 kernels (the float kernels' DType has f32/bf16 only).
enum class QType : uint8_t { u8 = 1, s8 = 2, f32 = 3 };
const char *qtype_name(QType t);

struct QuantArgs {
    const float *x_scale = nullptr;   // 1 value
    const int32_t *x_zp = nullptr;    // 1 value or null (zero)
    const float *w_scale = nullptr;   // n_w_scale values
    int64_t n_w_scale = 1;            // 1 (per tensor) or the output channels
    const float *y_scale = nullptr;   // 1 value (quantized output only)
    const int32_t *y_zp = nullptr;    // 1 value or null (zero)
    const float *bias = nullptr;      // [O] float32 or null
    Activation act = Activation::none;
    const float *residual = nullptr;  // y-shaped float32, in y's layout, or null
    bool residual_before_act = false;
    // A real-domain clip applied last, before requantization (a narrower integer range
    // than the output type's: [(qmin - y_zp) * y_scale, (qmax - y_zp) * y_scale]). Part
    // of the primitive (its bounds are in the cache key).
    bool clip = false;
    float clip_lo = 0.f, clip_hi = 0.f;
};

// x: [N, C, *S] (or channel-last), u8/s8; w: [O, C/G, *K] s8; y: x's layout, QType y_type.
void qconv_forward(const ConvGeom &g, QType x_type, const void *x, const int8_t *w, QType y_type, void *y,
                   const QuantArgs &q, uint64_t weight_stamp = 0);

// x: [M, K] u8/s8; w: [K, N] s8 (row-major); y: [M, N] of y_type.
struct QMatmulGeom {
    int64_t M = 0, K = 0, N = 0;
    std::string str() const;
};
void qmatmul_forward(const QMatmulGeom &g, QType x_type, const void *x, const int8_t *w, QType y_type,
                     void *y, const QuantArgs &q, uint64_t weight_stamp = 0);

// The oneDNN implementation names the primitives of such calls would use.
std::string qconv_impl(const ConvGeom &g, QType x_type, QType y_type, const QuantArgs &q);
std::string qmatmul_impl(const QMatmulGeom &g, QType x_type, QType y_type, const QuantArgs &q);

// The per-tensor QDQ ops of fw.core.ops.quant at the borders of an int8 region, with
// their references' float32 arithmetic (a true division, rint half-to-even, NaN -> zp):
//   quantize:   q = clip(rint(x / scale) + zp, qmin, qmax)  (u8 or s8 q)
//   dequantize: x = (float(q) - zp) * scale
void quantize_f32(const float *x, int64_t n, float scale, int32_t zp, int32_t qmin, int32_t qmax, QType q_type,
                  void *q);
void dequantize_to_f32(const void *q, QType q_type, int64_t n, float scale, int32_t zp, float *x);

// oneDNN's effective CPU ISA ("avx2", "avx512_core", "avx512_core_vnni", ...) and
// whether it multiplies u8 x s8 without int16 saturation (VNNI or AMX).
std::string cpu_isa();
bool int8_exact_u8s8();

}  // namespace nn
}  // namespace fw
