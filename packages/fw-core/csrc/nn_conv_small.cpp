// Direct float32 convolution for layers with few output channels (see nn_conv_small.hpp).
//
// Layout (channel-last, what the Predictor's layout pass gives a CNN): x [N, H, W, C],
// weight fw's [O, C, KH, KW], y [N, OH, OW, O]. An output row is OW * O contiguous
// floats; element j is pixel j / O, channel j % O. For stride 1 the input pixel under
// tap kw is (j / O) + kw * dw, so with each input row *replicated* per output channel
// (rep[x * O + co] = x's channel ci, built once per input row with one permute per
// vector) every tap is a contiguous, shifted load times a weight pattern that repeats
// every O elements (stored with period lcm(O, V) so each vector's pattern is one
// load). The work is then OW * O / V vectors per tap: it follows the real channel
// count, where oneDNN's kernels round O up to their 16-float (AVX-512) or 8-float
// (AVX2) blocks. Two output rows share each weight load, and up to 12 independent
// accumulators hide the FMA latency (a first version with 4 and an integer division per
// step ran at a third of this speed).
//
// Measured on the 2-core AMD EPYC (avx512, one thread, batch 64, LeNet's layers): see
// kMaxOut below and fw-slim's README ("Pruned LeNet b64, per op").
#include "nn_conv_small.hpp"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace fw {
namespace nn {
namespace {

std::atomic<bool> g_on{true};
std::atomic<int> g_max_isa{2};
std::atomic<uint64_t> g_calls{0};

int cpu_isa() {
    static const int isa = __builtin_cpu_supports("avx512f") ? 2
                           : (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) ? 1
                                                                                                 : 0;
    return isa;
}

int isa_now() { return std::min(cpu_isa(), g_max_isa.load(std::memory_order_relaxed)); }

int lanes(int isa) { return isa == 2 ? 16 : isa == 1 ? 8 : 1; }

// Zero rows kept below the padded input: row_tile computes R output rows at a time and
// reads the input rows of all R (the extra outputs are not stored).
constexpr int64_t kTileSlackRows = 6;

struct Plan {
    int64_t N, H, W, C, O, KH, KW, OH, OW, pt, pb, pl, dh, dw;
    int64_t P;        // weight-pattern period: lcm(O, V)
    int64_t rep_len;  // floats per replicated input row (one channel)
    int64_t pad_len;  // floats of one zero-padded input row
    int act;          // 0 none, 1 relu, 2 relu6
    const float *x, *w, *b;
    float *y;
};

}  // namespace

#pragma GCC push_options
#pragma GCC target("avx512f")
#define FW_SC_NS sc_avx512
#define VF __m512
#define VI __m512i
#define V 16
#define LOADU(p) _mm512_loadu_ps(p)
#define STOREU(p, v) _mm512_storeu_ps(p, v)
#define LOADI(p) _mm512_loadu_si512(reinterpret_cast<const void *>(p))
#define FMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define MAXV(a, b) _mm512_max_ps(a, b)
#define MINV(a, b) _mm512_min_ps(a, b)
#define SETV(x) _mm512_set1_ps(x)
#define PERM(i, v) _mm512_permutexvar_ps(i, v)
#define STORE_N(p, v, n) _mm512_mask_storeu_ps(p, __mmask16((1u << (n)) - 1u), v)
#include "nn_conv_small_simd.hpp"  // NOLINT(build/include): twice, on purpose
#undef FW_SC_NS
#undef VF
#undef VI
#undef V
#undef LOADU
#undef STOREU
#undef LOADI
#undef FMA
#undef MAXV
#undef MINV
#undef SETV
#undef PERM
#undef STORE_N
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace sc_avx2_detail {
static inline void store_n(float *p, __m256 v, int n) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    _mm256_maskstore_ps(p, _mm256_cmpgt_epi32(_mm256_set1_epi32(n), lane), v);
}
}  // namespace sc_avx2_detail
#define FW_SC_NS sc_avx2
#define VF __m256
#define VI __m256i
#define V 8
#define LOADU(p) _mm256_loadu_ps(p)
#define STOREU(p, v) _mm256_storeu_ps(p, v)
#define LOADI(p) _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p))
#define FMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define MAXV(a, b) _mm256_max_ps(a, b)
#define MINV(a, b) _mm256_min_ps(a, b)
#define SETV(x) _mm256_set1_ps(x)
#define PERM(i, v) _mm256_permutevar8x32_ps(v, i)
#define STORE_N(p, v, n) sc_avx2_detail::store_n(p, v, n)
#include "nn_conv_small_simd.hpp"  // NOLINT(build/include): twice, on purpose
#undef FW_SC_NS
#undef VF
#undef VI
#undef V
#undef LOADU
#undef STOREU
#undef LOADI
#undef FMA
#undef MAXV
#undef MINV
#undef SETV
#undef PERM
#undef STORE_N
#pragma GCC pop_options

