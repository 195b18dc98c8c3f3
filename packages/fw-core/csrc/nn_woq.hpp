// Weight-only quantized linear: y = x @ dequant(w)^T + bias with float32 activations
// and int8 or packed int4 weights (the `weight_only_linear` op of fw/core/ops/quant.py,
// whose NumPy reference is the specification; Paddle's
// paddle.nn.quant.weight_only_linear).
//
//   w      [N, K] int8 codes, or [N, K/2] int4 codes two per byte along k (even k in
//          the low nibble, odd k in the high nibble, two's complement)
//   scale  [N] (per output channel) or [K/g, N] (one per group of g rows of k)
//   y[m, n] = sum_groups scale[grp, n] * sum_{k in grp} x[m, k] * code[n, k] + bias[n]
//
// Decoding a language model runs this with M = 1..8 rows: a GEMV whose cost is reading
// the weights once (up to 32 rows: one such pass per block of 8). The GEMV path streams the 1-byte (int8) or half-byte (int4) codes
// straight into float32 FMAs (AVX2), so it moves 4x / 8x fewer bytes than a float32
// GEMV; the scale is applied once per group to the group's partial sums. M > 32 is
// compute-bound: the weights are dequantized into a float32 scratch buffer and
// multiplied by oneDNN's f32 matmul (the same arithmetic up to summation order).
#pragma once

#include <cstdint>

namespace fw {
namespace nn {

struct WoqArgs {
    int64_t M = 0, K = 0, N = 0;
    bool int4 = false;
    int64_t group_size = -1;        // -1 (per channel) or > 0 dividing K (even for int4)
    const float *x = nullptr;       // [M, K]
    const int8_t *w = nullptr;      // [N, K] or [N, K/2]
    const float *scale = nullptr;   // [N] or [K/g, N]
    const float *bias = nullptr;    // [N] or null
    float *y = nullptr;             // [M, N]
};

// Rows of x one pass of the streaming GEMV serves (its register block).
constexpr int64_t kWoqGemvMaxM = 8;
// The largest M served by GEMV passes over blocks of kWoqGemvMaxM rows; above it the
// weights are dequantized once into a scratch buffer for oneDNN's f32 matmul (the
// crossover where converting codes M/8 times costs more than one dequantization).
constexpr int64_t kWoqTiledMaxM = 32;

// Throws std::invalid_argument naming weight_only_linear and the bad value.
void check_woq(const WoqArgs &a);

// Runs a checked problem (call without the GIL; touches no global state but oneDNN's
// primitive cache, which is thread-safe).
void woq_linear(const WoqArgs &a);

// Whether the AVX2 GEMV is used on this CPU (else a portable scalar loop).
bool woq_simd();

}  // namespace nn
}  // namespace fw
