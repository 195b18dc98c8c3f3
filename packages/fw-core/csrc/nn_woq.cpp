// Weight-only quantized linear (see nn_woq.hpp).
#include "nn_woq.hpp"

#include <immintrin.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "fused_common.hpp"
#include "matmul.hpp"

namespace fw {
namespace nn {
namespace {

// ---------------------------------------------------------------- AVX2 GEMV
// Only intrinsics between push/pop (no standard-library inline code is instantiated
// for the wider target; see fused_simd.hpp).
#pragma GCC push_options
#pragma GCC target("avx2,fma")

inline float hsum8(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
}

inline __m256 load8_s8(const int8_t *p) {
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i *>(p))));
}

// Rows [n0, n1) of y for MM rows of x (MM = M, 1..8). int8: x is [M, K]. int4: xe / xo
// are the even / odd columns of x ([M, K/2] each), matched to the low / high nibbles.
template <int MM, bool INT4>
void gemv_avx2(const WoqArgs &a, const float *xe, const float *xo, int64_t n0, int64_t n1) {
    const int64_t K = a.K, N = a.N;
    const int64_t g = a.group_size == -1 ? K : a.group_size;
    const int64_t kp = INT4 ? K / 2 : K;     // bytes per weight row
    const int64_t gb = INT4 ? g / 2 : g;     // bytes per group
    const int64_t xs = INT4 ? K / 2 : K;     // row stride of xe / xo
    for (int64_t n = n0; n < n1; ++n) {
        const int8_t *row = a.w + n * kp;
        __m256 tot[MM];
        for (int m = 0; m < MM; ++m) tot[m] = _mm256_setzero_ps();
        for (int64_t b0 = 0, grp = 0; b0 < kp; b0 += gb, ++grp) {
            __m256 acc0[MM], acc1[MM];
            for (int m = 0; m < MM; ++m) acc0[m] = acc1[m] = _mm256_setzero_ps();
            const int64_t b1 = b0 + gb;
            int64_t b = b0;
            if (INT4) {
                for (; b + 8 <= b1; b += 8) {
                    const __m256i v = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i *>(row + b)));
                    const __m256 lo = _mm256_cvtepi32_ps(_mm256_srai_epi32(_mm256_slli_epi32(v, 28), 28));
                    const __m256 hi = _mm256_cvtepi32_ps(_mm256_srai_epi32(_mm256_slli_epi32(v, 24), 28));
                    for (int m = 0; m < MM; ++m) {
                        acc0[m] = _mm256_fmadd_ps(lo, _mm256_loadu_ps(xe + m * xs + b), acc0[m]);
                        acc1[m] = _mm256_fmadd_ps(hi, _mm256_loadu_ps(xo + m * xs + b), acc1[m]);
                    }
                }
            } else {
                for (; b + 16 <= b1; b += 16) {
                    const __m256 w0 = load8_s8(row + b), w1 = load8_s8(row + b + 8);
                    for (int m = 0; m < MM; ++m) {
                        acc0[m] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(xe + m * xs + b), acc0[m]);
                        acc1[m] = _mm256_fmadd_ps(w1, _mm256_loadu_ps(xe + m * xs + b + 8), acc1[m]);
                    }
                }
                for (; b + 8 <= b1; b += 8) {
                    const __m256 w0 = load8_s8(row + b);
                    for (int m = 0; m < MM; ++m)
                        acc0[m] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(xe + m * xs + b), acc0[m]);
                }
            }
            // Scalar tail of the group (a group size that is no multiple of 8 / 16).
            float tail[MM];
            for (int m = 0; m < MM; ++m) tail[m] = 0.f;
            for (; b < b1; ++b) {
                const int c = row[b];
                if (INT4) {
                    const float lo = float(int8_t(uint8_t(c) << 4) >> 4), hi = float(int8_t(c) >> 4);
                    for (int m = 0; m < MM; ++m) tail[m] += lo * xe[m * xs + b] + hi * xo[m * xs + b];
                } else {
                    for (int m = 0; m < MM; ++m) tail[m] += float(c) * xe[m * xs + b];
                }
            }
            const float s = a.scale[grp * N + n];
            const __m256 sv = _mm256_set1_ps(s);
            for (int m = 0; m < MM; ++m) {
                __m256 acc = _mm256_add_ps(acc0[m], acc1[m]);
                acc = _mm256_add_ps(acc, _mm256_set_ps(0, 0, 0, 0, 0, 0, 0, tail[m]));
                tot[m] = _mm256_fmadd_ps(acc, sv, tot[m]);
            }
        }
        const float bias = a.bias ? a.bias[n] : 0.f;
        for (int m = 0; m < MM; ++m) a.y[m * N + n] = hsum8(tot[m]) + bias;
    }
}

