#include "nn_pool.hpp"

#include <omp.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "bf16.hpp"
#include "runtime.hpp"

namespace fw {
namespace nn {
namespace {

// The geometry as 3 spatial dims (leading unit dims for 1-D / 2-D pooling).
struct G3 {
    int64_t N, C, I[3], O[3], K[3], S[3], B[3], E[3];
    bool cl;
    int64_t inP, outP, kk;
};

G3 as3(const PoolGeom &g) {
    G3 r{};
    r.N = g.N, r.C = g.C, r.cl = g.channel_last;
    const int lead = 3 - g.nd;
    for (int d = 0; d < 3; ++d) {
        const int s = d - lead;
        const bool real = s >= 0;
        r.I[d] = real ? g.in[s] : 1;
        r.O[d] = real ? g.out[s] : 1;
        r.K[d] = real ? g.k[s] : 1;
        r.S[d] = real ? g.stride[s] : 1;
        r.B[d] = real ? g.pad_b[s] : 0;
        r.E[d] = real ? g.pad_e[s] : 0;
    }
    r.inP = r.I[0] * r.I[1] * r.I[2];
    r.outP = r.O[0] * r.O[1] * r.O[2];
    r.kk = r.K[0] * r.K[1] * r.K[2];
    return r;
}

inline float load(const float *p, int64_t i) { return p[i]; }
inline float load(const uint16_t *p, int64_t i) { return bf16_bits_to_f32(p[i]); }
inline void store(float *p, int64_t i, float v) { p[i] = v; }
inline void store(uint16_t *p, int64_t i, float v) { p[i] = f32_to_bf16_bits(v); }

// Parallel only when there is enough work for a second thread to pay.
int threads(double work) { return apply_num_threads(work < double(1 << 17) ? 1 : 1 << 30); }

inline int64_t clip(int64_t v, int64_t n) { return v < 0 ? 0 : (v >= n ? n - 1 : v); }

// The NumPy argmax rule: strictly greater wins, a NaN wins over a non-NaN once
// (written with comparisons only, so loops over it vectorise).
inline bool better(float v, float best) { return (v > best) | ((v != v) & (best == best)); }

#if defined(__SSE2__)
// better() on 4 lanes: a mask of the lanes where v replaces b.
inline __m128 better4(__m128 v, __m128 b) {
    return _mm_or_ps(_mm_cmpgt_ps(v, b), _mm_and_ps(_mm_cmpunord_ps(v, v), _mm_cmpord_ps(b, b)));
}

inline __m128 sel(__m128 m, __m128 a, __m128 b) { return _mm_or_ps(_mm_and_ps(m, a), _mm_andnot_ps(m, b)); }

inline __m128i sel(__m128 m, __m128i a, __m128i b) {
    const __m128i mi = _mm_castps_si128(m);
    return _mm_or_si128(_mm_and_si128(mi, a), _mm_andnot_si128(mi, b));
}

#endif

// best/arg over n lanes: where v[i] is better, best[i] = v[i] and arg[i] =
// a0 + i*astep. Branch-free (a data-dependent branch here mispredicts half the time).
inline void update_max(float *best, int32_t *arg, const float *v, int64_t n, int32_t a0, int32_t astep) {
    int64_t i = 0;
#if defined(__SSE2__)
    __m128i av = _mm_setr_epi32(a0, a0 + astep, a0 + 2 * astep, a0 + 3 * astep);
    const __m128i step = _mm_set1_epi32(4 * astep);
    for (; i + 4 <= n; i += 4) {
        const __m128 b = _mm_loadu_ps(best + i), x = _mm_loadu_ps(v + i);
        const __m128 m = better4(x, b);
        _mm_storeu_ps(best + i, sel(m, x, b));
        __m128i *ap = reinterpret_cast<__m128i *>(arg + i);
        _mm_storeu_si128(ap, sel(m, av, _mm_loadu_si128(ap)));
        av = _mm_add_epi32(av, step);
    }
#endif
    for (; i < n; ++i) {
        const bool up = better(v[i], best[i]);
        best[i] = up ? v[i] : best[i];
        arg[i] = up ? int32_t(a0 + i * astep) : arg[i];
    }
}

// One tap of a row of windows: best/arg over outputs [lo, hi) reading r[o*s], whose
// flat input index is base + o*s. `first`: the window's first tap, taken as is.
// tmp: scratch for the strided / bf16 values.
template <class T>
inline void row_tap(const T *r, int64_t s, int64_t lo, int64_t hi, float *best, int32_t *arg, int64_t base,
                    bool first, float *tmp) {
    const int64_t n = hi - lo;
    if (n <= 0) return;
    const float *v;
    if constexpr (std::is_same<T, float>::value) {
        if (s == 1) {
            v = r + lo;
        } else {
            for (int64_t i = 0; i < n; ++i) tmp[i] = r[(lo + i) * s];
            v = tmp;
        }
    } else {
        for (int64_t i = 0; i < n; ++i) tmp[i] = load(r, (lo + i) * s);
        v = tmp;
    }
    if (first) std::copy(v, v + n, best + lo);
    else update_max(best + lo, arg + lo, v, n, int32_t(base + lo * s), int32_t(s));
}

template <int S, class T>
inline void row_sum(const T *r, int64_t s, int64_t lo, int64_t hi, float *acc) {
    const int64_t st = S ? S : s;
    for (int64_t o = lo; o < hi; ++o) acc[o] += load(r, o * st);
}

// Output positions o of a dim with o*s - b + k inside [0, n): [lo, hi).
inline void valid_range(int64_t k, int64_t s, int64_t b, int64_t n, int64_t O, int64_t *lo, int64_t *hi) {
    // o*s >= b - k  and  o*s <= n - 1 + b - k
    const int64_t a = b - k, c = n - 1 + b - k;
    int64_t l = a <= 0 ? 0 : (a + s - 1) / s;
    int64_t h = c < 0 ? 0 : c / s + 1;
    *lo = std::min(l, O);
    *hi = std::max(std::min(h, O), *lo);
}

#if defined(__SSE2__)
// Four outputs of a 2x2 / stride-2 row pair, float32: branch-free (the scalar
// compare-and-select compiles to branches that mispredict on real data).
inline int64_t max_2x2_sse(const float *r0, const float *r1, float *yr, int32_t *ir, int64_t OW, int32_t base,
                           int32_t W) {
    int64_t o = 0;
    const __m128i step = _mm_set1_epi32(8), lane = _mm_setr_epi32(0, 2, 4, 6);
    __m128i col = _mm_add_epi32(_mm_set1_epi32(base), lane);  // base + 2*o for 4 outputs
    const __m128i one = _mm_set1_epi32(1), w = _mm_set1_epi32(W), w1 = _mm_set1_epi32(W + 1);
    for (; o + 4 <= OW; o += 4) {
        const __m128 a0 = _mm_loadu_ps(r0 + 2 * o), a1 = _mm_loadu_ps(r0 + 2 * o + 4);
        const __m128 c0 = _mm_loadu_ps(r1 + 2 * o), c1 = _mm_loadu_ps(r1 + 2 * o + 4);
        __m128 b = _mm_shuffle_ps(a0, a1, _MM_SHUFFLE(2, 0, 2, 0));
        const __m128 v1 = _mm_shuffle_ps(a0, a1, _MM_SHUFFLE(3, 1, 3, 1));
        const __m128 v2 = _mm_shuffle_ps(c0, c1, _MM_SHUFFLE(2, 0, 2, 0));
        const __m128 v3 = _mm_shuffle_ps(c0, c1, _MM_SHUFFLE(3, 1, 3, 1));
        __m128i a = col;
        __m128 m = better4(v1, b);
        b = sel(m, v1, b), a = sel(m, _mm_add_epi32(col, one), a);
        m = better4(v2, b);
        b = sel(m, v2, b), a = sel(m, _mm_add_epi32(col, w), a);
        m = better4(v3, b);
        b = sel(m, v3, b), a = sel(m, _mm_add_epi32(col, w1), a);
        _mm_storeu_ps(yr + o, b);
        if (ir) _mm_storeu_si128(reinterpret_cast<__m128i *>(ir + o), a);
        col = _mm_add_epi32(col, step);
    }
    return o;
}
#endif

// The common case in CNNs: 2-D, 2x2 windows, stride 2, every window inside the
// input. One pass per output row with the four taps unrolled.
template <class T>
bool max_2x2(const G3 &g, const T *x, T *y, int32_t *idx, int nt) {
    if (g.cl || g.O[0] != 1 || g.K[0] != 1 || g.K[1] != 2 || g.K[2] != 2 || g.S[1] != 2 || g.S[2] != 2 ||
        g.B[1] || g.B[2] || 2 * g.O[1] > g.I[1] || 2 * g.O[2] > g.I[2])
        return false;
    const int64_t OH = g.O[1], OW = g.O[2], W = g.I[2];
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t p = 0; p < g.N * g.C; ++p) {
        const T *xp = x + p * g.inP;
        for (int64_t oh = 0; oh < OH; ++oh) {
            const T *r0 = xp + 2 * oh * W, *r1 = r0 + W;
            T *yr = y + p * g.outP + oh * OW;
            const int32_t base = int32_t(2 * oh * W);
            int64_t o0 = 0;
#if defined(__SSE2__)
            if constexpr (std::is_same<T, float>::value)
                o0 = max_2x2_sse(r0, r1, yr, idx ? idx + p * g.outP + oh * OW : nullptr, OW, base, int32_t(W));
#endif
            if (idx) {
                int32_t *ir = idx + p * g.outP + oh * OW;
                for (int64_t o = o0; o < OW; ++o) {
                    float b = load(r0, 2 * o);
                    int32_t a = base + int32_t(2 * o);
                    float v = load(r0, 2 * o + 1);
                    bool up = better(v, b);
                    b = up ? v : b, a = up ? a + 1 : a;
                    v = load(r1, 2 * o);
                    up = better(v, b);
                    b = up ? v : b, a = up ? base + int32_t(W + 2 * o) : a;
                    v = load(r1, 2 * o + 1);
                    up = better(v, b);
                    b = up ? v : b, a = up ? base + int32_t(W + 2 * o + 1) : a;
                    store(yr, o, b);
                    ir[o] = a;
                }
            } else {
                for (int64_t o = o0; o < OW; ++o) {
                    float b = load(r0, 2 * o), v = load(r0, 2 * o + 1);
                    b = better(v, b) ? v : b;
                    v = load(r1, 2 * o);
                    b = better(v, b) ? v : b;
                    v = load(r1, 2 * o + 1);
                    b = better(v, b) ? v : b;
                    store(yr, o, b);
                }
            }
        }
    }
    return true;
}

#if defined(__SSE2__)
// (Branch-free selects throughout: a scalar compare-and-select compiles to branches that
// mispredict on real data, 15 ns per element measured on the 2-core EPYC.)
// The best of the four taps of one 2x2 window on 4 lanes, in the reference's order
// (so NaN and signed-zero ties resolve as the reference resolves them).
inline __m128 max4_taps(__m128 b, __m128 v1, __m128 v2, __m128 v3) {
    b = sel(better4(v1, b), v1, b);
    b = sel(better4(v2, b), v2, b);
    return sel(better4(v3, b), v3, b);
}

// One batch row of 2x2/2 channel-last windows, the taps held in registers: C >= 4 in
// 4-lane steps, the last step overlapping the one before when 4 does not divide C (its
// lanes are recomputed from the same taps, so they get the same values); C < 4 one lane
// at a time. The former loop (a copy, then three read-modify-write passes per pixel,
// with a scalar tail) took 19 ns per pixel for C = 6, LeNet's first pool: 240 us of a
// 1 ms batch-64 run on the 2-core EPYC.
void max_2x2_cl_row(const float *r0, const float *r1, float *yr, int64_t OW, int64_t C) {
    for (int64_t ow = 0; ow < OW; ++ow) {
        const float *a = r0 + 2 * ow * C, *c = r1 + 2 * ow * C;
        float *yo = yr + ow * C;
        if (C >= 4) {
            for (int64_t k = 0;; k += 4) {
                if (k + 4 > C) k = C - 4;
                _mm_storeu_ps(yo + k, max4_taps(_mm_loadu_ps(a + k), _mm_loadu_ps(a + C + k),
                                                _mm_loadu_ps(c + k), _mm_loadu_ps(c + C + k)));
                if (k + 4 >= C) break;
            }
        } else if (C > 1 && (2 * ow + 1) * C + 4 <= 2 * OW * C && ow * C + 4 <= OW * C) {
            // 2 or 3 channels (a pruned layer): one 4-lane step whose extra lanes read the
            // next pixel's taps and write junk into the next output pixel, which the next
            // step overwrites; the last pixel of the row (where that would leave the row)
            // goes lane by lane. 3 channels lane by lane cost more than 6 in two steps.
            _mm_storeu_ps(yo, max4_taps(_mm_loadu_ps(a), _mm_loadu_ps(a + C), _mm_loadu_ps(c),
                                        _mm_loadu_ps(c + C)));
        } else {
            for (int64_t k = 0; k < C; ++k)
                _mm_store_ss(yo + k, max4_taps(_mm_load_ss(a + k), _mm_load_ss(a + C + k),
                                               _mm_load_ss(c + k), _mm_load_ss(c + C + k)));
        }
    }
}
#endif

// The same windows channel-last (what the layout_nhwc pass makes of a CNN's pools),
// float32 without indices (inference): per output pixel, the four taps are runs of
// C contiguous channels, taken in the reference's order. The generic channel-last
// loop below walks the window with bounds checks and an argmax per pixel: LeNet's
// 2x2 pools at batch 64 (C = 6) took 1.0 ms there, 0.16 ms here.
template <class T>
bool max_2x2_cl(const G3 &g, const T *x, T *y, int32_t *idx, int nt) {
#if defined(__SSE2__)
    if constexpr (std::is_same<T, float>::value) {
        if (idx || !g.cl || g.O[0] != 1 || g.K[0] != 1 || g.K[1] != 2 || g.K[2] != 2 || g.S[1] != 2 ||
            g.S[2] != 2 || g.B[1] || g.B[2] || 2 * g.O[1] > g.I[1] || 2 * g.O[2] > g.I[2])
            return false;
        const int64_t OH = g.O[1], OW = g.O[2], W = g.I[2], C = g.C;
#pragma omp parallel for num_threads(nt) schedule(static)
        for (int64_t r = 0; r < g.N * OH; ++r) {
            const int64_t n = r / OH, oh = r % OH;
            const float *r0 = x + (n * g.inP + 2 * oh * W) * C;
            max_2x2_cl_row(r0, r0 + W * C, y + (n * g.outP + oh * OW) * C, OW, C);
        }
        return true;
    }
#endif
    return false;
}

template <class T>
void max_fwd(const G3 &g, const T *x, T *y, int32_t *idx) {
    const float ninf = -std::numeric_limits<float>::infinity();
    const int nt = threads(double(g.N * g.C) * double(g.outP) * double(g.kk));
    if (max_2x2(g, x, y, idx, nt) || max_2x2_cl(g, x, y, idx, nt)) return;
    if (!g.cl) {
        const int64_t OW = g.O[2];
        // per kernel column: the output columns whose tap lies inside the row
        std::vector<int64_t> wlo(size_t(g.K[2])), whi(size_t(g.K[2]));
        for (int64_t kw = 0; kw < g.K[2]; ++kw) valid_range(kw, g.S[2], g.B[2], g.I[2], OW, &wlo[kw], &whi[kw]);
#pragma omp parallel num_threads(nt)
        {
            std::vector<float> best(static_cast<size_t>(OW)), tmp(static_cast<size_t>(OW));
            std::vector<int32_t> arg(static_cast<size_t>(OW));
#pragma omp for schedule(static)
            for (int64_t p = 0; p < g.N * g.C; ++p) {
                const T *xp = x + p * g.inP;
                for (int64_t od = 0; od < g.O[0]; ++od)
                    for (int64_t oh = 0; oh < g.O[1]; ++oh) {
                        const int64_t sd = od * g.S[0] - g.B[0], sh = oh * g.S[1] - g.B[1];
                        std::fill(best.begin(), best.end(), ninf);
                        // a window whose maximum is its (padding) first tap points at that
                        // tap's position clipped into the input
                        const int64_t r0 = (clip(sd, g.I[0]) * g.I[1] + clip(sh, g.I[1])) * g.I[2];
                        for (int64_t o = 0; o < OW; ++o) arg[o] = int32_t(r0 + clip(o * g.S[2] - g.B[2], g.I[2]));
                        bool first = true;
                        for (int64_t kd = 0; kd < g.K[0]; ++kd) {
                            const int64_t id = sd + kd;
                            for (int64_t kh = 0; kh < g.K[1]; ++kh) {
                                const int64_t ih = sh + kh;
                                if (id < 0 || id >= g.I[0] || ih < 0 || ih >= g.I[1]) {
                                    first = false;  // a padding row: -inf never wins
                                    continue;
                                }
                                const int64_t rb = (id * g.I[1] + ih) * g.I[2] - g.B[2];
                                const T *row = xp + rb;
                                for (int64_t kw = 0; kw < g.K[2]; ++kw) {
                                    row_tap(row + kw, g.S[2], wlo[kw], whi[kw], best.data(), arg.data(), rb + kw,
                                            first, tmp.data());
                                    first = false;
                                }
                            }
                        }
                        const int64_t base = p * g.outP + (od * g.O[1] + oh) * OW;
                        for (int64_t o = 0; o < OW; ++o) store(y, base + o, best[o]);
                        if (idx) std::copy(arg.begin(), arg.end(), idx + base);
                    }
            }
        }
        return;
    }
    const int64_t C = g.C;
#pragma omp parallel num_threads(nt)
    {
        std::vector<float> best(static_cast<size_t>(C)), tmp(static_cast<size_t>(C));
        std::vector<int32_t> arg(static_cast<size_t>(C));
#pragma omp for schedule(static)
        for (int64_t q = 0; q < g.N * g.outP; ++q) {
            const int64_t n = q / g.outP, o = q % g.outP;
            const int64_t ow = o % g.O[2], oh = (o / g.O[2]) % g.O[1], od = o / (g.O[2] * g.O[1]);
            const int64_t sd = od * g.S[0] - g.B[0], sh = oh * g.S[1] - g.B[1], sw = ow * g.S[2] - g.B[2];
            // the first tap, clipped into the input: where a padding maximum points
            const int32_t p0 = int32_t((clip(sd, g.I[0]) * g.I[1] + clip(sh, g.I[1])) * g.I[2] + clip(sw, g.I[2]));
            std::fill(best.begin(), best.end(), ninf);
            std::fill(arg.begin(), arg.end(), p0);
            bool first = true;
            for (int64_t kd = 0; kd < g.K[0]; ++kd)
                for (int64_t kh = 0; kh < g.K[1]; ++kh)
                    for (int64_t kw = 0; kw < g.K[2]; ++kw) {
                        const int64_t id = sd + kd, ih = sh + kh, iw = sw + kw;
                        const bool ok = id >= 0 && id < g.I[0] && ih >= 0 && ih < g.I[1] && iw >= 0 && iw < g.I[2];
                        if (!ok) {  // padding: -inf, which only a first tap takes
                            first = false;
                            continue;
                        }
                        const int32_t pos = int32_t((id * g.I[1] + ih) * g.I[2] + iw);
                        const T *xr = x + (n * g.inP + pos) * C;
                        const float *v;
                        if constexpr (std::is_same<T, float>::value) {
                            v = xr;
                        } else {
                            for (int64_t c = 0; c < C; ++c) tmp[c] = load(xr, c);
                            v = tmp.data();
                        }
                        if (first) std::copy(v, v + C, best.begin());
                        else update_max(best.data(), arg.data(), v, C, pos, 0);
                        first = false;
                    }
            T *yr = y + q * C;
            for (int64_t c = 0; c < C; ++c) store(yr, c, best[c]);
            if (idx) std::copy(arg.begin(), arg.end(), idx + q * C);
        }
    }
}

// Per-dim divisor factors of the average (see avg_pool_forward).
std::vector<double> counts(const G3 &g, int d, bool exclusive) {
    std::vector<double> c(size_t(g.O[d]));
    for (int64_t o = 0; o < g.O[d]; ++o) {
        const int64_t s = o * g.S[d] - g.B[d];
        const int64_t n = exclusive ? std::min(s + g.K[d], g.I[d]) - std::max<int64_t>(s, 0)
                                    : std::min(s + g.K[d], g.I[d] + g.E[d]) - s;
        c[size_t(o)] = double(std::max<int64_t>(n, 0));
    }
    return c;
}

// The divisor per output position of a plane.
std::vector<float> divisors(const G3 &g, bool exclusive, double divisor_override) {
    std::vector<float> r(size_t(g.outP));
    if (divisor_override > 0) {
        std::fill(r.begin(), r.end(), float(divisor_override));
        return r;
    }
    auto c0 = counts(g, 0, exclusive), c1 = counts(g, 1, exclusive), c2 = counts(g, 2, exclusive);
    int64_t o = 0;
    for (int64_t a = 0; a < g.O[0]; ++a)
        for (int64_t b = 0; b < g.O[1]; ++b)
            for (int64_t c = 0; c < g.O[2]; ++c, ++o)
                r[size_t(o)] = float(std::max(c0[size_t(a)] * c1[size_t(b)] * c2[size_t(c)], 1.0));
    return r;
}

// Calls f(o, tap input offset within the plane) for every real tap of output o.
template <class F>
inline void for_taps(const G3 &g, int64_t o, F &&f) {
    const int64_t ow = o % g.O[2], oh = (o / g.O[2]) % g.O[1], od = o / (g.O[2] * g.O[1]);
    const int64_t sd = od * g.S[0] - g.B[0], sh = oh * g.S[1] - g.B[1], sw = ow * g.S[2] - g.B[2];
    const int64_t d0 = std::max<int64_t>(sd, 0), d1 = std::min(sd + g.K[0], g.I[0]);
    const int64_t h0 = std::max<int64_t>(sh, 0), h1 = std::min(sh + g.K[1], g.I[1]);
    const int64_t w0 = std::max<int64_t>(sw, 0), w1 = std::min(sw + g.K[2], g.I[2]);
    for (int64_t id = d0; id < d1; ++id)
        for (int64_t ih = h0; ih < h1; ++ih)
            for (int64_t iw = w0; iw < w1; ++iw) f((id * g.I[1] + ih) * g.I[2] + iw);
}

template <class T>
void avg_fwd(const G3 &g, const T *x, T *y, bool exclusive, double divisor_override) {
    const auto div = divisors(g, exclusive, divisor_override);
    const int nt = threads(double(g.N * g.C) * double(g.outP) * double(g.kk));
    if (!g.cl) {
        const int64_t OW = g.O[2];
        std::vector<int64_t> wlo(size_t(g.K[2])), whi(size_t(g.K[2]));
        for (int64_t kw = 0; kw < g.K[2]; ++kw) valid_range(kw, g.S[2], g.B[2], g.I[2], OW, &wlo[kw], &whi[kw]);
#pragma omp parallel num_threads(nt)
        {
            std::vector<float> acc(static_cast<size_t>(OW));
#pragma omp for schedule(static)
            for (int64_t p = 0; p < g.N * g.C; ++p) {
                const T *xp = x + p * g.inP;
                for (int64_t od = 0; od < g.O[0]; ++od)
                    for (int64_t oh = 0; oh < g.O[1]; ++oh) {
                        const int64_t sd = od * g.S[0] - g.B[0], sh = oh * g.S[1] - g.B[1];
                        std::fill(acc.begin(), acc.end(), 0.f);
                        for (int64_t kd = 0; kd < g.K[0]; ++kd) {
                            const int64_t id = sd + kd;
                            if (id < 0 || id >= g.I[0]) continue;
                            for (int64_t kh = 0; kh < g.K[1]; ++kh) {
                                const int64_t ih = sh + kh;
                                if (ih < 0 || ih >= g.I[1]) continue;
                                const T *row = xp + (id * g.I[1] + ih) * g.I[2] - g.B[2];
                                for (int64_t kw = 0; kw < g.K[2]; ++kw) {
                                    const int64_t s = g.S[2];
                                    if (s == 1) row_sum<1>(row + kw, s, wlo[kw], whi[kw], acc.data());
                                    else if (s == 2) row_sum<2>(row + kw, s, wlo[kw], whi[kw], acc.data());
                                    else row_sum<0>(row + kw, s, wlo[kw], whi[kw], acc.data());
                                }
                            }
                        }
                        const int64_t o0 = (od * g.O[1] + oh) * OW;
                        for (int64_t o = 0; o < OW; ++o) store(y, p * g.outP + o0 + o, acc[o] / div[size_t(o0 + o)]);
                    }
            }
        }
        return;
    }
    const int64_t C = g.C;
#pragma omp parallel num_threads(nt)
    {
        std::vector<float> acc(static_cast<size_t>(C));
#pragma omp for schedule(static)
        for (int64_t q = 0; q < g.N * g.outP; ++q) {
            const int64_t n = q / g.outP, o = q % g.outP;
            std::fill(acc.begin(), acc.end(), 0.f);
            for_taps(g, o, [&](int64_t i) {
                const T *xr = x + (n * g.inP + i) * C;
                for (int64_t c = 0; c < C; ++c) acc[size_t(c)] += load(xr, c);
            });
            T *yr = y + q * C;
            for (int64_t c = 0; c < C; ++c)
                store(yr, c, acc[size_t(c)] / div[size_t(o)]);
        }
    }
}

}  // namespace

int64_t PoolGeom::in_plane() const {
    int64_t n = 1;
    for (int i = 0; i < nd; ++i) n *= in[i];
    return n;
}

int64_t PoolGeom::out_plane() const {
    int64_t n = 1;
    for (int i = 0; i < nd; ++i) n *= out[i];
    return n;
}

void check_pool_geometry(const PoolGeom &g, const char *op) {
    auto bad = [&](const std::string &why) { throw std::invalid_argument(std::string(op) + ": " + why); };
    if (g.nd < 1 || g.nd > 3) bad("1 to 3 spatial dims are supported");
    if (g.N < 0 || g.C < 0) bad("negative sizes");
    // Bounds first, so the int64 arithmetic below cannot overflow (huge paddings
    // used to wrap `span` negative-to-positive and index far outside x).
    constexpr int64_t kLim = int64_t(1) << 31;
    for (int i = 0; i < g.nd; ++i) {
        if (g.k[i] < 1 || g.stride[i] < 1 || g.in[i] < 1 || g.out[i] < 0 || g.pad_b[i] < 0 || g.pad_e[i] < 0)
            bad("kernel sizes, strides and input sizes must be positive, paddings non-negative (spatial dim " +
                std::to_string(i) + ": kernel " + std::to_string(g.k[i]) + ", stride " +
                std::to_string(g.stride[i]) + ", padding " + std::to_string(g.pad_b[i]) + "+" +
                std::to_string(g.pad_e[i]) + ", input " + std::to_string(g.in[i]) + ")");
        if (g.k[i] > kLim || g.stride[i] > kLim || g.in[i] > kLim || g.out[i] > kLim || g.pad_b[i] > kLim ||
            g.pad_e[i] > kLim)
            bad("kernel size, stride, padding or size of spatial dim " + std::to_string(i) + " exceeds 2^31 (kernel " +
                std::to_string(g.k[i]) + ", stride " + std::to_string(g.stride[i]) + ", padding " +
                std::to_string(g.pad_b[i]) + "+" + std::to_string(g.pad_e[i]) + ")");
        // a window lying wholly in the leading padding covers no input element
        if (g.pad_b[i] >= g.k[i])
            bad("padding " + std::to_string(g.pad_b[i]) + " of spatial dim " + std::to_string(i) +
                " must be smaller than the kernel size " + std::to_string(g.k[i]));
        // every window must start inside the input or its padding: out-1 <= (in + pads - k + s - 1) / s
        const int64_t span = g.in[i] + g.pad_b[i] + g.pad_e[i] - g.k[i];
        if (span < 0 || g.out[i] > (span + g.stride[i] - 1) / g.stride[i] + 1)
            bad("output size " + std::to_string(g.out[i]) + " of spatial dim " + std::to_string(i) +
                " does not fit input " + std::to_string(g.in[i]) + ", kernel " + std::to_string(g.k[i]) +
                ", stride " + std::to_string(g.stride[i]) + ", padding " + std::to_string(g.pad_b[i]) + "+" +
                std::to_string(g.pad_e[i]));
    }
    double window = 1;
    for (int i = 0; i < g.nd; ++i) window *= double(g.k[i]);
    if (window > double(kLim)) bad("the pooling window is too large (over 2^31 elements)");
    if (g.in_plane() > int64_t(std::numeric_limits<int32_t>::max()))
        bad("the spatial plane is too large for int32 indices");
}

void max_pool_forward(const PoolGeom &pg, const Operand &x, const Operand &y, int32_t *idx) {
    const G3 g = as3(pg);
    if (g.N * g.C * g.outP == 0) return;
    if (x.dtype == DType::bf16)
        max_fwd(g, static_cast<const uint16_t *>(x.data), static_cast<uint16_t *>(y.data), idx);
    else
        max_fwd(g, static_cast<const float *>(x.data), static_cast<float *>(y.data), idx);
}

void avg_pool_forward(const PoolGeom &pg, const Operand &x, const Operand &y, bool exclusive,
                      double divisor_override) {
    const G3 g = as3(pg);
    if (g.N * g.C * g.outP == 0) return;
    if (x.dtype == DType::bf16)
        avg_fwd(g, static_cast<const uint16_t *>(x.data), static_cast<uint16_t *>(y.data), exclusive,
                divisor_override);
    else
        avg_fwd(g, static_cast<const float *>(x.data), static_cast<float *>(y.data), exclusive, divisor_override);
}

void max_pool_backward(const PoolGeom &pg, const float *gy, const int32_t *idx, float *gx) {
    const G3 g = as3(pg);
    const int64_t total = g.N * g.C * g.outP;
    int64_t bad = -1;
    for (int64_t i = 0; i < total; ++i)
        if (idx[i] < 0 || idx[i] >= g.inP) {
            bad = i;
            break;
        }
    if (bad >= 0)
        throw std::invalid_argument("max_pool backward: mask value " + std::to_string(idx[bad]) +
                                    " is outside the input plane of " + std::to_string(g.inP) + " positions");
    const int nt = threads(double(g.N * g.C) * double(g.inP + g.outP));
    if (!g.cl) {
#pragma omp parallel for num_threads(nt) schedule(static)
        for (int64_t p = 0; p < g.N * g.C; ++p) {
            float *gp = gx + p * g.inP;
            std::memset(gp, 0, sizeof(float) * size_t(g.inP));
            const float *yp = gy + p * g.outP;
            const int32_t *ip = idx + p * g.outP;
            for (int64_t o = 0; o < g.outP; ++o) gp[ip[o]] += yp[o];
        }
        return;
    }
    const int64_t C = g.C;
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t n = 0; n < g.N; ++n) {
        float *gp = gx + n * g.inP * C;
        std::memset(gp, 0, sizeof(float) * size_t(g.inP * C));
        for (int64_t o = 0; o < g.outP; ++o) {
            const float *yr = gy + (n * g.outP + o) * C;
            const int32_t *ir = idx + (n * g.outP + o) * C;
            for (int64_t c = 0; c < C; ++c) gp[int64_t(ir[c]) * C + c] += yr[c];
        }
    }
}

