// AVX2 building blocks of the fused kernel family (optimizer updates, the
// elementwise interpreter): 8-lane float32 loads/stores of every storage dtype
// (float32, float16, bfloat16 bits, bool bytes), rounding to float16/bfloat16,
// NaN-propagating min/max, and vectorised float32 exp/expm1/log/tanh/erf.
//
// Everything here is compiled for AVX2+FMA+F16C (the pragma below) and must
// only run after fused_cpu_supported() said yes; the callers check. Only
// compiler builtins and intrinsics are used between push/pop so that no
// standard-library inline function is instantiated with the wider target (a
// linker could otherwise pick that copy for baseline code).
//
// Accuracy of the math functions against correctly rounded float32 (measured
// on 3M points over [-100, 100]): exp < 1 ulp, log < 2 ulp, tanh < 2.5 ulp, erf
// < 3 ulp (NumPy's own float32 exp is up to 2.4 ulp off, so neither matches the
// other bit for bit). NaN, +-Inf, +-0 and denormals follow C99 (exp(-inf) = 0,
// log(0) = -inf, log(x < 0) = NaN, tanh(+-inf) = +-1, erf(+-inf) = +-1).
#pragma once

#include <immintrin.h>

#include <cstdint>

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")

namespace fw::simd {

using vf = __m256;   // 8 float32 lanes
using vi = __m256i;  // 8 int32 lanes

// Storage tags: bfloat16 and float16 travel as uint16 bit patterns.
struct bf16_t {
    uint16_t bits;
};
struct f16_t {
    uint16_t bits;
};
using bool_t = uint8_t;

constexpr int W = 8;  // lanes

static inline vf vset(float x) { return _mm256_set1_ps(x); }
static inline vf vzero() { return _mm256_setzero_ps(); }
static inline vf vabs(vf x) { return _mm256_and_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff))); }
static inline vf vneg(vf x) { return _mm256_xor_ps(x, vset(-0.0f)); }
static inline vf vsqrt(vf x) { return _mm256_sqrt_ps(x); }
// m ? a : b (m a comparison mask)
static inline vf vsel(vf m, vf a, vf b) { return _mm256_blendv_ps(b, a, m); }
static inline vf visnan(vf x) { return _mm256_cmp_ps(x, x, _CMP_UNORD_Q); }
static inline vf vlt(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
static inline vf vle(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_LE_OQ); }
static inline vf vgt(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
static inline vf vge(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_GE_OQ); }
static inline vf veq(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
static inline vf vne(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_NEQ_UQ); }  // NaN != anything
// A mask as a bool value (1.0 / 0.0).
static inline vf vmask01(vf m) { return _mm256_and_ps(m, vset(1.0f)); }
static inline vf vcopysign(vf mag, vf sgn) {
    const vf s = vset(-0.0f);
    return _mm256_or_ps(_mm256_andnot_ps(s, mag), _mm256_and_ps(s, sgn));
}
// numpy.maximum / numpy.minimum: a NaN in either operand gives NaN.
static inline vf vmax_nan(vf a, vf b) { return vsel(visnan(a), a, _mm256_max_ps(a, b)); }
static inline vf vmin_nan(vf a, vf b) { return vsel(visnan(a), a, _mm256_min_ps(a, b)); }
// Non-NaN-preserving helpers for clamping (NaN lanes are fixed by the caller).
static inline vf vmax(vf a, vf b) { return _mm256_max_ps(a, b); }
static inline vf vmin(vf a, vf b) { return _mm256_min_ps(a, b); }
static inline vf vfma(vf a, vf b, vf c) { return _mm256_fmadd_ps(a, b, c); }  // a*b + c
static inline bool vany(vf m) { return _mm256_movemask_ps(m) != 0; }

// ---------------------------------------------------------------- rounding to 16-bit floats
static inline vf vround_f16(vf x) { return _mm256_cvtph_ps(_mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT)); }

// bfloat16 bits (in the high half of each int32 lane) of float32 `x`: round to
// nearest even; NaN stays a quiet NaN with its sign.
static inline vi bf16_hi_bits(vf x) {
    const vi u = _mm256_castps_si256(x);
    const vi lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    const vi r = _mm256_add_epi32(u, _mm256_add_epi32(_mm256_set1_epi32(0x7fff), lsb));
    const vi nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff)),
                                      _mm256_set1_epi32(0x7f800000));
    const vi q = _mm256_or_si256(u, _mm256_set1_epi32(0x00400000));
    return _mm256_and_si256(_mm256_blendv_epi8(r, q, nan), _mm256_set1_epi32(int(0xffff0000u)));
}
static inline vf vround_bf16(vf x) { return _mm256_castsi256_ps(bf16_hi_bits(x)); }

// ---------------------------------------------------------------- loads and stores (8 lanes)
static inline vf load8(const float *p) { return _mm256_loadu_ps(p); }
static inline vf load8(const f16_t *p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p))); }
static inline vf load8(const bf16_t *p) {
    const vi w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
}
static inline vf load8(const bool_t *p) {
    const vi w = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i *>(p)));
    return _mm256_cvtepi32_ps(_mm256_min_epu32(w, _mm256_set1_epi32(1)));
}

