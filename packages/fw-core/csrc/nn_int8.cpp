#include "nn_int8.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <type_traits>

#include "runtime.hpp"

namespace fw {
namespace nn {
namespace {

using dnnl::algorithm;
using dnnl::prop_kind;
using dt = memory::data_type;

dt qdt(QType t) {
    switch (t) {
        case QType::u8: return dt::u8;
        case QType::s8: return dt::s8;
        default: return dt::f32;
    }
}

bool quantized(QType t) { return t == QType::u8 || t == QType::s8; }

// What of QuantArgs changes the primitive (the values are runtime arguments).
int64_t epilogue_bits(const QuantArgs &q, QType x, QType y) {
    return int64_t(x) | int64_t(y) << 4 | int64_t(q.x_zp != nullptr) << 8 | int64_t(q.y_zp != nullptr) << 9 |
           int64_t(q.n_w_scale > 1) << 10 | int64_t(q.bias != nullptr) << 11 |
           int64_t(q.residual != nullptr) << 12 | int64_t(q.residual_before_act) << 13 | int64_t(q.clip) << 14 |
           int64_t(q.act) << 16;
}

void push_clip(FlatKey &k, const QuantArgs &q) {
    if (!q.clip) return;
    uint32_t lo, hi;
    std::memcpy(&lo, &q.clip_lo, 4);
    std::memcpy(&hi, &q.clip_hi, 4);
    k.push(int64_t(lo) << 32 | int64_t(hi));
}

// Scales and zero points as oneDNN attributes. `w_mask` is the weights' per-channel
// mask (0 when per tensor).
dnnl::primitive_attr quant_attr(const QuantArgs &q, QType y, int w_mask) {
    dnnl::primitive_attr attr = user_attr();
    attr.set_scales_mask(DNNL_ARG_SRC, 0);
    attr.set_scales_mask(DNNL_ARG_WEIGHTS, q.n_w_scale > 1 ? w_mask : 0);
    if (quantized(y)) attr.set_scales_mask(DNNL_ARG_DST, 0);
    if (q.x_zp) attr.set_zero_points_mask(DNNL_ARG_SRC, 0);
    if (q.y_zp && quantized(y)) attr.set_zero_points_mask(DNNL_ARG_DST, 0);
    return attr;
}

// Post-ops in the op's order; returns the residual's execution argument (0: none).
int append_epilogue(dnnl::post_ops &po, const QuantArgs &q, const memory::desc &res_md) {
    int res_arg = 0;
    auto residual = [&] {
        res_arg = DNNL_ARG_ATTR_MULTIPLE_POST_OP(po.len()) | DNNL_ARG_SRC_1;
        po.append_binary(algorithm::binary_add, res_md);
    };
    if (q.residual && q.residual_before_act) residual();
    append_activation(po, q.act);
    if (q.residual && !q.residual_before_act) residual();
    if (q.clip) po.append_eltwise(algorithm::eltwise_clip, q.clip_lo, q.clip_hi);
    return res_arg;
}

// The runtime scale / zero-point arguments, in execute() order after the tensors.
void quant_specs(std::vector<ArgSpec> &specs, const QuantArgs &q, QType y) {
    specs.push_back({DNNL_ARG_ATTR_SCALES | DNNL_ARG_SRC, plain_md({1}, dt::f32), kIn, true});
    specs.push_back({DNNL_ARG_ATTR_SCALES | DNNL_ARG_WEIGHTS, plain_md({q.n_w_scale}, dt::f32), kIn, true});
    if (quantized(y)) specs.push_back({DNNL_ARG_ATTR_SCALES | DNNL_ARG_DST, plain_md({1}, dt::f32), kIn, true});
    if (q.x_zp) specs.push_back({DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, plain_md({1}, dt::s32), kIn, true});
    if (q.y_zp && quantized(y))
        specs.push_back({DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST, plain_md({1}, dt::s32), kIn, true});
}

void quant_ptrs(std::vector<void *> &ptrs, const QuantArgs &q, QType y) {
    ptrs.push_back(const_cast<float *>(q.x_scale));
    ptrs.push_back(const_cast<float *>(q.w_scale));
    if (quantized(y)) ptrs.push_back(const_cast<float *>(q.y_scale));
    if (q.x_zp) ptrs.push_back(const_cast<int32_t *>(q.x_zp));
    if (q.y_zp && quantized(y)) ptrs.push_back(const_cast<int32_t *>(q.y_zp));
}

void check_quant(const QuantArgs &q, QType x, QType y, int64_t channels, const char *op) {
    auto bad = [&](const std::string &why) { throw std::invalid_argument(std::string(op) + ": " + why); };
    if (!quantized(x)) bad("x must be uint8 or int8");
    if (!q.x_scale || !q.w_scale) bad("x_scale and w_scale are required");
    if (q.n_w_scale != 1 && q.n_w_scale != channels)
        bad("w_scale must have 1 or " + std::to_string(channels) + " values, got " + std::to_string(q.n_w_scale));
    if (quantized(y) && !q.y_scale) bad("a quantized output needs y_scale");
}

// ---------------------------------------------------------------- convolution

memory::dims dims_of(const ConvGeom &g, bool dst) {
    memory::dims d{g.N, dst ? g.O : g.C};
    for (int i = 0; i < g.nd; ++i) d.push_back(dst ? g.out[i] : g.in[i]);
    return d;
}

memory::dims wdims(const ConvGeom &g) {
    memory::dims d;
    if (g.G > 1) d = {g.G, g.O / g.G, g.C / g.G};
    else d = {g.O, g.C};
    for (int i = 0; i < g.nd; ++i) d.push_back(g.k[i]);
    return d;
}

memory::dims sp(const int64_t *v, int nd, int64_t minus = 0) {
    memory::dims d;
    for (int i = 0; i < nd; ++i) d.push_back(v[i] - minus);
    return d;
}

dnnl::convolution_forward::primitive_desc qconv_pd(const ConvGeom &g, const memory::desc &src,
                                                   const memory::desc &wei, const memory::desc &bias,
                                                   const memory::desc &dst, const dnnl::primitive_attr &attr) {
    return dnnl::convolution_forward::primitive_desc(
        cpu_engine(), prop_kind::forward_inference, algorithm::convolution_direct, src, wei, bias, dst,
        sp(g.stride, g.nd), sp(g.dil, g.nd, 1), sp(g.pad_l, g.nd), sp(g.pad_r, g.nd), attr);
}

FlatKey qconv_key(const ConvGeom &g, int nthreads, int64_t bits) {
    FlatKey k;
    k.push(g.nd);
    k.push(g.N);
    k.push(g.C);
    k.push(g.O);
    k.push(g.G);
    for (int i = 0; i < g.nd; ++i) {
        k.push(g.in[i]);
        k.push(g.k[i]);
        k.push(g.stride[i]);
        k.push(g.dil[i]);
        k.push(g.pad_l[i]);
        k.push(g.pad_r[i]);
    }
    k.push(int64_t(g.channel_last));
    k.push(nthreads);
    k.push(bits);
    return k;
}

std::shared_ptr<Prim> qconv_entry(const ConvGeom &g, QType x, QType y, const QuantArgs &q) {
    const int nt = threads_for(g.work());
    FlatKey key = qconv_key(g, nt, epilogue_bits(q, x, y));
    push_clip(key, q);
    return lookup(Kind::int8_conv, key, [&] {
        try {
            // int8 kernels work on channel-last activations; a channel-first caller gets
            // reorders (1 byte per element) at the primitive's edges
            const memory::desc src = g.channel_last ? act_md(dims_of(g, false), qdt(x), true)
                                                    : any_md(dims_of(g, false), qdt(x));
            memory::desc dst = g.channel_last ? act_md(dims_of(g, true), qdt(y), true)
                                              : any_md(dims_of(g, true), qdt(y));
            const memory::desc wei = any_md(wdims(g), dt::s8);
            const memory::desc bias = q.bias ? plain_md({g.O}, dt::f32) : memory::desc();
            const int w_mask = g.G > 1 ? 3 : 1;
            if (q.residual) {
                // the residual must be in the layout the output is written in (else
                // oneDNN's binary post-op falls back to `ref`): fix the output layout
                // first without it, as nn_conv.cpp does
                dnnl::primitive_attr probe = quant_attr(q, y, w_mask);
                dnnl::post_ops act_only;
                append_activation(act_only, q.act);
                probe.set_post_ops(act_only);
                dst = qconv_pd(g, src, wei, bias, dst, probe).dst_desc();
            }
            const memory::desc res_md = q.residual ? memory::desc(dst.get_dims(), dt::f32, dst.get_strides())
                                                   : memory::desc();
            if (q.residual && dst.get_inner_nblks())
                throw std::runtime_error("blocked int8 output layouts with a residual are not supported");
            dnnl::post_ops po;
            const int res_arg = append_epilogue(po, q, res_md);
            dnnl::primitive_attr attr = quant_attr(q, y, w_mask);
            attr.set_post_ops(po);
            auto pd = qconv_pd(g, src, wei, bias, dst, attr);
            std::vector<ArgSpec> specs{{DNNL_ARG_SRC, act_md(dims_of(g, false), qdt(x), g.channel_last), kIn},
                                       {DNNL_ARG_WEIGHTS, plain_md(wdims(g), dt::s8), kIn},
                                       {DNNL_ARG_DST, act_md(dims_of(g, true), qdt(y), g.channel_last), kOut}};
            if (q.bias) specs.push_back({DNNL_ARG_BIAS, plain_md({g.O}, dt::f32), kIn});
            if (q.residual) specs.push_back({res_arg, act_md(dims_of(g, true), dt::f32, g.channel_last), kIn});
            quant_specs(specs, q, y);
            auto p = std::make_shared<Prim>();
            p->init(pd, dnnl::convolution_forward(pd), std::move(specs), "quantized_conv2d");
            return p;
        } catch (const dnnl::error &e) {
            throw std::runtime_error(std::string("quantized_conv2d: oneDNN could not create the primitive for ") +
                                     g.str() + " (x " + qtype_name(x) + ", out " + qtype_name(y) + "): " + e.what());
        }
    });
}

// ---------------------------------------------------------------- matmul

std::shared_ptr<Prim> qmatmul_entry(const QMatmulGeom &g, QType x, QType y, const QuantArgs &q) {
    const int nt = threads_for(double(g.M) * double(g.K) * double(g.N));
    FlatKey key;
    key.push(g.M);
    key.push(g.K);
    key.push(g.N);
    key.push(nt);
    key.push(epilogue_bits(q, x, y));
    push_clip(key, q);
    return lookup(Kind::int8_matmul, key, [&] {
        try {
            const memory::desc src = plain_md({g.M, g.K}, qdt(x));
            const memory::desc dst = plain_md({g.M, g.N}, qdt(y));
            const memory::desc wei = any_md({g.K, g.N}, dt::s8);
            const memory::desc bias = q.bias ? plain_md({1, g.N}, dt::f32) : memory::desc();
            dnnl::post_ops po;
            const int res_arg = append_epilogue(po, q, plain_md({g.M, g.N}, dt::f32));
            dnnl::primitive_attr attr = quant_attr(q, y, 1 << 1);
            attr.set_post_ops(po);
            auto pd = dnnl::matmul::primitive_desc(cpu_engine(), src, wei, bias, dst, attr);
            std::vector<ArgSpec> specs{{DNNL_ARG_SRC, src, kIn},
                                       {DNNL_ARG_WEIGHTS, plain_md({g.K, g.N}, dt::s8), kIn},
                                       {DNNL_ARG_DST, dst, kOut}};
            if (q.bias) specs.push_back({DNNL_ARG_BIAS, bias, kIn});
            if (q.residual) specs.push_back({res_arg, plain_md({g.M, g.N}, dt::f32), kIn});
            quant_specs(specs, q, y);
            auto p = std::make_shared<Prim>();
            p->init(pd, dnnl::matmul(pd), std::move(specs), "quantized_matmul");
            return p;
        } catch (const dnnl::error &e) {
            throw std::runtime_error("quantized_matmul: oneDNN could not create the primitive for " + g.str() +
                                     " (x " + qtype_name(x) + ", out " + qtype_name(y) + "): " + e.what());
        }
    });
}

void run(Prim &p, const void *x, const int8_t *w, void *y, const QuantArgs &q, QType yt, uint64_t stamp) {
    std::vector<void *> ptrs{const_cast<void *>(x), const_cast<int8_t *>(w), y};
    if (q.bias) ptrs.push_back(const_cast<float *>(q.bias));
    if (q.residual) ptrs.push_back(const_cast<float *>(q.residual));
    quant_ptrs(ptrs, q, yt);
    std::vector<uint64_t> stamps(ptrs.size(), 0);
    stamps[1] = stamp;
    p.execute(ptrs.data(), stamps.data());
}

}  // namespace

const char *qtype_name(QType t) {
    switch (t) {
        case QType::u8: return "uint8";
        case QType::s8: return "int8";
        case QType::f32: return "float32";
        default: return "?";
    }
}

std::string QMatmulGeom::str() const {
    return "M=" + std::to_string(M) + " K=" + std::to_string(K) + " N=" + std::to_string(N);
}

void qconv_forward(const ConvGeom &g, QType x_type, const void *x, const int8_t *w, QType y_type, void *y,
                   const QuantArgs &q, uint64_t weight_stamp) {
    check_geometry(g, "quantized_conv2d");
    check_quant(q, x_type, y_type, g.O, "quantized_conv2d");
    auto e = qconv_entry(g, x_type, y_type, q);
    run(*e, x, w, y, q, y_type, weight_stamp);
}

void qmatmul_forward(const QMatmulGeom &g, QType x_type, const void *x, const int8_t *w, QType y_type,
                     void *y, const QuantArgs &q, uint64_t weight_stamp) {
    if (g.M < 1 || g.K < 1 || g.N < 1) throw std::invalid_argument("quantized_matmul: empty problem " + g.str());
    check_quant(q, x_type, y_type, g.N, "quantized_matmul");
    auto e = qmatmul_entry(g, x_type, y_type, q);
    run(*e, x, w, y, q, y_type, weight_stamp);
}

std::string qconv_impl(const ConvGeom &g, QType x_type, QType y_type, const QuantArgs &q) {
    check_geometry(g, "quantized_conv2d");
    auto e = qconv_entry(g, x_type, y_type, q);
    return e->impl() + (e->reorders() ? " (+" + std::to_string(e->reorders()) + " reorders)" : "");
}

std::string qmatmul_impl(const QMatmulGeom &g, QType x_type, QType y_type, const QuantArgs &q) {
    auto e = qmatmul_entry(g, x_type, y_type, q);
    return e->impl() + (e->reorders() ? " (+" + std::to_string(e->reorders()) + " reorders)" : "");
}

std::string QPoolGeom::str() const {
    auto two = [](const int64_t *v) { return "[" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + "]"; };
    return "N=" + std::to_string(N) + " C=" + std::to_string(C) + " input " + two(in) + " output " + two(out) +
           " kernel " + two(k) + " stride " + two(stride) + " padding " + two(pad_l) + "+" + two(pad_r) +
           (channel_last ? " channel-last" : " channel-first");
}

void qmax_pool(const QPoolGeom &g, QType t, const void *x, void *y) {
    const char *op = "quantized_max_pool";
    if (t != QType::u8 && t != QType::s8) throw std::invalid_argument(std::string(op) + ": x must be uint8 or int8");
    if (g.N < 1 || g.C < 1) throw std::invalid_argument(std::string(op) + ": empty input " + g.str());
    for (int i = 0; i < 2; ++i) {
        const int64_t span = g.in[i] + g.pad_l[i] + g.pad_r[i] - g.k[i];
        if (g.k[i] < 1 || g.stride[i] < 1 || g.pad_l[i] < 0 || g.pad_r[i] < 0 || g.in[i] < 1 || span < 0 ||
            span / g.stride[i] + 1 != g.out[i] || g.pad_l[i] >= g.k[i] || g.pad_r[i] >= g.k[i])
            throw std::invalid_argument(std::string(op) + ": inconsistent geometry " + g.str());
    }
    const int nt = threads_for_elems(g.N * g.C * g.out[0] * g.out[1] * g.k[0] * g.k[1]);
    FlatKey key;
    for (int64_t v : {g.N, g.C, g.in[0], g.in[1], g.out[0], g.out[1], g.k[0], g.k[1], g.stride[0], g.stride[1],
                      g.pad_l[0], g.pad_l[1], g.pad_r[0], g.pad_r[1]})
        key.push(v);
    key.push(int64_t(g.channel_last) | int64_t(t) << 1);
    key.push(nt);
    auto e = lookup(Kind::int8_pool, key, [&] {
        try {
            const memory::desc src = act_md({g.N, g.C, g.in[0], g.in[1]}, qdt(t), g.channel_last);
            const memory::desc dst = act_md({g.N, g.C, g.out[0], g.out[1]}, qdt(t), g.channel_last);
            auto pd = dnnl::pooling_forward::primitive_desc(
                cpu_engine(), prop_kind::forward_inference, algorithm::pooling_max, src, dst, {g.stride[0], g.stride[1]},
                {g.k[0], g.k[1]}, {0, 0}, {g.pad_l[0], g.pad_l[1]}, {g.pad_r[0], g.pad_r[1]}, user_attr());
            auto p = std::make_shared<Prim>();
            p->init(pd, dnnl::pooling_forward(pd), {{DNNL_ARG_SRC, src, kIn}, {DNNL_ARG_DST, dst, kOut}}, op);
            return p;
        } catch (const dnnl::error &err) {
            throw std::runtime_error(std::string(op) + ": oneDNN could not create the primitive for " + g.str() +
                                     ": " + err.what());
        }
    });
    void *ptrs[2] = {const_cast<void *>(x), y};
    e->execute(ptrs);
}

namespace {

// ---------------------------------------------------------------- AVX2 loops
// The scalar loops below, 8 values per step, with the same float32 operations in the
// same order (a division, the clamp, the +/- 1.5 * 2^23 rounding, the zero point, the
// clip; the dequantization's subtraction and product): bit-identical results, on every
// CPU with AVX2 (checked at run time). Only intrinsics between push/pop (no
// standard-library code is instantiated for the wider target; see nn_woq.cpp). The
// scalar loops vectorized only to SSE2 (-O3 without -march): LeNet's 75 k-value
// quantize took 60 us on the reference machine.
#pragma GCC push_options
#pragma GCC target("avx2")

template <bool U8>
void quantize_avx2(const float *x, int64_t n, float scale, float zp, float lo, float hi, void *q) {
    const __m256 vs = _mm256_set1_ps(scale), vz = _mm256_set1_ps(zp);
    const __m256 vlo = _mm256_set1_ps(lo - zp - 2.f), vhi = _mm256_set1_ps(hi - zp + 2.f);
    const __m256 clo = _mm256_set1_ps(lo), chi = _mm256_set1_ps(hi), magic = _mm256_set1_ps(12582912.f);
    auto *out = static_cast<uint8_t *>(q);
    for (int64_t i = 0; i < n; i += 8) {
        __m256 v = _mm256_div_ps(_mm256_loadu_ps(x + i), vs);
        const __m256 nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
        v = _mm256_min_ps(_mm256_max_ps(v, vlo), vhi);
        v = _mm256_add_ps(_mm256_sub_ps(_mm256_add_ps(v, magic), magic), vz);
        v = _mm256_min_ps(_mm256_max_ps(v, clo), chi);
        v = _mm256_blendv_ps(v, vz, nan);
        const __m256i w = _mm256_cvtps_epi32(v);  // integral values: exact
        const __m128i h = _mm_packs_epi32(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1));
        _mm_storel_epi64(reinterpret_cast<__m128i *>(out + i), U8 ? _mm_packus_epi16(h, h) : _mm_packs_epi16(h, h));
    }
}

template <bool U8>
void dequantize_avx2(const void *q, int64_t n, float scale, float zp, float *x) {
    const __m256 vs = _mm256_set1_ps(scale), vz = _mm256_set1_ps(zp);
    const auto *in = static_cast<const uint8_t *>(q);
    for (int64_t i = 0; i < n; i += 8) {
        const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i *>(in + i));
        const __m256i w = U8 ? _mm256_cvtepu8_epi32(b) : _mm256_cvtepi8_epi32(b);
        _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_sub_ps(_mm256_cvtepi32_ps(w), vz), vs));
    }
}