namespace {

// Scalar fallback (no AVX2): the same sums, one output element at a time.
void image_scalar(const Plan &p, int64_t n) {
    const float *xn = p.x + n * p.H * p.W * p.C;
    const int64_t taps = p.C * p.KH * p.KW;
    for (int64_t oh = 0; oh < p.OH; ++oh)
        for (int64_t ow = 0; ow < p.OW; ++ow) {
            float *yo = p.y + ((n * p.OH + oh) * p.OW + ow) * p.O;
            for (int64_t co = 0; co < p.O; ++co) {
                float s = p.b ? p.b[co] : 0.0f;
                const float *wc = p.w + co * taps;
                for (int64_t kh = 0; kh < p.KH; ++kh) {
                    const int64_t ih = oh - p.pt + kh * p.dh;
                    if (ih < 0 || ih >= p.H) continue;
                    for (int64_t kw = 0; kw < p.KW; ++kw) {
                        const int64_t iw = ow - p.pl + kw * p.dw;
                        if (iw < 0 || iw >= p.W) continue;
                        const float *xp = xn + (ih * p.W + iw) * p.C;
                        for (int64_t ci = 0; ci < p.C; ++ci) s += xp[ci] * wc[(ci * p.KH + kh) * p.KW + kw];
                    }
                }
                if (p.act >= 1) s = s > 0.0f ? s : (s == s ? 0.0f : s);
                if (p.act == 2) s = s < 6.0f ? s : 6.0f;
                yo[co] = s;
            }
        }
}

int act_code(Activation a) {
    switch (a) {
        case Activation::none: return 0;
        case Activation::relu: return 1;
        case Activation::relu6: return 2;
        default: return -1;
    }
}

// The permute that replicates an input row reads one window of V floats: lanes
// ((phase + l) / O) * C for l < V must stay inside it.
bool window_fits(int64_t O, int64_t C, int V) { return ((O + V - 2) / O) * C <= V - 1; }

// Where the direct kernel beats oneDNN (measured on the 2-core AMD EPYC, avx512, one
// thread, batch 64, CPU time, us oneDNN -> direct): the stem 1 -> 3 at 28x28, 3x3:
// 157 -> 100-120, 1 -> 4: 157 -> 109-120; but 1 -> 6: 157 -> 170-210 and a pruned
// conv2 3 -> 8, 5x5: 139 -> 240-340. oneDNN runs its padded 16 channels at about 3.5x
// the direct kernel's multiply-adds per second here (its weights live in registers;
// the direct kernel streams the replicated rows), so the direct one pays only below
// 16 / 3.5 channels, and for few taps. A rule on the shape, never a timing.
constexpr int64_t kMaxOut = 4;
constexpr int64_t kMaxTaps = 27;

[[noreturn]] void bad(const std::string &why, const ConvGeom &g) {
    throw std::invalid_argument("conv (small-channel direct kernel): " + why + " (" + g.str() + ")");
}

std::string dims(const Operand &a) {
    std::string s = std::string(dtype_name(a.dtype)) + "[";
    for (int i = 0; i < a.ndim; ++i) s += (i ? ", " : "") + std::to_string(a.shape[i]);
    return s + "]";
}

void expect(const Operand &a, const char *name, std::initializer_list<int64_t> shape, const ConvGeom &g) {
    bool ok = a.data && a.dtype == DType::f32 && a.ndim == int(shape.size()) && !a.strides;
    int i = 0;
    for (int64_t d : shape) ok = ok && a.shape && a.shape[i++] == d;
    if (!ok) {
        std::string want = "float32[";
        i = 0;
        for (int64_t d : shape) want += (i++ ? ", " : "") + std::to_string(d);
        bad(std::string(name) + " is " + (a.data ? dims(a) : std::string("missing")) + ", expected contiguous " +
                want + "]",
            g);
    }
}

}  // namespace

bool conv_small_applies(const ConvGeom &g, DType dt, bool residual, Activation act) {
    if (!g_on.load(std::memory_order_relaxed)) return false;
    if (dt != DType::f32 || g.nd != 2 || !g.channel_last || g.G != 1 || residual || act_code(act) < 0) return false;
    if (g.stride[0] != 1 || g.stride[1] != 1 || g.O > kMaxOut || g.C * g.k[0] * g.k[1] > kMaxTaps) return false;
    const int isa = isa_now();
    return isa == 0 || window_fits(g.O, g.C, lanes(isa));
}