static inline void store8(float *p, vf v) { _mm256_storeu_ps(p, v); }
static inline void store8(f16_t *p, vf v) {
    _mm_storeu_si128(reinterpret_cast<__m128i *>(p), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}
static inline void store8(bf16_t *p, vf v) {
    const vi h = _mm256_srli_epi32(bf16_hi_bits(v), 16);
    const __m128i packed = _mm_packus_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i *>(p), packed);
}
// bool: any non-zero (NaN included) is true
static inline void store8(bool_t *p, vf v) {
    const vi i = _mm256_cvttps_epi32(vmask01(vne(v, vzero())));
    const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(i), _mm256_extracti128_si256(i, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i *>(p), _mm_packus_epi16(w, w));
}

// k < 8 lanes: through a zero-padded stack copy.
template <class T>
static inline vf loadn(const T *p, int k) {
    if (k == W) return load8(p);
    T tmp[W] = {};
    __builtin_memcpy(tmp, p, sizeof(T) * unsigned(k));
    return load8(tmp);
}
template <class T>
static inline void storen(T *p, vf v, int k) {
    if (k == W) {
        store8(p, v);
        return;
    }
    T tmp[W];
    store8(tmp, v);
    __builtin_memcpy(p, tmp, sizeof(T) * unsigned(k));
}

// Lanes [k, 8) cleared (for reductions over a partial vector).
static inline vf vkeep(vf v, int k) {
    if (k == W) return v;
    const vi idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_and_ps(v, _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(k), idx)));
}

// Calls f(i, k) for i = b, b+8, ... with k = 8 lanes, then once for the tail.
template <class F>
static inline void for_lanes(int64_t b, int64_t e, F &&f) {
    int64_t i = b;
    for (; i + W <= e; i += W) f(i, W);
    if (i < e) f(i, int(e - i));
}

// ---------------------------------------------------------------- math
// 2^n for integer-valued float n in [-126, 127]
static inline vf vpow2i(vf n) {
    const vi e = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
    return _mm256_castsi256_ps(_mm256_slli_epi32(e, 23));
}

constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693359375f;        // few mantissa bits: n * kLn2Hi is exact
constexpr float kLn2Lo = -2.12194440e-4f;     // ln 2 - kLn2Hi

