// Batch normalization, layer normalization and (log-)softmax on oneDNN,
// forward and backward, with fw's outputs (see fw/core/ops/norm.py).
//
// Statistics, scale and shift are float32 (the caller converts); data
// (x, y, gradients) is float32 or bfloat16 bits. Variances are biased.
// oneDNN's backward passes take the variance: it is rebuilt from the saved
// inverse standard deviation as 1/inv_std^2 - epsilon, which oneDNN turns back
// into exactly that inv_std.
#pragma once

#include <cstdint>

#include "matmul.hpp"

namespace fw {
namespace nn {

// x viewed as [N, C, P] (channel-first) or [N, P, C] (channel-last).
struct BnGeom {
    int64_t N = 0, C = 0, P = 0;
    bool channel_last = false;
};

// training: normalise with the batch statistics and update the running ones
// (mean_out = momentum*rm + (1-momentum)*batch_mean, likewise var_out);
// otherwise normalise with rm/rv and copy them. saved_mean / saved_inv_std
// are the statistics used. scale/shift may be null.
void batch_norm_forward(const BnGeom &g, const Operand &x, const Operand &y, const float *scale,
                        const float *shift, const float *rm, const float *rv, float *mean_out,
                        float *var_out, float *saved_mean, float *saved_inv_std, float eps,
                        float momentum, bool training);

// gx, gscale = sum(gy * xhat), gshift = sum(gy). batch_stats: the forward
// used batch statistics (their dependence on x is part of gx). scale null = 1.
void batch_norm_backward(const BnGeom &g, const Operand &x, const Operand &gy, const float *scale,
                         const float *mean, const float *inv_std, float eps, bool batch_stats,
                         const Operand &gx, float *gscale, float *gshift);

// x viewed as [M, D], normalised over D; mean / inv_std [M].
void layer_norm_forward(int64_t M, int64_t D, const Operand &x, const Operand &y, const float *scale,
                        const float *shift, float eps, float *mean, float *inv_std);
void layer_norm_backward(int64_t M, int64_t D, const Operand &x, const Operand &gy, const float *scale,
                         const float *mean, const float *inv_std, float eps, const Operand &gx,
                         float *gscale, float *gshift);

// x viewed as [outer, len, inner], (log-)softmax over len. Rows whose result
// holds a NaN (non-finite input) are recomputed with the reference algorithm,
// so NaN/Inf handling matches fw's NumPy kernel exactly.
void softmax_forward(int64_t outer, int64_t len, int64_t inner, const Operand &x, const Operand &y, bool log);
// gx from the forward result y and its gradient gy, float32 only. Own loops:
// oneDNN 2023.2 has no jit softmax backward for AVX2 (its reference kernel is
// ten times slower than NumPy); the exp of log_softmax's backward is oneDNN's
// jit eltwise.
void softmax_backward(int64_t outer, int64_t len, int64_t inner, const float *y, const float *gy, float *gx,
                      bool log);

}  // namespace nn
}  // namespace fw
