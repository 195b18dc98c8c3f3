// Optimizer update kernels: one pass over memory per update (lamb: two), the
// formulas of fw/core/ops/optimizer.py in the operation order of its NumPy cpu
// kernels, computed in float32 with float32/float16/bfloat16 storage.
#pragma once

#include <cstdint>

namespace fw::fused {

// Storage dtypes of parameters and state (bfloat16 as uint16 bits).
enum class ODT : int { f32 = 0, f16 = 1, bf16 = 2 };

enum class Rule : int { sgd, momentum, adam, adamax, adagrad, adadelta, rmsprop, lamb, asgd };

// One update over n elements. `s[i]`/`so[i]` are the rule's per-element state
// inputs/outputs in the op's order (an output may be the very input array:
// in-place). Constants `c` are rule-specific and already derived from the
// hyper-parameters (see optim_constants in bind_fused.cpp).
struct OptimArgs {
    Rule rule = Rule::sgd;
    int64_t n = 0;
    ODT pdt = ODT::f32;  // param, grad, param_out
    ODT sdt = ODT::f32;  // every state in/out
    const void *p = nullptr, *g = nullptr;
    void *po = nullptr;
    const void *s[3] = {nullptr, nullptr, nullptr};
    void *so[3] = {nullptr, nullptr, nullptr};
    float c[8] = {};
    bool flag[3] = {false, false, false};
    // lamb: parameter start offsets (first 0, increasing), and whether the trust
    // ratio applies (weight_decay > 0 or always_adapt)
    const int64_t *seg = nullptr;
    int64_t nseg = 0;
};

// True for the (param, state) dtype pairs with a kernel: (f32, f32), (f16, f32),
// (bf16, f32), (f16, f16), (bf16, bf16).
bool optim_dtypes_supported(ODT pdt, ODT sdt);

// Runs the update (GIL released by the caller; OpenMP inside).
void optim_update(const OptimArgs &a);

}  // namespace fw::fused