// x = n ln2 + r, |r| <= ln2 / 2
static inline void vreduce(vf x, vf &n, vf &r) {
    n = _mm256_round_ps(_mm256_mul_ps(x, vset(kLog2e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    r = _mm256_fnmadd_ps(n, vset(kLn2Hi), x);
    r = _mm256_fnmadd_ps(n, vset(kLn2Lo), r);
}

// e^r - 1 - r for |r| <= ln2/2 (Taylor series to r^8: truncation < 1e-9 relative)
static inline vf vexpm1_tail(vf r) {
    vf p = vset(1.0f / 40320.0f);
    p = vfma(p, r, vset(1.0f / 5040.0f));
    p = vfma(p, r, vset(1.0f / 720.0f));
    p = vfma(p, r, vset(1.0f / 120.0f));
    p = vfma(p, r, vset(1.0f / 24.0f));
    p = vfma(p, r, vset(1.0f / 6.0f));
    p = vfma(p, r, vset(0.5f));
    return _mm256_mul_ps(_mm256_mul_ps(r, r), p);
}

static inline vf vexp(vf x) {
    // clamp so that n stays in [-150, 128]; e^89 overflows and e^-104 underflows anyway
    const vf xc = vmin(vmax(x, vset(-104.0f)), vset(89.0f));
    vf n, r;
    vreduce(xc, n, r);
    // e^r by Horner's rule in FMAs (Taylor to r^7: truncation < 1e-8 relative)
    vf p = vset(1.0f / 5040.0f);
    p = vfma(p, r, vset(1.0f / 720.0f));
    p = vfma(p, r, vset(1.0f / 120.0f));
    p = vfma(p, r, vset(1.0f / 24.0f));
    p = vfma(p, r, vset(1.0f / 6.0f));
    p = vfma(p, r, vset(0.5f));
    p = vfma(p, r, vset(1.0f));
    p = vfma(p, r, vset(1.0f));
    // 2^n as two factors so that n below -126 (denormal results) and up to 128 work
    const vf n1 = _mm256_floor_ps(_mm256_mul_ps(n, vset(0.5f)));
    const vf n2 = _mm256_sub_ps(n, n1);
    const vf y = _mm256_mul_ps(_mm256_mul_ps(p, vpow2i(n1)), vpow2i(n2));
    return vsel(visnan(x), x, y);
}

// e^x - 1, accurate near 0 (used by tanh for |x| <= 20)
static inline vf vexpm1_small(vf x) {
    vf n, r;
    vreduce(x, n, r);
    const vf em1 = _mm256_add_ps(vexpm1_tail(r), r);  // e^r - 1
    const vf s = vpow2i(n);
    // 2^n (e^r - 1) + (2^n - 1): the second term is exact for |n| <= 24
    return vfma(s, em1, _mm256_sub_ps(s, vset(1.0f)));
}

static inline vf vlog(vf x) {
    // denormals: scale into the normal range first
    const vf tiny = vlt(x, vset(1.17549435e-38f));
    const vf xs = vsel(tiny, _mm256_mul_ps(x, vset(8388608.0f)), x);  // * 2^23
    const vi u = _mm256_castps_si256(xs);
    vi e = _mm256_sub_epi32(_mm256_srli_epi32(u, 23), _mm256_set1_epi32(127));
    vf m = _mm256_castsi256_ps(
        _mm256_or_si256(_mm256_and_si256(u, _mm256_set1_epi32(0x007fffff)), _mm256_set1_epi32(0x3f800000)));
    // m in [sqrt(1/2), sqrt(2))
    const vf big = vgt(m, vset(1.41421356f));
    m = vsel(big, _mm256_mul_ps(m, vset(0.5f)), m);
    e = _mm256_sub_epi32(e, _mm256_castps_si256(big));  // big lanes are -1: e + 1
    vf ef = _mm256_cvtepi32_ps(e);
    ef = _mm256_sub_ps(ef, _mm256_and_ps(tiny, vset(23.0f)));
    // log(1 + f) = 2 atanh(s), s = f / (2 + f), |s| <= 0.1716
    const vf f = _mm256_sub_ps(m, vset(1.0f));
    const vf s = _mm256_div_ps(f, _mm256_add_ps(f, vset(2.0f)));
    const vf z = _mm256_mul_ps(s, s);
    vf p = vset(1.0f / 9.0f);
    p = vfma(p, z, vset(1.0f / 7.0f));
    p = vfma(p, z, vset(1.0f / 5.0f));
    p = vfma(p, z, vset(1.0f / 3.0f));
    p = _mm256_mul_ps(p, z);
    const vf s2 = _mm256_add_ps(s, s);
    const vf l1p = vfma(s2, p, s2);
    constexpr float ln2_hi = 0.693145751953125f;  // 15 significant bits: ef * ln2_hi is exact
    constexpr float ln2_lo = 1.428606765330187e-06f;
    vf y = vfma(ef, vset(ln2_hi), vfma(ef, vset(ln2_lo), l1p));
    const vf inf = vset(__builtin_inff());
    y = vsel(veq(x, inf), inf, y);
    y = vsel(veq(x, vzero()), vneg(inf), y);
    y = vsel(vlt(x, vzero()), vset(__builtin_nanf("")), y);
    return vsel(visnan(x), x, y);
}

static inline vf vtanh(vf x) {
    // t = e^(2|x|) - 1, tanh|x| = t / (t + 2); |x| >= 10 rounds to 1
    const vf ax = vmin(vabs(x), vset(10.0f));
    const vf t = vexpm1_small(_mm256_add_ps(ax, ax));
    const vf y = _mm256_div_ps(t, _mm256_add_ps(t, vset(2.0f)));
    return vsel(visnan(x), x, vcopysign(y, x));
}

// erf: |x| < 1: x P(x^2); 1 <= |x| < 4: 1 - e^(-x^2) Q(1 / (1 + |x|)); beyond: +-1.
// P and Q are least-squares fits made for this file (relative error 4e-9 and 6e-10
// in float64; about 3 ulp once evaluated in float32).
static inline vf verf(vf x) {
    const vf ax = vmin(vabs(x), vset(4.0f));
    const vf u = _mm256_mul_ps(ax, ax);
    vf p = vset(7.9575744e-05f);
    p = vfma(p, u, vset(-8.0396963e-04f));
    p = vfma(p, u, vset(5.1914607e-03f));
    p = vfma(p, u, vset(-2.6855338e-02f));
    p = vfma(p, u, vset(1.1283618e-01f));
    p = vfma(p, u, vset(-3.7612629e-01f));
    p = vfma(p, u, vset(1.1283791e+00f));
    const vf small = _mm256_mul_ps(ax, p);
    const vf far = vge(ax, vset(1.0f));
    vf y = small;
    if (vany(far)) {
        const vf t = _mm256_div_ps(vset(1.0f), _mm256_add_ps(ax, vset(1.0f)));
        vf q = vset(1.0396636e+00f);
        q = vfma(q, t, vset(-3.5118461e+00f));
        q = vfma(q, t, vset(4.8156328e+00f));
        q = vfma(q, t, vset(-3.0078571e+00f));
        q = vfma(q, t, vset(3.7146112e-01f));
        q = vfma(q, t, vset(1.6269751e-01f));
        q = vfma(q, t, vset(5.7797825e-01f));
        q = vfma(q, t, vset(5.6326956e-01f));
        q = vfma(q, t, vset(2.7096870e-05f));
        const vf big = _mm256_fnmadd_ps(vexp(vneg(u)), q, vset(1.0f));
        y = vsel(far, big, small);
    }
    return vsel(visnan(x), x, vcopysign(y, x));
}

static inline vf vsigmoid(vf x) {
    return _mm256_div_ps(vset(1.0f), _mm256_add_ps(vset(1.0f), vexp(vneg(x))));
}

}  // namespace fw::simd

#pragma GCC pop_options
