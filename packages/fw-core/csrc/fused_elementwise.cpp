// The fused_elementwise interpreter (see fused_elementwise.hpp).
#include "fused_elementwise.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "fused_common.hpp"
#include "fused_simd.hpp"

namespace fw::fused {

namespace {

struct OpInfo {
    const char *name;
    int arity;
};

constexpr OpInfo kOps[] = {
    {"add", 2}, {"subtract", 2}, {"multiply", 2}, {"divide", 2}, {"maximum", 2}, {"minimum", 2},
    {"neg", 1}, {"exp", 1}, {"log", 1}, {"tanh", 1}, {"sigmoid", 1}, {"sqrt", 1}, {"rsqrt", 1},
    {"abs", 1}, {"relu", 1}, {"silu", 1}, {"gelu", 1}, {"gelu", 1}, {"pow", 1},
    {"equal", 2}, {"not_equal", 2}, {"less_than", 2}, {"less_equal", 2}, {"greater_than", 2},
    {"greater_equal", 2}, {"where", 3}, {"cast", 1}, {"const", 0},
};
static_assert(sizeof(kOps) / sizeof(kOps[0]) == size_t(EwOp::count_), "opcode table out of sync");

const char *dt_name(EwDT d) {
    switch (d) {
        case EwDT::b8: return "bool";
        case EwDT::f16: return "float16";
        case EwDT::bf16: return "bfloat16";
        case EwDT::f32: return "float32";
    }
    return "?";
}

// Work (elements x instructions) below which one thread does the whole call.
constexpr int64_t kMinWorkPerThread = int64_t(1) << 17;

// Per-thread scratch: tile slots and row buffers, 64-byte aligned, kept
// between calls (OpenMP pool threads live as long as the process).
struct Scratch {
    float *buf = nullptr;
    size_t cap = 0;
    std::vector<const float *> ptr;
    ~Scratch() { std::free(buf); }
    float *get(size_t n) {
        if (n > cap) {
            std::free(buf);
            buf = nullptr;
            cap = 0;
            const size_t bytes = (n * sizeof(float) + 63) / 64 * 64;
            buf = static_cast<float *>(std::aligned_alloc(64, bytes));
            if (!buf) throw std::bad_alloc();
            cap = n;
        }
        return buf;
    }
};
thread_local Scratch tl_scratch;

}  // namespace

const char *ew_op_name(EwOp op) { return size_t(op) < size_t(EwOp::count_) ? kOps[size_t(op)].name : "?"; }
int ew_op_arity(EwOp op) { return size_t(op) < size_t(EwOp::count_) ? kOps[size_t(op)].arity : -1; }

EwProgram::EwProgram(int n_inputs, std::vector<EwInstr> code) : nin_(n_inputs), code_(std::move(code)) {
    if (nin_ < 0 || nin_ > kMaxEwValues)
        throw std::invalid_argument("fused_elementwise: n_inputs must be in [0, " + std::to_string(kMaxEwValues) +
                                    "], got " + std::to_string(nin_));
    if (code_.empty()) throw std::invalid_argument("fused_elementwise: empty program");
    if (code_.size() > size_t(kMaxEwValues))
        throw std::invalid_argument("fused_elementwise: a program has at most " + std::to_string(kMaxEwValues) +
                                    " instructions, got " + std::to_string(code_.size()));
    const int nvals = nin_ + int(code_.size());
    std::vector<int> last_use(size_t(nvals), -1);
    for (size_t k = 0; k < code_.size(); ++k) {
        const EwInstr &in = code_[k];
        if (size_t(in.op) >= size_t(EwOp::count_))
            throw std::invalid_argument("fused_elementwise: instruction " + std::to_string(k) + ": bad opcode");
        const int v = nin_ + int(k);
        const int32_t ops[3] = {in.a, in.b, in.c};
        const int arity = ew_op_arity(in.op);
        for (int j = 0; j < 3; ++j) {
            const bool want = j < arity;
            if (want != (ops[j] >= 0) || ops[j] >= v)
                throw std::invalid_argument("fused_elementwise: instruction " + std::to_string(k) + " (" +
                                            ew_op_name(in.op) + "): bad operands");
            if (ops[j] >= 0) last_use[size_t(ops[j])] = int(k);
        }
    }
    if (code_.back().op == EwOp::konst)
        throw std::invalid_argument("fused_elementwise: the last instruction must not be a const");

    // Slots: one per input and const (they hold data for the whole call or are
    // refilled every tile), temporaries recycled once their last reader ran.
    // An instruction may take the slot of an operand it is the last reader of:
    // every instruction reads element i before writing element i.
    slot_.assign(size_t(nvals), -1);
    int next = 0;
    for (int i = 0; i < nin_; ++i) slot_[size_t(i)] = next++;
    std::vector<int32_t> free_slots;
    auto temp = [&](int32_t v) { return v >= nin_ && code_[size_t(v - nin_)].op != EwOp::konst; };
    for (size_t k = 0; k < code_.size(); ++k) {
        const EwInstr &in = code_[k];
        const int v = nin_ + int(k);
        if (in.op == EwOp::konst) {
            slot_[size_t(v)] = next++;
            continue;
        }
        const int32_t ops[3] = {in.a, in.b, in.c};
        for (int j = 0; j < 3; ++j) {
            const int32_t o = ops[j];
            if (o < 0 || !temp(o) || last_use[size_t(o)] != int(k)) continue;
            if (std::find(ops, ops + j, o) != ops + j) continue;  // the same operand twice
            free_slots.push_back(slot_[size_t(o)]);
        }
        if (free_slots.empty()) {
            slot_[size_t(v)] = next++;
        } else {
            slot_[size_t(v)] = free_slots.back();
            free_slots.pop_back();
        }
    }
    nslots_ = next;
    // Tiles of up to 2048 floats, shrunk so that the slots fit in ~24 KiB (L1).
    tile_ = 2048;
    while (tile_ > 256 && size_t(nslots_) * size_t(tile_) * sizeof(float) > 24576) tile_ /= 2;
}

std::string EwProgram::describe() const {
    std::string s = "fused_elementwise program: " + std::to_string(nin_) + " inputs, " +
                    std::to_string(code_.size()) + " instructions, " + std::to_string(nslots_) +
                    " slots, tile " + std::to_string(tile_) + "\n";
    for (size_t k = 0; k < code_.size(); ++k) {
        const EwInstr &in = code_[k];
        s += "  %" + std::to_string(nin_ + int(k)) + " = " + ew_op_name(in.op) + "." + dt_name(in.dt) + "(";
        const int32_t ops[3] = {in.a, in.b, in.c};
        for (int j = 0; j < ew_op_arity(in.op); ++j) s += (j ? ", %" : "%") + std::to_string(ops[j]);
        if (in.op == EwOp::konst || in.op == EwOp::pow) s += (in.op == EwOp::pow ? ", " : "") + std::to_string(in.imm);
        s += ")  [slot " + std::to_string(slot_[size_t(nin_ + int(k))]) + "]\n";
    }
    return s;
}

// ---------------------------------------------------------------- tile kernels (AVX2)
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
// The per-opcode lambdas return __m256 and are always inlined into AVX2 code;
// GCC still warns (once) that such a return type would change the ABI of a
// non-AVX function, which no lambda here is.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

namespace {

using namespace fw::simd;

enum Round : int { kNone = 0, kF16 = 1, kBF16 = 2 };

template <int R>
static inline vf rnd(vf x) {
    if constexpr (R == kF16) return vround_f16(x);
    else if constexpr (R == kBF16) return vround_bf16(x);
    else return x;
}

// n is a multiple of 8 in every map: tiles are padded
template <int R, class F>
static inline void map1(float *o, const float *a, int n, F f) {
    for (int i = 0; i < n; i += W) store8(o + i, rnd<R>(f(load8(a + i))));
}
template <int R, class F>
static inline void map2(float *o, const float *a, const float *b, int n, F f) {
    for (int i = 0; i < n; i += W) store8(o + i, rnd<R>(f(load8(a + i), load8(b + i))));
}

template <class T>
static void load_tile_t(const T *src, float *dst, int cnt) {
    for_lanes(0, cnt, [&](int64_t i, int k) { store8(dst + i, loadn(src + i, k)); });
}

static void load_tile(const void *src, EwDT dt, float *dst, int cnt) {
    switch (dt) {
        case EwDT::f32: load_tile_t(static_cast<const float *>(src), dst, cnt); break;
        case EwDT::f16: load_tile_t(static_cast<const f16_t *>(src), dst, cnt); break;
        case EwDT::bf16: load_tile_t(static_cast<const bf16_t *>(src), dst, cnt); break;
        case EwDT::b8: load_tile_t(static_cast<const bool_t *>(src), dst, cnt); break;
    }
}

template <class T>
static void store_tile_t(T *dst, const float *src, int cnt) {
    for_lanes(0, cnt, [&](int64_t i, int k) { storen(dst + i, load8(src + i), k); });
}

static void store_tile(void *dst, EwDT dt, const float *src, int cnt) {
    switch (dt) {
        case EwDT::f32: store_tile_t(static_cast<float *>(dst), src, cnt); break;
        case EwDT::f16: store_tile_t(static_cast<f16_t *>(dst), src, cnt); break;
        case EwDT::bf16: store_tile_t(static_cast<bf16_t *>(dst), src, cnt); break;
        case EwDT::b8: store_tile_t(static_cast<bool_t *>(dst), src, cnt); break;
    }
}

static void fill(float *dst, float v, int n) {
    const vf x = vset(v);
    for (int i = 0; i < n; i += W) store8(dst + i, x);
}

// One instruction over n (padded) elements, rounding the result to dtype R.
template <int R>
static void exec_r(const EwInstr &in, float *o, const float *a, const float *b, const float *c, int n) {
    const vf one = vset(1.0f), zero = vzero();
    switch (in.op) {
        case EwOp::add: map2<R>(o, a, b, n, [](vf x, vf y) { return _mm256_add_ps(x, y); }); break;
        case EwOp::sub: map2<R>(o, a, b, n, [](vf x, vf y) { return _mm256_sub_ps(x, y); }); break;
        case EwOp::mul: map2<R>(o, a, b, n, [](vf x, vf y) { return _mm256_mul_ps(x, y); }); break;
        case EwOp::div: map2<R>(o, a, b, n, [](vf x, vf y) { return _mm256_div_ps(x, y); }); break;
        case EwOp::max: map2<R>(o, a, b, n, [](vf x, vf y) { return vmax_nan(x, y); }); break;
        case EwOp::min: map2<R>(o, a, b, n, [](vf x, vf y) { return vmin_nan(x, y); }); break;
        case EwOp::neg: map1<R>(o, a, n, [](vf x) { return vneg(x); }); break;
        case EwOp::exp: map1<R>(o, a, n, [](vf x) { return vexp(x); }); break;
        case EwOp::log: map1<R>(o, a, n, [](vf x) { return vlog(x); }); break;
        case EwOp::tanh: map1<R>(o, a, n, [](vf x) { return vtanh(x); }); break;
        case EwOp::sqrt: map1<R>(o, a, n, [](vf x) { return vsqrt(x); }); break;
        case EwOp::abs: map1<R>(o, a, n, [](vf x) { return vabs(x); }); break;
        // numpy.maximum(x, 0): NaN stays, -0 gives +0 (MAXPS returns the second operand on ties)
        case EwOp::relu: map1<R>(o, a, n, [zero](vf x) { return vmax_nan(x, zero); }); break;
        // the unfused sigmoid and rsqrt round each step in the value's dtype
        case EwOp::sigmoid:
            map1<R>(o, a, n, [one](vf x) {
                const vf e = rnd<R>(vexp(vneg(x)));
                return _mm256_div_ps(one, rnd<R>(_mm256_add_ps(one, e)));
            });
            break;
        case EwOp::rsqrt:
            map1<R>(o, a, n, [one](vf x) { return _mm256_div_ps(one, rnd<R>(vsqrt(x))); });
            break;
        // activations compute in float32 and round once (as the unfused ops do)
        case EwOp::silu:
            map1<R>(o, a, n, [one](vf x) {
                return _mm256_mul_ps(x, _mm256_div_ps(one, _mm256_add_ps(one, vexp(vneg(x)))));
            });
            break;
        case EwOp::gelu_erf:
            map1<R>(o, a, n, [one](vf x) {
                const vf e = verf(_mm256_mul_ps(x, vset(0.70710678118654752f)));
                return _mm256_mul_ps(_mm256_mul_ps(vset(0.5f), x), _mm256_add_ps(one, e));
            });
            break;
        case EwOp::gelu_tanh:
            map1<R>(o, a, n, [one](vf x) {
                vf t = _mm256_mul_ps(_mm256_mul_ps(_mm256_mul_ps(vset(0.044715f), x), x), x);
                t = _mm256_mul_ps(vset(0.79788456080286536f), _mm256_add_ps(x, t));
                return _mm256_mul_ps(_mm256_mul_ps(vset(0.5f), x), _mm256_add_ps(one, vtanh(t)));
            });
            break;
        case EwOp::pow: {
            // NumPy's float32 power takes these exponents through square, sqrt,
            // reciprocal, copy and ones; every other case is C's powf
            const float e = in.imm;
            if (e == 2.0f) map1<R>(o, a, n, [](vf x) { return _mm256_mul_ps(x, x); });
            else if (e == 1.0f) map1<R>(o, a, n, [](vf x) { return x; });
            else if (e == 0.0f) map1<R>(o, a, n, [one](vf) { return one; });
            else if (e == -1.0f) map1<R>(o, a, n, [one](vf x) { return _mm256_div_ps(one, x); });
            else if (e == 0.5f && R == kNone) map1<R>(o, a, n, [](vf x) { return vsqrt(x); });
            else {
                for (int i = 0; i < n; ++i) o[i] = __builtin_powf(a[i], e);
                if (R != kNone) map1<R>(o, o, n, [](vf x) { return x; });
            }
            break;
        }
        case EwOp::eq: map2<kNone>(o, a, b, n, [](vf x, vf y) { return vmask01(veq(x, y)); }); break;
        case EwOp::ne: map2<kNone>(o, a, b, n, [](vf x, vf y) { return vmask01(vne(x, y)); }); break;
        case EwOp::lt: map2<kNone>(o, a, b, n, [](vf x, vf y) { return vmask01(vlt(x, y)); }); break;
        case EwOp::le: map2<kNone>(o, a, b, n, [](vf x, vf y) { return vmask01(vle(x, y)); }); break;
        case EwOp::gt: map2<kNone>(o, a, b, n, [](vf x, vf y) { return vmask01(vgt(x, y)); }); break;
        case EwOp::ge: map2<kNone>(o, a, b, n, [](vf x, vf y) { return vmask01(vge(x, y)); }); break;
        case EwOp::where:
            for (int i = 0; i < n; i += W)
                store8(o + i, vsel(vne(load8(a + i), zero), load8(b + i), load8(c + i)));
            break;
        case EwOp::cast:
            if (in.dt == EwDT::b8) map1<kNone>(o, a, n, [zero](vf x) { return vmask01(vne(x, zero)); });
            else map1<R>(o, a, n, [](vf x) { return x; });
            break;
        case EwOp::konst:
        case EwOp::count_: break;
    }
}

static void exec(const EwInstr &in, float *o, const float *a, const float *b, const float *c, int n) {
    switch (in.dt) {
        case EwDT::f16: exec_r<kF16>(in, o, a, b, c, n); break;
        case EwDT::bf16: exec_r<kBF16>(in, o, a, b, c, n); break;
        default: exec_r<kNone>(in, o, a, b, c, n); break;
    }
}

// Everything one thread needs for its tiles.
struct ThreadCtx {
    const EwInstr *code;
    int ncode, nin, tile;
    const int32_t *slot;
    const EwInput *inputs;
    float *slots;               // nslots * tile
    const float *const *rows;   // per input: row buffer (row inputs) or null
    const float **ptr;          // per value: where this tile's data is
    int64_t row_len;
    void *out;
    EwDT out_dt;
};

// Scalars and constants, filled once per call and thread.
static void prefill(const ThreadCtx &t) {
    for (int i = 0; i < t.nin; ++i) {
        const EwInput &in = t.inputs[i];
        if (in.kind != EwKind::scalar) continue;
        float v[W];
        load_tile(in.data, in.dt, v, 1);
        fill(t.slots + size_t(t.slot[i]) * size_t(t.tile), v[0], t.tile);
    }
    for (int k = 0; k < t.ncode; ++k)
        if (t.code[k].op == EwOp::konst)
            fill(t.slots + size_t(t.slot[t.nin + k]) * size_t(t.tile), t.code[k].imm, t.tile);
}

// A row input converted once, then continued cyclically for a tile more so
// that any tile reads it from one pointer: buf[j] = row[j % R], j < R + tile.
static void fill_row(const EwInput &in, int64_t R, int tile, float *buf) {
    for (int64_t j = 0; j < R; j += 4096)
        load_tile(static_cast<const char *>(in.data) + j * (in.dt == EwDT::f32 ? 4 : in.dt == EwDT::b8 ? 1 : 2),
                  in.dt, buf + j, int(std::min<int64_t>(4096, R - j)));
    for (int64_t j = R; j < R + tile; ++j) buf[j] = buf[j - R];
}

static size_t dt_size(EwDT d) { return d == EwDT::f32 ? 4 : d == EwDT::b8 ? 1 : 2; }

static void run_tile(const ThreadCtx &t, int64_t base, int cnt) {
    const bool whole = cnt == t.tile;
    const int n = (cnt + W - 1) / W * W;
    const float **ptr = t.ptr;
    for (int i = 0; i < t.nin; ++i) {
        const EwInput &in = t.inputs[i];
        float *slot = t.slots + size_t(t.slot[i]) * size_t(t.tile);
        switch (in.kind) {
            case EwKind::full:
                if (in.dt == EwDT::f32 && whole) {
                    ptr[i] = static_cast<const float *>(in.data) + base;
                } else {
                    load_tile(static_cast<const char *>(in.data) + base * int64_t(dt_size(in.dt)), in.dt, slot, cnt);
                    ptr[i] = slot;
                }
                break;
            case EwKind::scalar: ptr[i] = slot; break;
            case EwKind::row: ptr[i] = t.rows[i] + base % t.row_len; break;
        }
    }
    const int last = t.ncode - 1;
    const bool direct = whole && t.out_dt == EwDT::f32;
    for (int k = 0; k < t.ncode; ++k) {
        const EwInstr &in = t.code[k];
        const int v = t.nin + k;
        float *dst = t.slots + size_t(t.slot[v]) * size_t(t.tile);
        if (in.op != EwOp::konst) {
            if (k == last && direct) dst = static_cast<float *>(t.out) + base;
            exec(in, dst, in.a >= 0 ? ptr[in.a] : nullptr, in.b >= 0 ? ptr[in.b] : nullptr,
                 in.c >= 0 ? ptr[in.c] : nullptr, n);
        }
        ptr[v] = dst;
    }
    if (!direct)
        store_tile(static_cast<char *>(t.out) + base * int64_t(dt_size(t.out_dt)), t.out_dt, ptr[t.nin + last], cnt);
}

// All tiles in [t0, t1) for one thread.
static void run_tiles(ThreadCtx t, int64_t t0, int64_t t1, int64_t n, float *rowmem,
                      std::vector<const float *> &rows) {
    for (int i = 0; i < t.nin; ++i) {
        if (t.inputs[i].kind != EwKind::row) continue;
        fill_row(t.inputs[i], t.row_len, t.tile, rowmem);
        rows[size_t(i)] = rowmem;
        rowmem += t.row_len + t.tile;
    }
    t.rows = rows.data();
    prefill(t);
    for (int64_t tt = t0; tt < t1; ++tt) {
        const int64_t base = tt * t.tile;
        run_tile(t, base, int(std::min<int64_t>(t.tile, n - base)));
    }
}

}  // namespace

#pragma GCC diagnostic pop
#pragma GCC pop_options

void EwProgram::run(const EwInput *inputs, int64_t n, int64_t row_len, void *out) const {
    if (!cpu_supported()) throw std::runtime_error("fused_elementwise needs a CPU with AVX2, FMA and F16C");
    if (n <= 0) return;
    int nrows = 0;
    for (int i = 0; i < nin_; ++i) nrows += inputs[i].kind == EwKind::row;
    if (nrows && row_len <= 0) throw std::invalid_argument("fused_elementwise: row inputs need row_len > 0");
    const int64_t T = tile_;
    const int64_t ntiles = (n + T - 1) / T;
    const int64_t work_per_tile = T * int64_t(code_.size() + size_t(nin_));
    const int64_t min_tiles = std::max<int64_t>(1, kMinWorkPerThread / work_per_tile);
    const size_t scratch = size_t(nslots_) * size_t(T) + size_t(nrows) * size_t(row_len + T);
    parallel_ranges(ntiles, min_tiles, 1, [&](int64_t t0, int64_t t1, int) {
        Scratch &s = tl_scratch;
        float *mem = s.get(scratch);
        s.ptr.assign(size_t(nin_) + code_.size(), nullptr);
        std::vector<const float *> rows(size_t(nin_), nullptr);
        ThreadCtx ctx{code_.data(), int(code_.size()), nin_, tile_, slot_.data(), inputs, mem, nullptr,
                      s.ptr.data(), row_len, out, code_.back().dt};
        run_tiles(ctx, t0, t1, n, mem + size_t(nslots_) * size_t(T), rows);
    });
}

}  // namespace fw::fused
