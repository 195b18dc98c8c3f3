// Channel-last depthwise 3x3 convolution (see nn_dwconv.hpp).
#include "nn_dwconv.hpp"

#include <immintrin.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <omp.h>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "runtime.hpp"

namespace fw {
namespace nn {
namespace {

std::atomic<bool> g_enabled{true};

// Plain data handed to the kernels: x [N, H, W, C], w packed [9][C] (tap-major, so a
// channel block of one tap is one vector load), b [C] or null, y [N, OH, OW, C].
struct DwArgs {
    const float *x, *w, *b;
    float *y;
    int64_t N, H, W, C, OH, OW, sh, sw, pt, pl;
    int act;  // 0 none, 1 relu, 2 relu6
};

// ---------------------------------------------------------------- AVX-512F
#pragma GCC push_options
#pragma GCC target("avx512f")
namespace k512 {
struct V {
    using vec = __m512;
    using mask = __mmask16;
    static constexpr int L = 16;
    static inline mask tail(int n) { return n >= 16 ? mask(0xFFFF) : mask((1u << n) - 1u); }
    static inline vec load(const float *p) { return _mm512_loadu_ps(p); }
    static inline vec loadm(const float *p, mask m) { return _mm512_maskz_loadu_ps(m, p); }
    static inline void store(float *p, vec v) { _mm512_storeu_ps(p, v); }
    static inline void storem(float *p, vec v, mask m) { _mm512_mask_storeu_ps(p, m, v); }
    static inline vec fma(vec a, vec b, vec c) { return _mm512_fmadd_ps(a, b, c); }
    static inline vec max(vec a, vec b) { return _mm512_max_ps(a, b); }
    static inline vec min(vec a, vec b) { return _mm512_min_ps(a, b); }
    static inline vec set1(float f) { return _mm512_set1_ps(f); }
};
constexpr int UR = 8;  // 8 accumulators + 9 weights + 1 input of 32 zmm
constexpr int64_t CHUNK = 32;  // output columns per chunk (16, 32 and whole rows measured: 32 best)
#include "nn_dwconv_kernel.h"  // NOLINT: included once per ISA
}  // namespace k512
#pragma GCC pop_options

// ---------------------------------------------------------------- AVX2 + FMA
#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace k256 {
struct V {
    using vec = __m256;
    using mask = __m256i;
    static constexpr int L = 8;
    static inline mask tail(int n) {
        const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), idx);
    }
    static inline vec load(const float *p) { return _mm256_loadu_ps(p); }
    static inline vec loadm(const float *p, mask m) { return _mm256_maskload_ps(p, m); }
    static inline void store(float *p, vec v) { _mm256_storeu_ps(p, v); }
    static inline void storem(float *p, vec v, mask m) { _mm256_maskstore_ps(p, m, v); }
    static inline vec fma(vec a, vec b, vec c) { return _mm256_fmadd_ps(a, b, c); }
    static inline vec max(vec a, vec b) { return _mm256_max_ps(a, b); }
    static inline vec min(vec a, vec b) { return _mm256_min_ps(a, b); }
    static inline vec set1(float f) { return _mm256_set1_ps(f); }
};
constexpr int UR = 4;  // 4 accumulators + 9 weights + 1 input of 16 ymm
constexpr int64_t CHUNK = 32;  // output columns per chunk (16, 32 and whole rows measured: 32 best)
#include "nn_dwconv_kernel.h"  // NOLINT: included once per ISA
}  // namespace k256
#pragma GCC pop_options

// ---------------------------------------------------------------- portable
// The same sums in the same order, one float at a time; std::fma rounds as the vector
// FMAs do, so every path gives the same bits.
void rows_scalar(const DwArgs &a, int64_t t0, int64_t t1) {
    const int64_t C = a.C;
    for (int64_t t = t0; t < t1; ++t) {
        const int64_t n = t / a.OH, oh = t % a.OH;
        for (int64_t ow = 0; ow < a.OW; ++ow) {
            float *yp = a.y + ((n * a.OH + oh) * a.OW + ow) * C;
            for (int64_t c = 0; c < C; ++c) {
                float acc = a.b ? a.b[c] : 0.f;
                for (int kh = 0; kh < 3; ++kh) {
                    const int64_t ih = oh * a.sh - a.pt + kh;
                    if (ih < 0 || ih >= a.H) continue;
                    for (int kw = 0; kw < 3; ++kw) {
                        const int64_t iw = ow * a.sw - a.pl + kw;
                        if (iw < 0 || iw >= a.W) continue;
                        acc = std::fma(a.x[((n * a.H + ih) * a.W + iw) * C + c], a.w[(kh * 3 + kw) * C + c], acc);
                    }
                }
                if (a.act >= 1) acc = 0.f > acc ? 0.f : acc;  // NaN stays NaN, as in the vector paths
                if (a.act == 2) acc = 6.f < acc ? 6.f : acc;
                yp[c] = acc;
            }
        }
    }
}

