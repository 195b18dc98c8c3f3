// Matrix multiplication with fused epilogue on oneDNN, independent of Python.
//
//   out = op(x) @ op(y)                       op = identity or swap of last 2 dims
//   out = act(op(x) @ op(y) + bias) + residual            (residual_first = false)
//   out = act(op(x) @ op(y) + bias + residual)            (residual_first = true)
//
// Layout convention: every operand is C-contiguous (row-major, dense); a
// transposed operand is passed as the C-contiguous array of op's *input* plus
// the transpose flag. Batch dimensions (all but the last two) broadcast like
// NumPy's matmul. bias has shape (N,) and broadcasts over all rows; residual has
// the output's shape. When residual is the output buffer itself the epilogue
// becomes oneDNN's in-place `sum` post-op (out += ...), otherwise a `binary_add`
// post-op reading the residual buffer.
#pragma once

#include <vector>

#include <cstdint>
#include <string>

#include "activation.hpp"
#include "lru_cache.hpp"

namespace fw {

// Element types the native kernels accept. bf16 is the bit pattern of a
// bfloat16 number in a uint16 (how NumPy arrays of ml_dtypes.bfloat16 reach C++).
enum class DType : uint8_t { undefined = 0, f32 = 1, bf16 = 2 };

const char *dtype_name(DType t);


constexpr int kMaxNdim = 32;    // dims accepted from callers
constexpr int kMaxBatch = 10;   // oneDNN's 12 dims minus the matrix dims

// A dense, C-contiguous operand. data may be null only for absent operands.
struct Operand {
    void *data = nullptr;
    int ndim = 0;
    const int64_t *shape = nullptr;
    const int64_t *strides = nullptr;  // in elements; nullptr: C-contiguous
    DType dtype = DType::undefined;
    bool present() const { return data != nullptr || ndim > 0; }
};

// The batch-broadcast structure of a matmul after merging and folding dims.
struct MatmulPlan {
    // Caller-visible output shape.
    int out_ndim = 0;
    int64_t out_shape[kMaxNdim];
    // Problem handed to oneDNN: nb merged batch dims, then M x K @ K x N.
    int nb = 0;
    int64_t x_batch[kMaxBatch], y_batch[kMaxBatch], o_batch[kMaxBatch];
    int64_t M = 0, K = 0, N = 0;
    bool trans_x = false, trans_y = false;
    // Strided operands (a view such as the heads of attention, [B, S, H, D] transposed
    // to [B, H, S, D]): batch dims are kept as they are (equal in x and y, no merging)
    // and x_str/y_str give every dim's element stride: batch..., then M, K for x and
    // K, N for y. oneDNN reads the views in place instead of a copy being made.
    bool strided = false;
    int64_t x_str[kMaxBatch + 2], y_str[kMaxBatch + 2];
    bool empty() const;  // nothing to compute (some output dim is 0)
};

// Validates shapes and builds the plan; throws std::invalid_argument with a
// message naming matmul, both shapes and the transpose flags.
MatmulPlan plan_matmul(const Operand &x, const Operand &y, bool trans_x, bool trans_y);

struct Epilogue {
    Operand bias;                       // (N,) or absent
    Activation act = Activation::none;
    Operand residual;                   // output-shaped or absent
    bool residual_first = false;        // add residual before the activation
    bool residual_in_place = false;     // residual.data == out.data (sum post-op)
};

// Runs the plan. Must be called without the Python GIL held if the caller
// wants other threads to run; it touches no Python state. Throws
// std::runtime_error on oneDNN failures.
void run_matmul(const MatmulPlan &plan, const Operand &x, const Operand &y,
                const Operand &out, const Epilogue &ep);

// Primitive cache controls and statistics.
void matmul_cache_set_capacity(size_t capacity);
CacheStats matmul_cache_stats();
// oneDNN implementation name of every cached matmul primitive ("ref...": the reference fallback).
std::vector<std::string> matmul_cached_impls();
void matmul_cache_clear();

// Which oneDNN implementation a plan would run (e.g. "brg:avx2"), for
// diagnostics; "emulated bf16 via f32: <impl>" when the CPU lacks bf16 support.
std::string matmul_impl_info(const MatmulPlan &plan, DType x, DType y, DType out,
                             const Epilogue &ep);

}  // namespace fw
