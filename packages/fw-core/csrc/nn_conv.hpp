// N-d convolution (1 to 3 spatial dims) on oneDNN: forward with fused
// bias/activation/residual, backward data, backward weights (+ bias).
//
// Layouts: x [N, C, *S] (channel-first) or [N, *S, C] (channel-last), weight
// [O, C/G, *K] (fw's OIHW; with groups the same memory read as [G, O/G, C/G,
// *K]), bias [O], y [N, O, *Q] in x's layout. All dense row-major. oneDNN
// picks its own (blocked) layouts where that is faster and the arguments are
// reordered on the way in and out (see nn_common.hpp).
//
// The transposed convolution of fw (`conv_transpose`) is the backward-data
// pass of the convolution it is the adjoint of, so it needs no primitive of
// its own: conv_backward_data with the transposed op's input as `gy`.
#pragma once

#include <string>

#include "nn_common.hpp"

namespace fw {
namespace nn {

struct ConvGeom {
    int nd = 0;                   // spatial dims, 1..3
    int64_t N = 0, C = 0, O = 0, G = 1;
    int64_t in[3] = {}, k[3] = {}, out[3] = {};
    int64_t stride[3] = {}, dil[3] = {};  // dil in fw's form (1 = dense)
    int64_t pad_l[3] = {}, pad_r[3] = {};
    bool channel_last = false;
    double work() const;  // multiply-adds of one pass
    std::string str() const;  // for error messages
};

// Checks the geometry (sizes consistent with oneDNN's output-size formula);
// throws std::invalid_argument naming `op`.
void check_geometry(const ConvGeom &g, const char *op);

struct ConvEpilogue {
    const Operand *bias = nullptr;      // [O]
    Activation act = Activation::none;
    const Operand *residual = nullptr;  // y-shaped, added after the activation
};

// `weight_stamp` != 0: the weights are constant (see Prim::execute's stamps).
void conv_forward(const ConvGeom &g, const Operand &x, const Operand &w, const Operand &y,
                  const ConvEpilogue &ep, uint64_t weight_stamp = 0);
void conv_backward_data(const ConvGeom &g, const Operand &gy, const Operand &w, const Operand &gx);
void conv_backward_weights(const ConvGeom &g, const Operand &x, const Operand &gy, const Operand &gw,
                           const Operand *gb);

// oneDNN implementation names ("jit:avx2", "gemm:jit", ...) of the three passes.
std::string conv_impl(const ConvGeom &g, DType dt, int which);

// Layout policy (diagnostics / tuning): 0 = automatic, 1 = keep the caller's
// plain activations, 2 = let oneDNN choose activations too (reorder).
void conv_set_layout_policy(int policy);
int conv_layout_policy();

// Whether channel-last f32 depthwise forward convolutions take oneDNN's jit_dw kernel
// where it is offered (default on; off: oneDNN's first choice, brdgmm_dw). For the
// with/without benchmark and tests; primitives are cached per setting.
void conv_set_prefer_jit_dw(bool on);
bool conv_prefer_jit_dw();

}  // namespace nn
}  // namespace fw