// ---------------------------------------------------------------- dispatch
DwIsa best_isa() {
    static const DwIsa best = [] {
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx512f")) return DwIsa::avx512;
        if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return DwIsa::avx2;
        return DwIsa::scalar;
    }();
    return best;
}

const char *isa_name(DwIsa i) {
    return i == DwIsa::avx512 ? "avx512" : i == DwIsa::avx2 ? "avx2" : "scalar";
}

using RowsFn = void (*)(const DwArgs &, int64_t, int64_t);

RowsFn rows_for(DwIsa i) {
    return i == DwIsa::avx512 ? &k512::rows : i == DwIsa::avx2 ? &k256::rows : &rows_scalar;
}

[[noreturn]] void bad(const ConvGeom &g, const std::string &why) {
    throw std::invalid_argument("conv (depthwise 3x3 channel-last kernel): " + why + " (" + g.str() + ")");
}

// The geometry this kernel computes; empty string when it does, else why not.
std::string unsupported(const ConvGeom &g) {
    if (g.nd != 2) return "needs 2 spatial dims";
    if (!g.channel_last) return "needs channel-last data";
    if (g.G != g.C || g.O != g.C) return "needs groups == C_in == C_out (depthwise, multiplier 1)";
    for (int i = 0; i < 2; ++i) {
        if (g.k[i] != 3) return "needs a 3x3 kernel";
        if (g.dil[i] != 1) return "needs dilation 1";
        if (g.stride[i] < 1 || g.stride[i] > 2) return "needs stride 1 or 2";
        if (g.pad_l[i] < 0 || g.pad_l[i] > 1 || g.pad_r[i] < 0 || g.pad_r[i] > 1) return "needs padding 0 or 1";
        if (g.in[i] < 1 || g.out[i] < 1 || (g.in[i] + g.pad_l[i] + g.pad_r[i] - 3) < 0 ||
            (g.in[i] + g.pad_l[i] + g.pad_r[i] - 3) / g.stride[i] + 1 != g.out[i])
            return "the output size does not follow from input, kernel, stride and padding";
    }
    if (g.N < 1 || g.C < 1) return "empty batch or channels";
    return {};
}

bool supported_act(Activation a) {
    return a == Activation::none || a == Activation::relu || a == Activation::relu6;
}

// Repacked weights ([C, 1, 3, 3] -> [9][C]) of constant weights, by (address, stamp,
// C): a predictor passes the same frozen arrays on every call. Bounded; a repack of
// an unstamped weight goes to a per-call buffer instead.
struct PackCache {
    std::mutex mu;
    std::map<std::tuple<const void *, uint64_t, int64_t>, std::shared_ptr<const std::vector<float>>> map;
};
PackCache &pack_cache() {
    static PackCache *c = new PackCache;  // never destroyed: may be used at exit
    return *c;
}

void repack(const float *w, int64_t C, float *out) {
    for (int64_t c = 0; c < C; ++c)
        for (int k = 0; k < 9; ++k) out[k * C + c] = w[c * 9 + k];
}

bool overlaps(const void *a, size_t na, const void *b, size_t nb) {
    const auto pa = reinterpret_cast<uintptr_t>(a), pb = reinterpret_cast<uintptr_t>(b);
    return pa < pb + nb && pb < pa + na;
}

}  // namespace

// Stride 2 only: inside MobileNetV2 b1@224 (one thread, thread CPU time per call,
// medians of 6 interleaved rounds, load 15) this kernel took 344 us against jit_dw's 389
// for the 96-channel 112x112 stride-2 layer, 28 / 34 (192@28) and 21 / 25 (576@14), but
// 181 / 164 (32@112) and 227 / 200 (144@56) at stride 1, where jit_dw's register tiling
// wins; 1295 us for all 17 layers either way. Hot, in a loop on one input, jit_dw is
// ahead on every large shape: the gain is the walk in memory order over an input that
// the previous layer left in L3 or memory. So stride 1 stays on oneDNN.
bool dw3x3_applies(const ConvGeom &g, DType dt, const ConvEpilogue &ep) {
    return dt == DType::f32 && ep.residual == nullptr && supported_act(ep.act) && g.nd == 2 &&
           g.stride[0] == 2 && g.stride[1] == 2 && g_enabled.load(std::memory_order_relaxed) &&
           unsupported(g).empty();
}