#pragma GCC pop_options

bool has_avx2() {
#if defined(__x86_64__) || defined(__i386__)
    static const bool ok = __builtin_cpu_supports("avx2");
    return ok;
#else
    return false;
#endif
}

constexpr int64_t kChunk = 1 << 14;  // values per parallel piece (a multiple of 8)

template <class T>
void quantize_scalar(const float *x, int64_t b, int64_t e, float scale, float zp, float lo, float hi, T *q) {
    // x / scale is clamped to a range just wider than [lo - zp, hi - zp] (so the clip
    // below decides exactly as clipping the unbounded value would), then rounded half
    // to even by adding and subtracting 1.5 * 2^23 (exact for |v| < 2^22, and the
    // default rounding mode is to nearest even): no libm call, the loop vectorizes.
    // A NaN fails both comparisons of the clamp and is mapped to the zero point.
    const float vlo = lo - zp - 2.f, vhi = hi - zp + 2.f, magic = 12582912.f;
    for (int64_t i = b; i < e; ++i) {
        float v = x[i] / scale;
        const bool nan = v != v;
        v = v < vlo ? vlo : (v > vhi ? vhi : v);
        v = (v + magic) - magic + zp;
        v = v < lo ? lo : (v > hi ? hi : v);
        q[i] = T(nan ? zp : v);
    }
}