#pragma GCC pop_options

// ---------------------------------------------------------------- portable paths
inline float code_at(const int8_t *row, int64_t k, bool int4) {
    if (!int4) return float(row[k]);
    const int8_t b = row[k >> 1];
    return float((k & 1) ? int8_t(b) >> 4 : int8_t(uint8_t(b) << 4) >> 4);
}

void gemv_scalar(const WoqArgs &a, int64_t n0, int64_t n1) {
    const int64_t g = a.group_size == -1 ? a.K : a.group_size;
    const int64_t kp = a.int4 ? a.K / 2 : a.K;
    for (int64_t n = n0; n < n1; ++n) {
        const int8_t *row = a.w + n * kp;
        for (int64_t m = 0; m < a.M; ++m) {
            const float *xr = a.x + m * a.K;
            float tot = 0.f;
            for (int64_t k0 = 0; k0 < a.K; k0 += g) {
                float acc = 0.f;
                for (int64_t k = k0; k < k0 + g; ++k) acc += xr[k] * code_at(row, k, a.int4);
                tot += acc * a.scale[(k0 / g) * a.N + n];
            }
            a.y[m * a.N + n] = tot + (a.bias ? a.bias[n] : 0.f);
        }
    }
}

// Rows [n0, n1) of the float32 [N, K] weight.
void dequant_rows(const WoqArgs &a, float *wf, int64_t n0, int64_t n1) {
    const int64_t g = a.group_size == -1 ? a.K : a.group_size;
    const int64_t kp = a.int4 ? a.K / 2 : a.K;
    for (int64_t n = n0; n < n1; ++n) {
        const int8_t *row = a.w + n * kp;
        float *out = wf + n * a.K;
        for (int64_t k0 = 0, grp = 0; k0 < a.K; k0 += g, ++grp) {
            const float s = a.scale[grp * a.N + n];
            if (a.int4) {
                for (int64_t k = k0; k < k0 + g; ++k) out[k] = code_at(row, k, true) * s;
            } else {
                for (int64_t k = k0; k < k0 + g; ++k) out[k] = float(row[k]) * s;
            }
        }
    }
}

// Weight rows per thread: at least 1 MiB of codes each. One thread streams that in about
// 0.1 ms; an OpenMP team on a shared machine whose other core is busy can wait a whole
// scheduler slice (4-16 ms measured on the loaded 2-core reference machine) for its
// second thread, so only layers far above the decode sizes of small models split.
int64_t rows_per_thread(int64_t row_bytes) {
    return std::max<int64_t>(1, (int64_t(1) << 20) / std::max<int64_t>(1, row_bytes));
}

template <bool INT4>
void gemv_dispatch(const WoqArgs &a, const float *xe, const float *xo, int64_t n0, int64_t n1) {
    switch (a.M) {
        case 1: return gemv_avx2<1, INT4>(a, xe, xo, n0, n1);
        case 2: return gemv_avx2<2, INT4>(a, xe, xo, n0, n1);
        case 3: return gemv_avx2<3, INT4>(a, xe, xo, n0, n1);
        case 4: return gemv_avx2<4, INT4>(a, xe, xo, n0, n1);
        case 5: return gemv_avx2<5, INT4>(a, xe, xo, n0, n1);
        case 6: return gemv_avx2<6, INT4>(a, xe, xo, n0, n1);
        case 7: return gemv_avx2<7, INT4>(a, xe, xo, n0, n1);
        default: return gemv_avx2<8, INT4>(a, xe, xo, n0, n1);
    }
}

