// The fused_elementwise interpreter: a program of elementwise instructions
// (fw/core/ops/fused.py documents the op and its opcodes) is compiled once into
// a compact form with a tile-buffer slot per live value, then evaluated in
// tiles of ~1K elements that stay in L1: every instruction runs over one tile
// before the next, so memory is read and written once per call. Tiles are
// shared out to the OpenMP threads.
//
// Values are float32 in the tiles whatever their dtype: float16/bfloat16
// results are rounded to their dtype after every instruction (and inside
// sigmoid/rsqrt, where the unfused op rounds its intermediates too), bool
// values are 0.0/1.0. float64 programs are not handled here (the Python
// wrapper keeps them on the NumPy reference).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fw::fused {

// Storage dtype of inputs, instruction results and the output.
enum class EwDT : uint8_t { b8 = 0, f16 = 1, bf16 = 2, f32 = 3 };

enum class EwOp : uint8_t {
    add, sub, mul, div, max, min,
    neg, exp, log, tanh, sigmoid, sqrt, rsqrt, abs, relu, silu, gelu_erf, gelu_tanh, pow,
    eq, ne, lt, le, gt, ge,
    where, cast, konst,
    count_
};

// The op's opcode spelling ("add", "subtract", ..., "gelu" for both gelu forms).
const char *ew_op_name(EwOp op);
int ew_op_arity(EwOp op);

struct EwInstr {
    EwOp op;
    EwDT dt;      // result dtype
    int32_t a, b, c;  // operand value numbers (-1: unused)
    float imm;    // const value / pow exponent (already rounded to dt)
};

// How an input covers the result: every element, one element, or one row of
// the last dimension repeated (a bias).
enum class EwKind : uint8_t { full = 0, scalar = 1, row = 2 };

struct EwInput {
    const void *data;
    EwDT dt;
    EwKind kind;
};

// Bound on a program's inputs and on its instructions (each): keeps the value
// numbering in int and the per-thread tile scratch (a slot per value) small.
constexpr int kMaxEwValues = 4096;

class EwProgram {
  public:
    // Checks operand numbering and arities (the op's infer checked the rest).
    EwProgram(int n_inputs, std::vector<EwInstr> code);

    int n_inputs() const { return nin_; }
    EwDT out_dtype() const { return code_.back().dt; }
    int n_slots() const { return nslots_; }
    int tile() const { return tile_; }
    std::string describe() const;

    // out[i] = program(inputs at i) for i < n; row inputs have row_len elements.
    // Needs cpu_supported(); releases nothing (the caller drops the GIL).
    void run(const EwInput *inputs, int64_t n, int64_t row_len, void *out) const;

  private:
    int nin_;
    std::vector<EwInstr> code_;
    std::vector<int32_t> slot_;  // value -> tile slot
    int nslots_ = 0;
    int tile_ = 1024;
};

}  // namespace fw::fused
