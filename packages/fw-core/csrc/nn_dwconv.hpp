// A hand-written channel-last (NHWC) float32 depthwise 3x3 convolution with the bias
// and a relu/relu6 epilogue fused: MobileNet-style inverted residual blocks.
//
// Why not oneDNN here: for these shapes on the Zen 4 reference VM oneDNN 3.2's
// jit_dw (already preferred over its brdgmm_dw, see nn_conv.cpp) ran the 96-channel
// 112x112 stride-2 layer of MobileNetV2 in 137 us hot (48 us of FMA work) and 284-389
// us inside the model (its 4.8 MB input just written by the expand convolution), against
// 185-278 us for onnxruntime's MLAS kernel. This kernel walks one output row at a time
// in chunks of 32 output columns, every channel block of a chunk before the next chunk
// (the input is read nearly in memory order, the three input rows staying in L2, a
// block's weights in registers), and keeps 8 neighbouring outputs in registers so that
// each input vector is loaded once per kernel row (stride 2: 17 loads for 8 x 3 taps).
// The register tile follows the direct depthwise kernels of oneDNN (jit_uni_dw_conv) and
// MLAS (ConvDepthwise); the code is fw's own.
//
// Runtime ISA dispatch: AVX-512F (16 lanes), AVX2+FMA (8 lanes), or portable scalar
// C++; every path sums the nine taps after the bias in the same order (kernel row,
// then column), so they agree to float rounding of the FMA contraction (~1e-7).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nn_conv.hpp"

namespace fw {
namespace nn {

enum class DwIsa : int { automatic = -1, scalar = 0, avx2 = 1, avx512 = 2 };

// Whether conv_forward runs (g, dtype, epilogue) on this kernel: channel-last f32 2-d
// depthwise (groups == C_in == C_out), 3x3, dilation 1, stride 2 (stride 1 stays on
// oneDNN's jit_dw, faster there: see nn_dwconv.cpp), padding 0 or 1 per side, no
// residual, activation none/relu/relu6, and the kernel switched on. dw3x3_forward
// itself also runs stride 1.
bool dw3x3_applies(const ConvGeom &g, DType dt, const ConvEpilogue &ep);

// Runs the kernel. Checks everything the memory accesses depend on (geometry as above,
// dtypes, pointers, that out does not overlap x, weight or bias) and throws
// std::invalid_argument naming "conv" otherwise. `isa` automatic = the best this CPU
// has; naming an ISA the CPU lacks throws. `weight_stamp` != 0: (weight's address,
// stamp) names constant bytes, so the repacked weights are cached (as Prim does).
void dw3x3_forward(const ConvGeom &g, const Operand &x, const Operand &w, const Operand &y,
                   const ConvEpilogue &ep, uint64_t weight_stamp, DwIsa isa = DwIsa::automatic);

// "fw_dw3x3_nhwc:avx512" / ":avx2" / ":scalar": the implementation name conv_impl reports.
std::string dw3x3_impl();

// The ISAs this CPU runs, best last ("scalar" always).
std::vector<std::string> dw3x3_isas();

// On (default) / off: off gives these convolutions back to oneDNN (jit_dw / brdgmm_dw),
// for the with/without benchmark and tests.
void dw3x3_set_enabled(bool on);
bool dw3x3_enabled();

}  // namespace nn
}  // namespace fw