void run_gemv(const WoqArgs &a) {
    const int64_t kp = a.int4 ? a.K / 2 : a.K;
    const int64_t per = rows_per_thread(kp);
    if (!woq_simd()) {
        fw::fused::parallel_ranges(a.N, per, 16, [&](int64_t n0, int64_t n1, int) { gemv_scalar(a, n0, n1); });
        return;
    }
    if (!a.int4) {
        fw::fused::parallel_ranges(a.N, per, 16,
                                   [&](int64_t n0, int64_t n1, int) { gemv_dispatch<false>(a, a.x, nullptr, n0, n1); });
        return;
    }
    // int4: split x into its even and odd columns once (M * K floats, read by every row).
    const int64_t h = a.K / 2;
    std::vector<float> eo(size_t(2 * a.M * h));
    float *xe = eo.data(), *xo = eo.data() + a.M * h;
    for (int64_t m = 0; m < a.M; ++m)
        for (int64_t i = 0; i < h; ++i) {
            xe[m * h + i] = a.x[m * a.K + 2 * i];
            xo[m * h + i] = a.x[m * a.K + 2 * i + 1];
        }
    fw::fused::parallel_ranges(a.N, per, 16, [&](int64_t n0, int64_t n1, int) { gemv_dispatch<true>(a, xe, xo, n0, n1); });
}

void run_dequant_matmul(const WoqArgs &a) {
    std::vector<float> wf(size_t(a.N * a.K));
    const int64_t kp = a.int4 ? a.K / 2 : a.K;
    fw::fused::parallel_ranges(a.N, rows_per_thread(kp), 16,
                               [&](int64_t n0, int64_t n1, int) { dequant_rows(a, wf.data(), n0, n1); });
    const int64_t xs[2] = {a.M, a.K}, ws[2] = {a.N, a.K}, ys[2] = {a.M, a.N}, bs[1] = {a.N};
    Operand x{const_cast<float *>(a.x), 2, xs, nullptr, DType::f32};
    Operand w{wf.data(), 2, ws, nullptr, DType::f32};
    Operand y{a.y, 2, ys, nullptr, DType::f32};
    Epilogue ep;
    if (a.bias) ep.bias = Operand{const_cast<float *>(a.bias), 1, bs, nullptr, DType::f32};
    const MatmulPlan plan = plan_matmul(x, w, false, true);
    run_matmul(plan, x, w, y, ep);
}

}  // namespace

bool woq_simd() { return fw::fused::cpu_supported(); }

void check_woq(const WoqArgs &a) {
    const std::string op = "weight_only_linear: ";
    if (a.M < 0 || a.K < 1 || a.N < 1)
        throw std::invalid_argument(op + "needs M >= 0, K >= 1 and N >= 1, got M=" + std::to_string(a.M) +
                                    ", K=" + std::to_string(a.K) + ", N=" + std::to_string(a.N));
    if (a.int4 && a.K % 2)
        throw std::invalid_argument(op + "an int4 weight packs two rows of k per byte: K=" + std::to_string(a.K) +
                                    " must be even");
    if (a.group_size != -1 && (a.group_size < 1 || a.K % a.group_size))
        throw std::invalid_argument(op + "group_size=" + std::to_string(a.group_size) +
                                    " must be -1 or a positive divisor of K=" + std::to_string(a.K));
    if (a.int4 && a.group_size != -1 && a.group_size % 2)
        throw std::invalid_argument(op + "an int4 group must cover whole bytes: group_size=" +
                                    std::to_string(a.group_size) + " must be even");
}

void woq_linear(const WoqArgs &a) {
    check_woq(a);
    if (!a.x || !a.w || !a.scale || !a.y)
        throw std::invalid_argument("weight_only_linear: missing x, weight, scale or out");
    if (a.M == 0) return;
    if (a.M > kWoqTiledMaxM) {
        run_dequant_matmul(a);
        return;
    }
    // Blocks of up to kWoqGemvMaxM rows, each streaming the weights once (from cache
    // after the first block when they fit).
    for (int64_t m0 = 0; m0 < a.M; m0 += kWoqGemvMaxM) {
        WoqArgs b = a;
        b.M = std::min(kWoqGemvMaxM, a.M - m0);
        b.x = a.x + m0 * a.K;
        b.y = a.y + m0 * a.N;
        run_gemv(b);
    }
}

}  // namespace nn
}  // namespace fw