void avg_pool_backward(const PoolGeom &pg, const float *gy, float *gx, bool exclusive, double divisor_override) {
    const G3 g = as3(pg);
    const auto div = divisors(g, exclusive, divisor_override);
    const int nt = threads(double(g.N * g.C) * double(g.outP) * double(g.kk));
    if (!g.cl) {
#pragma omp parallel for num_threads(nt) schedule(static)
        for (int64_t p = 0; p < g.N * g.C; ++p) {
            float *gp = gx + p * g.inP;
            std::memset(gp, 0, sizeof(float) * size_t(g.inP));
            const float *yp = gy + p * g.outP;
            for (int64_t o = 0; o < g.outP; ++o) {
                const float v = yp[o] / div[size_t(o)];
                for_taps(g, o, [&](int64_t i) { gp[i] += v; });
            }
        }
        return;
    }
    const int64_t C = g.C;
#pragma omp parallel num_threads(nt)
    {
        std::vector<float> v(static_cast<size_t>(C));
#pragma omp for schedule(static)
        for (int64_t n = 0; n < g.N; ++n) {
            float *gp = gx + n * g.inP * C;
            std::memset(gp, 0, sizeof(float) * size_t(g.inP * C));
            for (int64_t o = 0; o < g.outP; ++o) {
                const float *yr = gy + (n * g.outP + o) * C;
                for (int64_t c = 0; c < C; ++c) v[size_t(c)] = yr[c] / div[size_t(o)];
                for_taps(g, o, [&](int64_t i) {
                    float *gr = gp + i * C;
                    for (int64_t c = 0; c < C; ++c) gr[c] += v[size_t(c)];
                });
            }
        }
    }
}

}  // namespace nn
}  // namespace fw