bool conv_small_forward(const ConvGeom &g, const Operand &x, const Operand &w, const Operand &y,
                        const ConvEpilogue &ep) {
    if (!conv_small_applies(g, x.dtype, ep.residual != nullptr, ep.act)) return false;
    const int64_t N = g.N, H = g.in[0], W = g.in[1], C = g.C, O = g.O, KH = g.k[0], KW = g.k[1];
    const int64_t OH = g.out[0], OW = g.out[1];
    expect(x, "x", {N, H, W, C}, g);
    expect(w, "weight", {O, C, KH, KW}, g);
    expect(y, "out", {N, OH, OW, O}, g);
    if (ep.bias) expect(*ep.bias, "bias", {O}, g);
    if (OH != H + g.pad_l[0] + g.pad_r[0] - g.dil[0] * (KH - 1) ||
        OW != W + g.pad_l[1] + g.pad_r[1] - g.dil[1] * (KW - 1))
        bad("the output size does not follow from input, kernel, dilation and padding at stride 1", g);

    const int isa = isa_now();
    const int64_t Vl = lanes(isa);
    Plan p{N, H, W, C, O, KH, KW, OH, OW, g.pad_l[0], g.pad_r[0], g.pad_l[1], g.dil[0], g.dil[1], 0, 0, 0,
           act_code(ep.act),
           static_cast<const float *>(x.data), static_cast<const float *>(w.data),
           ep.bias ? static_cast<const float *>(ep.bias->data) : nullptr, static_cast<float *>(y.data)};
    const int nt = threads_for(g.work());
    g_calls.fetch_add(1, std::memory_order_relaxed);
    if (isa == 0) {
#pragma omp parallel for num_threads(nt) schedule(static)
        for (int64_t n = 0; n < N; ++n) image_scalar(p, n);
        return true;
    }
    const int64_t Wp = W + g.pad_l[1] + g.pad_r[1];
    p.P = std::lcm(O, Vl);
    // rows start on 64-byte lines (no store or aligned load splits a line)
    p.rep_len = ((Wp * O + Vl - 1) / Vl * Vl + Vl + 15) / 16 * 16;
    p.pad_len = ((p.rep_len / O + 1) * C + Vl + C + 15) / 16 * 16;
    // Weight patterns [C, KH, KW][P] (element j: output channel j % O), the bias's [P],
    // and the permute indices per phase [O][V]: read-only, shared by the threads.
    std::vector<float> wpat(size_t(C * KH * KW * p.P)), bpat(size_t(p.P), 0.0f);
    for (int64_t ci = 0; ci < C; ++ci)
        for (int64_t kh = 0; kh < KH; ++kh)
            for (int64_t kw = 0; kw < KW; ++kw) {
                float *dst = wpat.data() + ((ci * KH + kh) * KW + kw) * p.P;
                for (int64_t j = 0; j < p.P; ++j) dst[j] = p.w[(((j % O) * C + ci) * KH + kh) * KW + kw];
            }
    if (p.b)
        for (int64_t j = 0; j < p.P; ++j) bpat[j] = p.b[j % O];
    std::vector<int32_t> idx(size_t(O * Vl));
    for (int64_t ph = 0; ph < O; ++ph)
        for (int64_t l = 0; l < Vl; ++l) idx[ph * Vl + l] = int32_t(((ph + l) / O) * C);
    const int64_t scratch = H * p.pad_len + (H + g.pad_l[0] + g.pad_r[0] + kTileSlackRows) * C * p.rep_len;
#pragma omp parallel num_threads(nt)
    {
        std::vector<float> store(static_cast<size_t>(scratch + 16));  // per thread: padded and replicated rows
        float *buf = store.data() + (16 - (reinterpret_cast<uintptr_t>(store.data()) / 4) % 16) % 16;
#pragma omp for schedule(static)
        for (int64_t n = 0; n < N; ++n) {
            if (isa == 2)
                sc_avx512::image(p, wpat.data(), bpat.data(), idx.data(), buf, buf + H * p.pad_len, n);
            else
                sc_avx2::image(p, wpat.data(), bpat.data(), idx.data(), buf, buf + H * p.pad_len, n);
        }
    }
    return true;
}

void conv_small_set_enabled(bool on) { g_on.store(on, std::memory_order_relaxed); }
bool conv_small_enabled() { return g_on.load(std::memory_order_relaxed); }

void conv_small_set_max_isa(int isa) {
    if (isa < 0 || isa > 2)
        throw std::invalid_argument("conv_small_set_max_isa: isa must be 0 (scalar), 1 (AVX2) or 2 (AVX-512), got " +
                                    std::to_string(isa));
    g_max_isa.store(isa, std::memory_order_relaxed);
}

const char *conv_small_isa() {
    const int isa = isa_now();
    return isa == 2 ? "avx512f" : isa == 1 ? "avx2" : "scalar";
}

uint64_t conv_small_calls() { return g_calls.load(std::memory_order_relaxed); }

}  // namespace nn
}  // namespace fw