void dw3x3_forward(const ConvGeom &g, const Operand &x, const Operand &w, const Operand &y,
                   const ConvEpilogue &ep, uint64_t weight_stamp, DwIsa isa) {
    const std::string why = unsupported(g);
    if (!why.empty()) bad(g, why);
    if (x.dtype != DType::f32 || w.dtype != DType::f32 || y.dtype != DType::f32 ||
        (ep.bias && ep.bias->dtype != DType::f32))
        bad(g, "needs float32 x, weight, bias and out");
    if (ep.residual) bad(g, "takes no residual");
    if (!supported_act(ep.act)) bad(g, "fuses only none, relu or relu6");
    if (!x.data || !w.data || !y.data || (ep.bias && !ep.bias->data)) bad(g, "null buffer");
    const DwIsa best = best_isa();
    if (isa == DwIsa::automatic) isa = best;
    if (int(isa) < 0 || int(isa) > int(best))
        bad(g, std::string("this CPU does not run the ") + isa_name(isa) + " path");
    const int64_t C = g.C;
    const size_t xn = size_t(g.N * g.in[0] * g.in[1] * C) * 4, yn = size_t(g.N * g.out[0] * g.out[1] * C) * 4;
    if (overlaps(x.data, xn, y.data, yn) || overlaps(w.data, size_t(C) * 36, y.data, yn) ||
        (ep.bias && overlaps(ep.bias->data, size_t(C) * 4, y.data, yn)))
        bad(g, "out must not overlap x, weight or bias");

    std::shared_ptr<const std::vector<float>> packed;
    std::vector<float> local;
    const float *wp;
    if (weight_stamp) {
        PackCache &pc = pack_cache();
        const auto key = std::make_tuple(static_cast<const void *>(w.data), weight_stamp, C);
        {
            std::lock_guard<std::mutex> lock(pc.mu);
            auto it = pc.map.find(key);
            if (it != pc.map.end()) packed = it->second;
        }
        if (!packed) {
            auto v = std::make_shared<std::vector<float>>(size_t(C) * 9);
            repack(static_cast<const float *>(w.data), C, v->data());
            packed = v;
            std::lock_guard<std::mutex> lock(pc.mu);
            if (pc.map.size() >= 1024) pc.map.clear();
            pc.map.emplace(key, packed);
        }
        wp = packed->data();
    } else {
        local.resize(size_t(C) * 9);
        repack(static_cast<const float *>(w.data), C, local.data());
        wp = local.data();
    }

    DwArgs a{static_cast<const float *>(x.data), wp,
             ep.bias ? static_cast<const float *>(ep.bias->data) : nullptr, static_cast<float *>(y.data),
             g.N, g.in[0], g.in[1], C, g.out[0], g.out[1], g.stride[0], g.stride[1], g.pad_l[0], g.pad_l[1],
             ep.act == Activation::relu6 ? 2 : ep.act == Activation::relu ? 1 : 0};
    const RowsFn fn = rows_for(isa);
    const int64_t tasks = g.N * g.out[0];
    const int nt = threads_for(g.work());
    if (nt <= 1 || tasks < 2) {
        fn(a, 0, tasks);
        return;
    }
    // contiguous runs of output rows per thread: neighbours share input rows
#pragma omp parallel num_threads(nt)
    {
        const int64_t T = omp_get_num_threads(), i = omp_get_thread_num();
        fn(a, tasks * i / T, tasks * (i + 1) / T);
    }
}

std::string dw3x3_impl() { return std::string("fw_dw3x3_nhwc:") + isa_name(best_isa()); }

std::vector<std::string> dw3x3_isas() {
    std::vector<std::string> out;
    for (int i = 0; i <= int(best_isa()); ++i) out.push_back(isa_name(DwIsa(i)));
    return out;
}

void dw3x3_set_enabled(bool on) { g_enabled.store(on, std::memory_order_relaxed); }

bool dw3x3_enabled() { return g_enabled.load(std::memory_order_relaxed); }

}  // namespace nn
}  // namespace fw
