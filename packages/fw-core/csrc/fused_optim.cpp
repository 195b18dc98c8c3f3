// Optimizer update kernels (see fused_optim.hpp). Each rule is one loop over
// 8-float vectors that loads param, grad and state once, updates in registers
// and stores every output once; the statement order follows the NumPy cpu
// kernels of fw/core/ops/optimizer.py, with correctly rounded sqrt and
// division (an rsqrt/rcp-estimate variant measured slower on Zen 3: the
// divider is not what bounds these loops), so float32 results agree with the
// NumPy kernels to rounding and FMA contraction.
#include "fused_optim.hpp"

#include <omp.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "fused_common.hpp"
#include "fused_simd.hpp"

namespace fw::fused {
namespace {

// below this many elements per thread, one thread (waking the second core and
// splitting costs more than it saves on a memory-bound loop)
constexpr int64_t kMinPerThread = 1 << 14;

}  // namespace

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")

namespace {

using namespace fw::simd;

template <class P, class S>
struct Ptrs {
    const P *p, *g;
    P *po;
    const S *s0, *s1, *s2;
    S *o0, *o1, *o2;
    explicit Ptrs(const OptimArgs &a)
        : p(static_cast<const P *>(a.p)),
          g(static_cast<const P *>(a.g)),
          po(static_cast<P *>(a.po)),
          s0(static_cast<const S *>(a.s[0])),
          s1(static_cast<const S *>(a.s[1])),
          s2(static_cast<const S *>(a.s[2])),
          o0(static_cast<S *>(a.so[0])),
          o1(static_cast<S *>(a.so[1])),
          o2(static_cast<S *>(a.so[2])) {}
};

static inline vf add(vf a, vf b) { return _mm256_add_ps(a, b); }
static inline vf sub(vf a, vf b) { return _mm256_sub_ps(a, b); }
static inline vf mul(vf a, vf b) { return _mm256_mul_ps(a, b); }
static inline vf dvd(vf a, vf b) { return _mm256_div_ps(a, b); }

template <class P, class S>
void sgd_range(const OptimArgs &a, int64_t b, int64_t e) {
    Ptrs<P, S> q(a);
    const vf lr = vset(a.c[0]);
    for_lanes(b, e, [&](int64_t i, int k) {
        const vf p = loadn(q.p + i, k), g = loadn(q.g + i, k);
        storen(q.po + i, sub(p, mul(lr, g)), k);
    });
}

template <class P, class S>
void momentum_range(const OptimArgs &a, int64_t b, int64_t e) {
    Ptrs<P, S> q(a);
    const vf lr = vset(a.c[0]), mu = vset(a.c[1]), rescale = vset(a.c[2]), coeff = vset(a.c[3]);
    const bool nesterov = a.flag[0], l2 = a.flag[1], scaled = a.flag[2];
    for_lanes(b, e, [&](int64_t i, int k) {
        vf p = loadn(q.p + i, k), g = loadn(q.g + i, k), v = loadn(q.s0 + i, k);
        if (scaled) g = mul(g, rescale);
        if (l2) g = add(g, mul(coeff, p));
        v = add(mul(v, mu), g);
        if (nesterov)
            p = sub(p, mul(add(mul(v, mu), g), lr));
        else
            p = sub(p, mul(lr, v));
        storen(q.po + i, p, k);
        storen(q.o0 + i, v, k);
    });
}

template <class P, class S, bool AMS>
void adam_range(const OptimArgs &a, int64_t b, int64_t e) {
    Ptrs<P, S> q(a);
    const vf decay = vset(a.c[0]), ob1 = vset(a.c[1]), ob2 = vset(a.c[2]), epsc = vset(a.c[3]),
             step = vset(a.c[4]);
    const bool decayed = a.flag[1];
    for_lanes(b, e, [&](int64_t i, int k) {
        vf p = loadn(q.p + i, k), m = loadn(q.s0 + i, k), v = loadn(q.s1 + i, k);
        const vf g = loadn(q.g + i, k);
        if (decayed) p = mul(p, decay);
        m = add(m, mul(sub(g, m), ob1));
        v = add(v, mul(sub(mul(g, g), v), ob2));
        vf den = v;
        if constexpr (AMS) {
            den = vmax_nan(loadn(q.s2 + i, k), v);
            storen(q.o2 + i, den, k);
        }
        p = sub(p, mul(dvd(m, add(vsqrt(den), epsc)), step));
        storen(q.po + i, p, k);
        storen(q.o0 + i, m, k);
        storen(q.o1 + i, v, k);
    });
}

template <class P, class S>
void adamax_range(const OptimArgs &a, int64_t b, int64_t e) {
    Ptrs<P, S> q(a);
    const vf ob1 = vset(a.c[0]), beta2 = vset(a.c[1]), eps = vset(a.c[2]), step = vset(a.c[3]);
    for_lanes(b, e, [&](int64_t i, int k) {
        vf p = loadn(q.p + i, k), m = loadn(q.s0 + i, k), u = loadn(q.s1 + i, k);
        const vf g = loadn(q.g + i, k);
        m = add(m, mul(sub(g, m), ob1));
        u = vmax_nan(add(mul(u, beta2), eps), vabs(g));
        p = sub(p, mul(dvd(m, u), step));
        storen(q.po + i, p, k);
        storen(q.o0 + i, m, k);
        storen(q.o1 + i, u, k);
    });
}

template <class P, class S>
void adagrad_range(const OptimArgs &a, int64_t b, int64_t e) {
    Ptrs<P, S> q(a);
    const vf lr = vset(a.c[0]), eps = vset(a.c[1]);
    for_lanes(b, e, [&](int64_t i, int k) {
        vf p = loadn(q.p + i, k), G = loadn(q.s0 + i, k);
        const vf g = loadn(q.g + i, k);
        G = add(G, mul(g, g));
        p = sub(p, mul(dvd(g, add(vsqrt(G), eps)), lr));
        storen(q.po + i, p, k);
        storen(q.o0 + i, G, k);
    });
}

template <class P, class S>
void adadelta_range(const OptimArgs &a, int64_t b, int64_t e) {
    Ptrs<P, S> q(a);
    const vf lr = vset(a.c[0]), orho = vset(a.c[1]), eps = vset(a.c[2]);
    for_lanes(b, e, [&](int64_t i, int k) {
        vf p = loadn(q.p + i, k), eg = loadn(q.s0 + i, k), ed = loadn(q.s1 + i, k);
        const vf g = loadn(q.g + i, k);
        eg = add(eg, mul(sub(mul(g, g), eg), orho));
        const vf d = vneg(mul(vsqrt(dvd(add(ed, eps), add(eg, eps))), g));
        ed = add(ed, mul(sub(mul(d, d), ed), orho));
        p = add(p, mul(d, lr));
        storen(q.po + i, p, k);
        storen(q.o0 + i, eg, k);
        storen(q.o1 + i, ed, k);
    });
}

template <class P, class S, bool CENTERED>
void rmsprop_range(const OptimArgs &a, int64_t b, int64_t e) {
    Ptrs<P, S> q(a);
    const vf lr = vset(a.c[0]), orho = vset(a.c[1]), eps = vset(a.c[2]), momentum = vset(a.c[3]);
    for_lanes(b, e, [&](int64_t i, int k) {
        vf p = loadn(q.p + i, k), ms = loadn(q.s0 + i, k), mom = loadn(q.s1 + i, k);
        const vf g = loadn(q.g + i, k);
        ms = add(ms, mul(sub(mul(g, g), ms), orho));
        vf t = ms;
        if constexpr (CENTERED) {
            vf mg = loadn(q.s2 + i, k);
            mg = add(mg, mul(sub(g, mg), orho));
            storen(q.o2 + i, mg, k);
            t = sub(ms, mul(mg, mg));
        }
        t = mul(dvd(g, vsqrt(add(t, eps))), lr);
        mom = add(mul(mom, momentum), t);
        p = sub(p, mom);
        storen(q.po + i, p, k);
        storen(q.o0 + i, ms, k);
        storen(q.o1 + i, mom, k);
    });
}

template <class P, class S>
void asgd_range(const OptimArgs &a, int64_t b, int64_t e) {
    Ptrs<P, S> q(a);
    const vf step = vset(a.c[0]);
    for_lanes(b, e, [&](int64_t i, int k) {
        vf p = loadn(q.p + i, k), d = loadn(q.s0 + i, k);
        const vf y = loadn(q.s1 + i, k), g = loadn(q.g + i, k);
        d = add(sub(d, y), g);
        p = sub(p, mul(step, d));
        storen(q.po + i, p, k);
        storen(q.o0 + i, d, k);
        storen(q.o1 + i, g, k);
    });
}

// lamb: r = m / (1-b1^t) / (sqrt(v / (1-b2^t)) + eps) + wd p from the updated moments
struct LambC {
    vf ob1, ob2, ib2, eps, ib1, wd;
    bool decay;
    explicit LambC(const OptimArgs &a)
        : ob1(vset(a.c[0])), ob2(vset(a.c[1])), ib2(vset(a.c[2])), eps(vset(a.c[3])), ib1(vset(a.c[4])),
          wd(vset(a.c[5])), decay(a.flag[1]) {}
    inline vf r(vf p, vf m, vf v) const {
        vf t = dvd(m, add(vsqrt(mul(v, ib2)), eps));
        t = mul(t, ib1);
        return decay ? add(t, mul(wd, p)) : t;
    }
};

static inline double hsum(__m256d x) {
    const __m128d s = _mm_add_pd(_mm256_castpd256_pd128(x), _mm256_extractf128_pd(x, 1));
    return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

static inline __m256d sq_acc(__m256d acc_lo, vf x, __m256d &acc_hi) {
    const __m256d lo = _mm256_cvtps_pd(_mm256_castps256_ps128(x));
    const __m256d hi = _mm256_cvtps_pd(_mm256_extractf128_ps(x, 1));
    acc_hi = _mm256_fmadd_pd(hi, hi, acc_hi);
    return _mm256_fmadd_pd(lo, lo, acc_lo);
}

// Pass 1 of lamb over [b, e) lying inside one segment: moments updated and
// stored; the squared norms of p and r added to pn2/rn2 (float64).
template <class P, class S>
void lamb_moments(const OptimArgs &a, int64_t b, int64_t e, double &pn2, double &rn2) {
    Ptrs<P, S> q(a);
    const LambC c(a);
    const bool adapt = a.flag[0];
    __m256d pl = _mm256_setzero_pd(), ph = pl, rl = pl, rh = pl;
    for_lanes(b, e, [&](int64_t i, int k) {
        const vf p = loadn(q.p + i, k), g = loadn(q.g + i, k);
        vf m = loadn(q.s0 + i, k), v = loadn(q.s1 + i, k);
        m = add(m, mul(sub(g, m), c.ob1));
        v = add(v, mul(sub(mul(g, g), v), c.ob2));
        storen(q.o0 + i, m, k);
        storen(q.o1 + i, v, k);
        if (adapt) {
            pl = sq_acc(pl, p, ph);
            rl = sq_acc(rl, vkeep(c.r(p, m, v), k), rh);
        }
    });
    pn2 += hsum(_mm256_add_pd(pl, ph));
    rn2 += hsum(_mm256_add_pd(rl, rh));
}

// Pass 2: p -= scale * r, r recomputed from the stored moments.
template <class P, class S>
void lamb_apply(const OptimArgs &a, int64_t b, int64_t e, float scale) {
    Ptrs<P, S> q(a);
    const LambC c(a);
    const vf sc = vset(scale);
    const S *m = q.o0, *v = q.o1;
    for_lanes(b, e, [&](int64_t i, int k) {
        const vf p = loadn(q.p + i, k);
        const vf r = c.r(p, loadn(m + i, k), loadn(v + i, k));
        storen(q.po + i, sub(p, mul(r, sc)), k);
    });
}

using RangeFn = void (*)(const OptimArgs &, int64_t, int64_t);
using MomentsFn = void (*)(const OptimArgs &, int64_t, int64_t, double &, double &);
using ApplyFn = void (*)(const OptimArgs &, int64_t, int64_t, float);

template <class P, class S>
RangeFn pick_rule(const OptimArgs &a) {
    switch (a.rule) {
        case Rule::sgd: return sgd_range<P, S>;
        case Rule::momentum: return momentum_range<P, S>;
        case Rule::adam: return a.flag[0] ? adam_range<P, S, true> : adam_range<P, S, false>;
        case Rule::adamax: return adamax_range<P, S>;
        case Rule::adagrad: return adagrad_range<P, S>;
        case Rule::adadelta: return adadelta_range<P, S>;
        case Rule::rmsprop: return a.flag[0] ? rmsprop_range<P, S, true> : rmsprop_range<P, S, false>;
        case Rule::asgd: return asgd_range<P, S>;
        case Rule::lamb: break;
    }
    return nullptr;
}

template <class P, class S>
void pick_lamb(MomentsFn &mf, ApplyFn &af) {
    mf = lamb_moments<P, S>;
    af = lamb_apply<P, S>;
}

// The (P, S) instantiation for the dtype pair; F is called with two type tags.
template <class F>
bool with_types(ODT pdt, ODT sdt, F &&f) {
    if (sdt == ODT::f32) {
        switch (pdt) {
            case ODT::f32: f(float{}, float{}); return true;
            case ODT::f16: f(f16_t{}, float{}); return true;
            case ODT::bf16: f(bf16_t{}, float{}); return true;
        }
    }
    if (pdt == ODT::f16 && sdt == ODT::f16) {
        f(f16_t{}, f16_t{});
        return true;
    }
    if (pdt == ODT::bf16 && sdt == ODT::bf16) {
        f(bf16_t{}, bf16_t{});
        return true;
    }
    return false;
}

}  // namespace

// Non-inlined entry points compiled for AVX2 (called only after cpu_supported()).
static RangeFn resolve_range(const OptimArgs &a) {
    RangeFn fn = nullptr;
    with_types(a.pdt, a.sdt, [&](auto p, auto s) { fn = pick_rule<decltype(p), decltype(s)>(a); });
    return fn;
}

static void resolve_lamb(const OptimArgs &a, MomentsFn &mf, ApplyFn &af) {
    with_types(a.pdt, a.sdt, [&](auto p, auto s) { pick_lamb<decltype(p), decltype(s)>(mf, af); });
}

#pragma GCC pop_options

bool optim_dtypes_supported(ODT pdt, ODT sdt) {
    return sdt == ODT::f32 || (pdt == sdt && pdt != ODT::f32);
}

namespace {

void lamb_update(const OptimArgs &a) {
    MomentsFn moments = nullptr;
    ApplyFn apply = nullptr;
    resolve_lamb(a, moments, apply);
    const int64_t n = a.n;
    // segments: [seg[i], seg[i+1]) with the last ending at n
    const int64_t nseg = a.seg ? a.nseg : 1;
    auto seg_begin = [&](int64_t s) { return a.seg ? a.seg[s] : int64_t(0); };
    auto seg_end = [&](int64_t s) { return s + 1 < nseg ? seg_begin(s + 1) : n; };
    const float lr = a.c[6];
    const bool adapt = a.flag[0];

    // Pass 1, per thread over its element range, per segment inside it.
    const int64_t nt_max = fw::get_num_threads();
    std::vector<double> partial(size_t(2 * nseg * nt_max), 0.0);
    auto first_seg = [&](int64_t i) {  // the segment holding element i
        int64_t lo = 0, hi = nseg - 1;
        while (lo < hi) {
            const int64_t mid = (lo + hi + 1) / 2;
            if (seg_begin(mid) <= i) lo = mid;
            else hi = mid - 1;
        }
        return lo;
    };
    parallel_ranges(n, kMinPerThread, 16, [&](int64_t b, int64_t e, int t) {
        double *acc = partial.data() + size_t(2 * nseg * t);
        for (int64_t s = first_seg(b); s < nseg && seg_begin(s) < e; ++s) {
            const int64_t lo = std::max(b, seg_begin(s)), hi = std::min(e, seg_end(s));
            if (lo < hi) moments(a, lo, hi, acc[2 * s], acc[2 * s + 1]);
        }
    }, nt_max);
    // Trust ratios: ||p|| / ||r|| (1 when either is 0 or not finite-positive).
    std::vector<float> scale(size_t(nseg), lr);
    if (adapt) {
        for (int64_t s = 0; s < nseg; ++s) {
            double p2 = 0, r2 = 0;
            for (int64_t t = 0; t < nt_max; ++t) {
                p2 += partial[size_t(2 * nseg * t + 2 * s)];
                r2 += partial[size_t(2 * nseg * t + 2 * s + 1)];
            }
            const double pn = std::sqrt(p2), rn = std::sqrt(r2);
            const double ratio = (pn > 0 && rn > 0) ? pn / rn : 1.0;
            scale[size_t(s)] = float(double(lr) * ratio);
        }
    }
    // Pass 2.
    parallel_ranges(n, kMinPerThread, 16, [&](int64_t b, int64_t e, int) {
        for (int64_t s = first_seg(b); s < nseg && seg_begin(s) < e; ++s) {
            const int64_t lo = std::max(b, seg_begin(s)), hi = std::min(e, seg_end(s));
            if (lo < hi) apply(a, lo, hi, scale[size_t(s)]);
        }
    });
}

}  // namespace

void optim_update(const OptimArgs &a) {
    if (!cpu_supported()) throw std::runtime_error("optimizer kernels need a CPU with AVX2, FMA and F16C");
    if (!optim_dtypes_supported(a.pdt, a.sdt)) throw std::invalid_argument("unsupported param/state dtypes");
    if (a.rule == Rule::lamb) {
        lamb_update(a);
        return;
    }
    const RangeFn fn = resolve_range(a);
    if (!fn) throw std::invalid_argument("unknown optimizer rule");
    parallel_ranges(a.n, kMinPerThread, 16, [&](int64_t b, int64_t e, int) { fn(a, b, e); });
}

}  // namespace fw::fused