template <class T>
void quantize_loop(const float *x, int64_t n, float scale, float zp, float lo, float hi, T *q) {
    const int nt = threads_for_elems(n);
    const int64_t pieces = (n + kChunk - 1) / kChunk;
    const bool simd = has_avx2();
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t c = 0; c < pieces; ++c) {
        const int64_t b = c * kChunk, e = std::min(n, b + kChunk);
        int64_t m = b;
        if (simd) {
            const int64_t full = (e - b) / 8 * 8;
            quantize_avx2<std::is_same<T, uint8_t>::value>(x + b, full, scale, zp, lo, hi, q + b);
            m = b + full;
        }
        quantize_scalar(x, m, e, scale, zp, lo, hi, q);
    }
}

template <class T>
void dequantize_loop(const T *q, int64_t n, float scale, float zp, float *x) {
    const int nt = threads_for_elems(n);
    const int64_t pieces = (n + kChunk - 1) / kChunk;
    const bool simd = has_avx2();
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t c = 0; c < pieces; ++c) {
        const int64_t b = c * kChunk, e = std::min(n, b + kChunk);
        int64_t m = b;
        if (simd) {
            const int64_t full = (e - b) / 8 * 8;
            dequantize_avx2<std::is_same<T, uint8_t>::value>(q + b, full, scale, zp, x + b);
            m = b + full;
        }
        for (int64_t i = m; i < e; ++i) x[i] = (float(q[i]) - zp) * scale;
    }
}

}  // namespace

