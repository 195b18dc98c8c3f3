// The epilogue activations fused into matmul and conv as a oneDNN eltwise
// post-op: the C++ side of the one table in fw/core/_epilogue.py (read its
// docstring before adding one). tests/test_native_epilogue.py checks that the
// names, values and aliases here are exactly the Python table's.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace fw {

// X(name, value, oneDNN eltwise algorithm, alpha, beta): one row per activation,
// in the Python table's order. `none` has no post-op.
#define FW_EPILOGUE_ACTIVATIONS(X)               \
    X(none, 0, undef, 0.f, 0.f)                  \
    X(relu, 1, eltwise_relu, 0.f, 0.f)           \
    X(gelu_tanh, 2, eltwise_gelu_tanh, 0.f, 0.f) \
    X(gelu_erf, 3, eltwise_gelu_erf, 0.f, 0.f)   \
    X(sigmoid, 4, eltwise_logistic, 0.f, 0.f)    \
    X(tanh, 5, eltwise_tanh, 0.f, 0.f)           \
    X(silu, 6, eltwise_swish, 1.f, 0.f) /* swish with beta (oneDNN's alpha) 1 */ \
    X(relu6, 7, eltwise_clip, 0.f, 6.f) /* clip(x, alpha, beta) */              \
    /* x * max(0, min(1, alpha x + beta)) = x * relu6(x + 3) / 6 */               \
    X(hardswish, 8, eltwise_hardswish, 1.f / 6.f, 0.5f)                          \
    /* max(0, min(1, alpha x + beta)): Paddle's default slope and offset */       \
    X(hardsigmoid, 9, eltwise_hardsigmoid, 0.1666667f, 0.5f)

// X(alias, name): other spellings parse_activation accepts.
#define FW_EPILOGUE_ALIASES(X) \
    X(gelu, gelu_erf)          \
    X(swish, silu)

enum class Activation : uint8_t {
#define FW_ACT_ENUM(name, value, alg, alpha, beta) name = value,
    FW_EPILOGUE_ACTIVATIONS(FW_ACT_ENUM)
#undef FW_ACT_ENUM
};

// A name or alias of the table ("" is none); throws std::invalid_argument.
Activation parse_activation(const char *name, size_t len);
const char *activation_name(Activation a);

// Appends `a` as an eltwise post-op (nothing for none).
void append_activation(dnnl::post_ops &po, Activation a);

// (name, value) of every row, and (alias, name) of every alias, in table order:
// what the extension exports for the agreement test.
std::vector<std::pair<std::string, int>> activation_table();
std::vector<std::pair<std::string, std::string>> activation_aliases();

}  // namespace fw
