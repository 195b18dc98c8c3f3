#include "nn_norm.hpp"

#include <cmath>
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "bf16.hpp"
#include "nn_common.hpp"
#include "runtime.hpp"

namespace fw {
namespace nn {
namespace {

using dnnl::normalization_flags;
using dnnl::prop_kind;
using f32 = memory::data_type;

int64_t float_bits(float f) {
    int32_t b;
    std::memcpy(&b, &f, sizeof b);
    return b;
}

[[noreturn]] void fail(const char *op, const std::string &what, const dnnl::error &e) {
    throw std::runtime_error(std::string(op) + ": oneDNN could not create the primitive for " + what + ": " +
                             e.what());
}

std::string bn_text(const BnGeom &g) {
    return "x viewed as [N=" + std::to_string(g.N) + ", C=" + std::to_string(g.C) + ", P=" + std::to_string(g.P) +
           "]" + (g.channel_last ? " channel-last" : " channel-first");
}

// ---------------------------------------------------------------- batch norm

memory::desc bn_md(const BnGeom &g, memory::data_type dt) { return act_md({g.N, g.C, g.P, 1}, dt, g.channel_last); }

// What the primitive runs on: always channel-last. oneDNN 2023.2 has jit batch
// norm for channel-last (and blocked) data only; on channel-first data it uses a
// generic loop 4-10x slower than the jit kernel plus the reorders to and from
// channel-last (measured on the AVX2 reference machine). With P == 1 (2-D input)
// both layouts are the same memory and no reorder is made.
memory::desc bn_prim_md(const BnGeom &g, memory::data_type dt) { return act_md({g.N, g.C, g.P, 1}, dt, true); }

std::shared_ptr<Prim> bn_fwd_entry(const BnGeom &g, DType dt, bool scale, bool shift, bool training, float eps) {
    const int nt = threads_for_elems(g.N * g.C * g.P);
    FlatKey k;
    k.push(g.N), k.push(g.C), k.push(g.P);
    k.push(int64_t(g.channel_last) | int64_t(scale) << 1 | int64_t(shift) << 2 | int64_t(training) << 3);
    k.push(int64_t(dt)), k.push(float_bits(eps)), k.push(nt);
    return lookup(Kind::bnorm_fwd, k, [&] {
        try {
            return build_typed(dt, [&](memory::data_type ct) {
                normalization_flags fl = normalization_flags::none;
                if (scale) fl = fl | normalization_flags::use_scale;
                if (shift) fl = fl | normalization_flags::use_shift;
                if (!training) fl = fl | normalization_flags::use_global_stats;
                auto pd = dnnl::batch_normalization_forward::primitive_desc(
                    cpu_engine(), training ? prop_kind::forward_training : prop_kind::forward_inference,
                    bn_prim_md(g, ct), bn_prim_md(g, ct), eps, fl, user_attr());
                const auto udt = dnnl_type(dt);
                const auto stat = plain_md({g.C}, f32::f32);
                const Dir sd = training ? kOut : kIn;
                std::vector<ArgSpec> specs{{DNNL_ARG_SRC, bn_md(g, udt), kIn}, {DNNL_ARG_DST, bn_md(g, udt), kOut}};
                if (scale) specs.push_back({DNNL_ARG_SCALE, stat, kIn});
                if (shift) specs.push_back({DNNL_ARG_SHIFT, stat, kIn});
                specs.push_back({DNNL_ARG_MEAN, stat, sd});
                specs.push_back({DNNL_ARG_VARIANCE, stat, sd});
                auto p = std::make_shared<Prim>();
                p->init(pd, dnnl::batch_normalization_forward(pd), std::move(specs), "batch_norm");
                return p;
            });
        } catch (const dnnl::error &e) {
            fail("batch_norm", bn_text(g), e);
        }
    });
}

std::shared_ptr<Prim> bn_bwd_entry(const BnGeom &g, DType dt, bool batch_stats, float eps) {
    const int nt = threads_for_elems(g.N * g.C * g.P);
    FlatKey k;
    k.push(g.N), k.push(g.C), k.push(g.P);
    k.push(int64_t(g.channel_last) | int64_t(batch_stats) << 1);
    k.push(int64_t(dt)), k.push(float_bits(eps)), k.push(nt);
    return lookup(Kind::bnorm_bwd, k, [&] {
        try {
            return build_typed(dt, [&](memory::data_type ct) {
                normalization_flags fl = normalization_flags::use_scale | normalization_flags::use_shift;
                if (!batch_stats) fl = fl | normalization_flags::use_global_stats;
                const auto md = bn_prim_md(g, ct);
                auto hint = dnnl::batch_normalization_forward::primitive_desc(
                    cpu_engine(), prop_kind::forward_training, md, md, eps, fl);
                auto pd = dnnl::batch_normalization_backward::primitive_desc(cpu_engine(), prop_kind::backward, md,
                                                                             md, md, eps, fl, hint, user_attr());
                const auto udt = dnnl_type(dt);
                const auto stat = plain_md({g.C}, f32::f32);
                std::vector<ArgSpec> specs{{DNNL_ARG_SRC, bn_md(g, udt), kIn},
                                           {DNNL_ARG_DIFF_DST, bn_md(g, udt), kIn},
                                           {DNNL_ARG_SCALE, stat, kIn},
                                           {DNNL_ARG_MEAN, stat, kIn},
                                           {DNNL_ARG_VARIANCE, stat, kIn},
                                           {DNNL_ARG_DIFF_SRC, bn_md(g, udt), kOut},
                                           {DNNL_ARG_DIFF_SCALE, stat, kOut},
                                           {DNNL_ARG_DIFF_SHIFT, stat, kOut}};
                auto p = std::make_shared<Prim>();
                p->init(pd, dnnl::batch_normalization_backward(pd), std::move(specs), "batch_norm backward");
                return p;
            });
        } catch (const dnnl::error &e) {
            fail("batch_norm backward", bn_text(g), e);
        }
    });
}

// ---------------------------------------------------------------- layer norm

std::string ln_text(int64_t M, int64_t D) {
    return "x viewed as [M=" + std::to_string(M) + ", D=" + std::to_string(D) + "]";
}

std::shared_ptr<Prim> ln_fwd_entry(int64_t M, int64_t D, DType dt, bool scale, bool shift, float eps) {
    const int nt = threads_for_elems(M * D);
    FlatKey k;
    k.push(M), k.push(D), k.push(int64_t(scale) | int64_t(shift) << 1);
    k.push(int64_t(dt)), k.push(float_bits(eps)), k.push(nt);
    return lookup(Kind::lnorm_fwd, k, [&] {
        try {
            return build_typed(dt, [&](memory::data_type ct) {
                normalization_flags fl = normalization_flags::none;
                if (scale) fl = fl | normalization_flags::use_scale;
                if (shift) fl = fl | normalization_flags::use_shift;
                const auto stat = plain_md({M}, f32::f32);
                auto pd = dnnl::layer_normalization_forward::primitive_desc(
                    cpu_engine(), prop_kind::forward_training, plain_md({M, D}, ct), plain_md({M, D}, ct), stat,
                    eps, fl, user_attr());
                const auto udt = dnnl_type(dt);
                const auto par = plain_md({D}, f32::f32);
                std::vector<ArgSpec> specs{{DNNL_ARG_SRC, plain_md({M, D}, udt), kIn},
                                           {DNNL_ARG_DST, plain_md({M, D}, udt), kOut}};
                if (scale) specs.push_back({DNNL_ARG_SCALE, par, kIn});
                if (shift) specs.push_back({DNNL_ARG_SHIFT, par, kIn});
                specs.push_back({DNNL_ARG_MEAN, stat, kOut});
                specs.push_back({DNNL_ARG_VARIANCE, stat, kOut});
                auto p = std::make_shared<Prim>();
                p->init(pd, dnnl::layer_normalization_forward(pd), std::move(specs), "layer_norm");
                return p;
            });
        } catch (const dnnl::error &e) {
            fail("layer_norm", ln_text(M, D), e);
        }
    });
}

std::shared_ptr<Prim> ln_bwd_entry(int64_t M, int64_t D, DType dt, float eps) {
    const int nt = threads_for_elems(M * D);
    FlatKey k;
    k.push(M), k.push(D), k.push(int64_t(dt)), k.push(float_bits(eps)), k.push(nt);
    return lookup(Kind::lnorm_bwd, k, [&] {
        try {
            return build_typed(dt, [&](memory::data_type ct) {
                const normalization_flags fl = normalization_flags::use_scale | normalization_flags::use_shift;
                const auto stat = plain_md({M}, f32::f32);
                const auto md = plain_md({M, D}, ct);
                auto hint = dnnl::layer_normalization_forward::primitive_desc(
                    cpu_engine(), prop_kind::forward_training, md, md, stat, eps, fl);
                auto pd = dnnl::layer_normalization_backward::primitive_desc(cpu_engine(), prop_kind::backward, md,
                                                                             md, md, stat, eps, fl, hint, user_attr());
                const auto udt = dnnl_type(dt);
                const auto umd = plain_md({M, D}, udt);
                const auto par = plain_md({D}, f32::f32);
                // oneDNN wants SHIFT among the inputs when use_shift is set (it does not read it)
                std::vector<ArgSpec> specs{{DNNL_ARG_SRC, umd, kIn},         {DNNL_ARG_DIFF_DST, umd, kIn},
                                           {DNNL_ARG_SCALE, par, kIn},       {DNNL_ARG_SHIFT, par, kIn},
                                           {DNNL_ARG_MEAN, stat, kIn},
                                           {DNNL_ARG_VARIANCE, stat, kIn},   {DNNL_ARG_DIFF_SRC, umd, kOut},
                                           {DNNL_ARG_DIFF_SCALE, par, kOut}, {DNNL_ARG_DIFF_SHIFT, par, kOut}};
                auto p = std::make_shared<Prim>();
                p->init(pd, dnnl::layer_normalization_backward(pd), std::move(specs), "layer_norm backward");
                return p;
            });
        } catch (const dnnl::error &e) {
            fail("layer_norm backward", ln_text(M, D), e);
        }
    });
}

// ---------------------------------------------------------------- softmax

memory::dims sm_dims(int64_t outer, int64_t len, int64_t inner) {
    return inner == 1 ? memory::dims{outer, len} : memory::dims{outer, len, inner};
}

std::shared_ptr<Prim> sm_entry(int64_t outer, int64_t len, int64_t inner, DType dt, bool log) {
    const int nt = threads_for_elems(outer * len * inner);
    FlatKey k;
    k.push(outer), k.push(len), k.push(inner), k.push(int64_t(dt)), k.push(log), k.push(nt);
    const char *op = log ? "log_softmax" : "softmax";
    return lookup(Kind::softmax_fwd, k, [&] {
        try {
            return build_typed(dt, [&](memory::data_type ct) {
                const auto alg = log ? dnnl::algorithm::softmax_log : dnnl::algorithm::softmax_accurate;
                const auto dims = sm_dims(outer, len, inner);
                const auto md = plain_md(dims, ct), umd = plain_md(dims, dnnl_type(dt));
                auto fpd = dnnl::softmax_forward::primitive_desc(cpu_engine(), prop_kind::forward_inference, alg, md,
                                                                 md, 1, user_attr());
                auto p = std::make_shared<Prim>();
                p->init(fpd, dnnl::softmax_forward(fpd), {{DNNL_ARG_SRC, umd, kIn}, {DNNL_ARG_DST, umd, kOut}}, op);
                return p;
            });
        } catch (const dnnl::error &e) {
            fail(op, "[" + std::to_string(outer) + ", " + std::to_string(len) + ", " + std::to_string(inner) + "]",
                 e);
        }
    });
}

std::shared_ptr<Prim> exp_entry(int64_t n) {
    const int nt = threads_for_elems(n);
    FlatKey k;
    k.push(n), k.push(nt);
    return lookup(Kind::eltwise_exp, k, [&] {
        try {
            const auto md = plain_md({n}, f32::f32);
            auto pd = dnnl::eltwise_forward::primitive_desc(cpu_engine(), prop_kind::forward_inference,
                                                            dnnl::algorithm::eltwise_exp, md, md, 0.f, 0.f,
                                                            user_attr());
            auto p = std::make_shared<Prim>();
            p->init(pd, dnnl::eltwise_forward(pd), {{DNNL_ARG_SRC, md, kIn}, {DNNL_ARG_DST, md, kOut}}, "exp");
            return p;
        } catch (const dnnl::error &e) {
            fail("log_softmax backward", "exp of " + std::to_string(n) + " elements", e);
        }
    });
}

// sum(a) or sum(a*b) over n contiguous floats, 8 lanes of partial sums.
inline float row_sum(const float *a, const float *b, int64_t n) {
    float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int64_t i = 0;
    if (b) {
        for (; i + 8 <= n; i += 8)
            for (int k = 0; k < 8; ++k) acc[k] += a[i + k] * b[i + k];
        for (; i < n; ++i) acc[0] += a[i] * b[i];
    } else {
        for (; i + 8 <= n; i += 8)
            for (int k = 0; k < 8; ++k) acc[k] += a[i + k];
        for (; i < n; ++i) acc[0] += a[i];
    }
    return ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
}

// oneDNN's exp(y) with NumPy's special values: exp(NaN) = NaN (the jit clamps the
// argument, turning NaN into a large finite value) and exp(-inf) = 0 exactly.
inline float exact_exp(float y, float e) { return y != y ? y : (y == -INFINITY ? 0.f : e); }

inline float ld(const float *p, int64_t i) { return p[i]; }
inline float ld(const uint16_t *p, int64_t i) { return bf16_bits_to_f32(p[i]); }
inline void st(float *p, int64_t i, float v) { p[i] = v; }
inline void st(uint16_t *p, int64_t i, float v) { p[i] = f32_to_bf16_bits(v); }

// Recomputes, with fw's reference algorithm, every softmax row whose output holds a
// NaN (the input had a NaN or an infinity, which oneDNN and NumPy treat differently).
template <class T>
void fix_nan_rows(int64_t outer, int64_t len, int64_t inner, const T *x, T *out, bool log) {
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
            const int64_t base = o * len * inner + i;
            bool nan = false;
            for (int64_t j = 0; j < len && !nan; ++j) nan = std::isnan(ld(out, base + j * inner));
            if (!nan) continue;
            float m = -INFINITY;
            bool any_nan = false;
            for (int64_t j = 0; j < len; ++j) {
                const float v = ld(x, base + j * inner);
                any_nan = any_nan || std::isnan(v);
                m = std::max(m, v);
            }
            if (any_nan || !std::isfinite(m)) m = 0.f;  // np.max is NaN; where(isfinite(m), m, 0)
            float s = 0.f;
            for (int64_t j = 0; j < len; ++j) s += std::exp(ld(x, base + j * inner) - m);
            const float ls = std::log(s);
            for (int64_t j = 0; j < len; ++j) {
                const float v = ld(x, base + j * inner) - m;
                st(out, base + j * inner, log ? v - ls : std::exp(v) / s);
            }
        }
}

template <class T>
bool has_nan(const T *p, int64_t n) {
    // on the bits, branch-free, so that the compiler vectorizes it: the float
    // compare (p[i] != p[i]) ran scalar and cost as much as the softmax itself
    // (40 us of a 512x128 softmax on the 2-core EPYC, ONEDNN_VERBOSE vs wall time)
    uint32_t r = 0;
    if constexpr (std::is_same<T, float>::value) {
        const auto *b = reinterpret_cast<const uint32_t *>(p);
        for (int64_t i = 0; i < n; ++i) r |= uint32_t((b[i] & 0x7fffffffu) > 0x7f800000u);
    } else {
        for (int64_t i = 0; i < n; ++i) r |= uint32_t((p[i] & 0x7fffu) > 0x7f80u);
    }
    return r != 0;
}

void fix(int64_t outer, int64_t len, int64_t inner, const Operand &x, const Operand &out, bool log) {
    const int64_t n = outer * len * inner;
    if (out.dtype == DType::bf16) {
        auto *o = static_cast<uint16_t *>(out.data);
        if (has_nan(o, n)) fix_nan_rows(outer, len, inner, static_cast<const uint16_t *>(x.data), o, log);
    } else {
        auto *o = static_cast<float *>(out.data);
        if (has_nan(o, n)) fix_nan_rows(outer, len, inner, static_cast<const float *>(x.data), o, log);
    }
}

}  // namespace

void batch_norm_forward(const BnGeom &g, const Operand &x, const Operand &y, const float *scale, const float *shift,
                        const float *rm, const float *rv, float *mean_out, float *var_out, float *saved_mean,
                        float *saved_inv_std, float eps, float momentum, bool training) {
    auto e = bn_fwd_entry(g, x.dtype, scale != nullptr, shift != nullptr, training, eps);
    std::vector<float> var(static_cast<size_t>(g.C));
    void *ptrs[6];
    int n = 0;
    ptrs[n++] = x.data;
    ptrs[n++] = y.data;
    if (scale) ptrs[n++] = const_cast<float *>(scale);
    if (shift) ptrs[n++] = const_cast<float *>(shift);
    if (training) {
        ptrs[n++] = saved_mean;
        ptrs[n++] = var.data();
    } else {
        ptrs[n++] = const_cast<float *>(rm);
        ptrs[n++] = const_cast<float *>(rv);
    }
    e->execute(ptrs);
    const float keep = momentum, take = 1.f - momentum;
    for (int64_t c = 0; c < g.C; ++c) {
        if (training) {
            mean_out[c] = keep * rm[c] + take * saved_mean[c];
            var_out[c] = keep * rv[c] + take * var[size_t(c)];
            saved_inv_std[c] = 1.f / std::sqrt(var[size_t(c)] + eps);
        } else {
            mean_out[c] = saved_mean[c] = rm[c];
            var_out[c] = rv[c];
            saved_inv_std[c] = 1.f / std::sqrt(rv[c] + eps);
        }
    }
}

void batch_norm_backward(const BnGeom &g, const Operand &x, const Operand &gy, const float *scale,
                         const float *mean, const float *inv_std, float eps, bool batch_stats, const Operand &gx,
                         float *gscale, float *gshift) {
    auto e = bn_bwd_entry(g, x.dtype, batch_stats, eps);
    // var, then ones (the scale when there is none)
    std::vector<float> buf(static_cast<size_t>(2 * g.C));
    float *var = buf.data(), *ones = var + g.C;
    for (int64_t c = 0; c < g.C; ++c) var[c] = 1.f / (inv_std[c] * inv_std[c]) - eps, ones[c] = 1.f;
    if (!scale) scale = ones;
    void *ptrs[8] = {x.data, gy.data, const_cast<float *>(scale), const_cast<float *>(mean),
                     var,    gx.data, gscale,                     gshift};
    e->execute(ptrs);
}

void layer_norm_forward(int64_t M, int64_t D, const Operand &x, const Operand &y, const float *scale,
                        const float *shift, float eps, float *mean, float *inv_std) {
    auto e = ln_fwd_entry(M, D, x.dtype, scale != nullptr, shift != nullptr, eps);
    void *ptrs[6];
    int n = 0;
    ptrs[n++] = x.data;
    ptrs[n++] = y.data;
    if (scale) ptrs[n++] = const_cast<float *>(scale);
    if (shift) ptrs[n++] = const_cast<float *>(shift);
    ptrs[n++] = mean;
    ptrs[n++] = inv_std;  // the variance first, turned into inv_std below
    e->execute(ptrs);
    for (int64_t m = 0; m < M; ++m) inv_std[m] = 1.f / std::sqrt(inv_std[m] + eps);
}

void layer_norm_backward(int64_t M, int64_t D, const Operand &x, const Operand &gy, const float *scale,
                         const float *mean, const float *inv_std, float eps, const Operand &gx, float *gscale,
                         float *gshift) {
    auto e = ln_bwd_entry(M, D, x.dtype, eps);
    std::vector<float> var(static_cast<size_t>(M)), pars(static_cast<size_t>(2 * D), 0.f);
    for (int64_t m = 0; m < M; ++m) var[size_t(m)] = 1.f / (inv_std[m] * inv_std[m]) - eps;
    float *ones = pars.data(), *zeros = ones + D;  // the scale when there is none; the unread shift
    std::fill(ones, ones + D, 1.f);
    if (!scale) scale = ones;
    void *ptrs[9] = {x.data, gy.data, const_cast<float *>(scale), zeros, const_cast<float *>(mean), var.data(),
                     gx.data, gscale, gshift};
    e->execute(ptrs);
}

void softmax_forward(int64_t outer, int64_t len, int64_t inner, const Operand &x, const Operand &y, bool log) {
    auto e = sm_entry(outer, len, inner, x.dtype, log);
    void *ptrs[2] = {x.data, y.data};
    e->execute(ptrs);
    fix(outer, len, inner, x, y, log);
}

void softmax_backward(int64_t outer, int64_t len, int64_t inner, const float *y, const float *gy, float *gx,
                      bool log) {
    const int64_t n = outer * len * inner;
    if (log) {  // gx = exp(y) first, then gx = gy - gx * sum(gy)
        auto e = exp_entry(n);
        void *ptrs[2] = {const_cast<float *>(y), gx};
        e->execute(ptrs);
    }
    const int nt = threads_for_elems(n);
    if (inner == 1) {
#pragma omp parallel for num_threads(nt) schedule(static)
        for (int64_t o = 0; o < outer; ++o) {
            const float *yr = y + o * len, *gr = gy + o * len;
            float *xr = gx + o * len;
            const float s = row_sum(gr, log ? nullptr : yr, len);
            if (log)
                for (int64_t j = 0; j < len; ++j) xr[j] = gr[j] - exact_exp(yr[j], xr[j]) * s;
            else
                for (int64_t j = 0; j < len; ++j) xr[j] = yr[j] * (gr[j] - s);
        }
        return;
    }
#pragma omp parallel num_threads(nt)
    {
        std::vector<float> acc(static_cast<size_t>(inner));
#pragma omp for schedule(static)
        for (int64_t o = 0; o < outer; ++o) {
            const float *yb = y + o * len * inner, *gb = gy + o * len * inner;
            float *xb = gx + o * len * inner;
            std::fill(acc.begin(), acc.end(), 0.f);
            for (int64_t j = 0; j < len; ++j) {
                const float *yr = yb + j * inner, *gr = gb + j * inner;
                if (log)
                    for (int64_t i = 0; i < inner; ++i) acc[i] += gr[i];
                else
                    for (int64_t i = 0; i < inner; ++i) acc[i] += gr[i] * yr[i];
            }
            for (int64_t j = 0; j < len; ++j) {
                const float *yr = yb + j * inner, *gr = gb + j * inner;
                float *xr = xb + j * inner;
                if (log)
                    for (int64_t i = 0; i < inner; ++i) xr[i] = gr[i] - exact_exp(yr[i], xr[i]) * acc[i];
                else
                    for (int64_t i = 0; i < inner; ++i) xr[i] = yr[i] * (gr[i] - acc[i]);
            }
        }
    }
}

}  // namespace nn
}  // namespace fw
