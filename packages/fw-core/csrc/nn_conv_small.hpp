// Direct float32 convolution for layers with few output channels (nn_conv_small.cpp).
//
// oneDNN's forward kernels vectorise over output channels (16 float lanes on AVX-512,
// 8 on AVX2) and pad a layer with fewer channels to that width: a LeNet stem 1 -> 6 at
// 28x28 costs what 1 -> 16 costs, and halving its channels saves nothing. This kernel
// vectorises over the output row instead (output width x channels, contiguous in the
// channel-last layout), so its work follows the real channel count. conv_forward
// (nn_conv.cpp) asks `conv_small_forward` first; it takes the call when
// `conv_small_applies` says so and returns false otherwise (then oneDNN runs).
#pragma once

#include <cstdint>

#include "activation.hpp"
#include "nn_conv.hpp"

namespace fw {
namespace nn {

// The shape rule (no timing): float32, 2-D, channel-last, groups 1, stride 1, no
// residual, activation none / relu / relu6, at most 4 output channels and 27 taps
// (input channels x kernel): where the direct kernel beats oneDNN's padded one on the
// reference machine (a pruned stem; the measurements are in the .cpp).
bool conv_small_applies(const ConvGeom &g, DType dt, bool residual, Activation act);

// Runs the convolution when conv_small_applies (and the kernel is enabled): returns
// true when it wrote y. Throws std::invalid_argument (naming the kernel, shapes and
// dtypes) when the operands do not match the geometry.
bool conv_small_forward(const ConvGeom &g, const Operand &x, const Operand &w, const Operand &y,
                        const ConvEpilogue &ep);

// For tests and benchmarks: switch the kernel off (oneDNN for every conv), cap its
// instruction set (0 scalar, 1 AVX2+FMA, 2 AVX-512F; the CPU's own limit applies
// too), the instruction set it runs with now, and how many calls it served.
void conv_small_set_enabled(bool on);
bool conv_small_enabled();
void conv_small_set_max_isa(int isa);
const char *conv_small_isa();
uint64_t conv_small_calls();

}  // namespace nn
}  // namespace fw