void quantize_f32(const float *x, int64_t n, float scale, int32_t zp, int32_t qmin, int32_t qmax, QType q_type,
                  void *q) {
    if (q_type == QType::u8)
        quantize_loop(x, n, scale, float(zp), float(std::max(qmin, 0)), float(std::min(qmax, 255)),
                      static_cast<uint8_t *>(q));
    else
        quantize_loop(x, n, scale, float(zp), float(std::max(qmin, -128)), float(std::min(qmax, 127)),
                      static_cast<int8_t *>(q));
}

void dequantize_to_f32(const void *q, QType q_type, int64_t n, float scale, int32_t zp, float *x) {
    if (q_type == QType::u8) dequantize_loop(static_cast<const uint8_t *>(q), n, scale, float(zp), x);
    else dequantize_loop(static_cast<const int8_t *>(q), n, scale, float(zp), x);
}

std::string cpu_isa() {
    using I = dnnl::cpu_isa;
    switch (dnnl::get_effective_cpu_isa()) {
        case I::sse41: return "sse41";
        case I::avx: return "avx";
        case I::avx2: return "avx2";
        case I::avx2_vnni: return "avx2_vnni";
        case I::avx2_vnni_2: return "avx2_vnni_2";
        case I::avx512_core: return "avx512_core";
        case I::avx512_core_vnni: return "avx512_core_vnni";
        case I::avx512_core_bf16: return "avx512_core_bf16";
        case I::avx512_core_fp16: return "avx512_core_fp16";
        case I::avx512_core_amx: return "avx512_core_amx";
        case I::avx512_core_amx_fp16: return "avx512_core_amx_fp16";
        default: return "other";
    }
}

bool int8_exact_u8s8() {
    const std::string isa = cpu_isa();
    return isa.find("vnni") != std::string::npos || isa.find("bf16") != std::string::npos ||
           isa.find("fp16") != std::string::npos || isa.find("amx") != std::string::npos;
}

}  // namespace nn
}  // namespace fw
