// N-d max / average pooling and their backward passes, in plain C++ (OpenMP).
//
// Own loops rather than oneDNN's pooling primitive because fw's semantics are
// not oneDNN's: the max-pool mask is the flat spatial index of the maximum
// within its (n, c) plane (Paddle's return_mask), not oneDNN's opaque
// workspace; ties and NaN follow NumPy's argmax; the inclusive average counts
// the window elements inside the padded input but not the ceil_mode overhang.
// On plain layouts oneDNN has no vectorised pooling either (it wants nChw8c).
//
// Layout: x [N, C, *S] or channel-last [N, *S, C]; y / mask [N, C, *Q] in
// x's layout; 1 to 3 spatial dims. Window q of a dim covers input positions
// [q*stride - pad_begin, q*stride - pad_begin + kernel).
#pragma once

#include <cstdint>

#include "matmul.hpp"

namespace fw {
namespace nn {

struct PoolGeom {
    int nd = 0;
    int64_t N = 0, C = 0;
    int64_t in[3] = {}, out[3] = {}, k[3] = {}, stride[3] = {}, pad_b[3] = {}, pad_e[3] = {};
    bool channel_last = false;
    int64_t in_plane() const;
    int64_t out_plane() const;
};

void check_pool_geometry(const PoolGeom &g, const char *op);

// y = max over each window (padding never wins; NaN propagates); idx (may be
// null) = flat spatial index of the first maximum (a NaN counts as the
// maximum), coordinates clipped into the input.
void max_pool_forward(const PoolGeom &g, const Operand &x, const Operand &y, int32_t *idx);

// Average over each window: divisor_override when > 0, else the number of
// real elements (exclusive) or of elements inside the padded input.
void avg_pool_forward(const PoolGeom &g, const Operand &x, const Operand &y, bool exclusive,
                      double divisor_override);

// gx (float32, the input's shape) = scatter-add of gy at the mask positions.
void max_pool_backward(const PoolGeom &g, const float *gy, const int32_t *idx, float *gx);

// gx = the adjoint of avg_pool_forward applied to gy (float32).
void avg_pool_backward(const PoolGeom &g, const float *gy, float *gx, bool exclusive,
                       double divisor_override);

}  // namespace nn
}  // namespace fw
