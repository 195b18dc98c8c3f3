// The vector body of the small-channel direct convolution (nn_conv_small.cpp), included
// there once per instruction set (no include guard: that is the point) between `#pragma GCC push_options` / `target(...)` and
// `pop_options`, with the macros below defined for that set. Only intrinsics and plain
// loops here (no standard-library inline code gets instantiated for the wider target;
// see fused_simd.hpp).
//
// FW_SC_NS            namespace of this instantiation
// VF, VI, V           float / int32 vector types, lanes
// LOADU, STOREU, LOADI, FMA, MAXV, MINV, SETV, PERM(idx, v), STORE_N(ptr, v, n)

namespace FW_SC_NS {

// y = act(v): 0 none, 1 relu, 2 relu6. max/min put the accumulator second, so a NaN
// accumulator is what comes out (the instructions return their second operand then).
static inline VF activate(VF v, int act) {
    if (act == 0) return v;
    v = MAXV(SETV(0.0f), v);
    return act == 2 ? MINV(SETV(6.0f), v) : v;
}

// NB consecutive vectors of R (1 or 2) adjacent output rows, starting at element j0 (a
// multiple of V) of the row [OW * O], whose weight pattern starts at woff0 (j0 mod P):
// every tap (kh, ci, kw) is one unaligned load of the replicated input row, shifted by
// kw output pixels, times the tap's weight pattern (loaded once for the R rows). The
// replicated rows include the zero rows of the vertical padding, so no tap is skipped.
template <int NB, int R>
static inline void row_blocks(const Plan &p, const float *rep, const float *wpat, const float *bpat,
                              float *yrow, int64_t oh, int64_t j0, int64_t woff0, int64_t L) {
    int64_t woff[NB];
    for (int b = 0, w = int(woff0); b < NB; ++b) {
        woff[b] = w;
        w += V;
        if (w >= p.P) w -= int(p.P);
    }
    VF acc[R][NB];
    for (int b = 0; b < NB; ++b) {
        acc[0][b] = LOADU(bpat + woff[b]);
        if (R == 2) acc[R - 1][b] = acc[0][b];
    }
    const int64_t step = p.dw * p.O, row = p.C * p.rep_len;
    for (int64_t kh = 0; kh < p.KH; ++kh) {
        const float *r0 = rep + (oh + kh * p.dh) * row + j0;
        for (int64_t ci = 0; ci < p.C; ++ci, r0 += p.rep_len) {
            const float *wp = wpat + (ci * p.KH + kh) * p.KW * p.P;
            for (int64_t kw = 0; kw < p.KW; ++kw) {
                const float *rk = r0 + kw * step, *wk = wp + kw * p.P;
                for (int b = 0; b < NB; ++b) {
                    const VF wv = LOADU(wk + woff[b]);
                    acc[0][b] = FMA(LOADU(rk + b * V), wv, acc[0][b]);
                    if (R == 2) acc[R - 1][b] = FMA(LOADU(rk + row + b * V), wv, acc[R - 1][b]);
                }
            }
        }
    }
    for (int r = 0; r < R; ++r)
        for (int b = 0; b < NB; ++b) {
            const int64_t j = j0 + int64_t(b) * V;
            const VF v = activate(acc[r][b], p.act);
            if (j + V <= L) STOREU(yrow + r * L + j, v);
            else STORE_N(yrow + r * L + j, v, int(L - j));
        }
}

// The same sums for kernels of KH = 3 or 5 rows at dilation 1, R output rows at a time:
// per tap column kw the KH x NB weight vectors stay in registers, and each replicated
// input row vector loaded serves up to KH output rows (about 0.6 loads per FMA, against
// 1.5 in row_blocks: the loads, not the FMAs, bound that one).
template <int NB, int R, int KH>
static inline void row_tile(const Plan &p, const float *rep, const float *wpat, const float *bpat,
                            float *yrow, int64_t oh, int64_t j0, int64_t woff0, int64_t L) {
    int64_t woff[NB];
    for (int b = 0, w = int(woff0); b < NB; ++b) {
        woff[b] = w;
        w += V;
        if (w >= p.P) w -= int(p.P);
    }
    VF acc[R][NB];
    for (int b = 0; b < NB; ++b) {
        const VF bv = LOADU(bpat + woff[b]);
        for (int r = 0; r < R; ++r) acc[r][b] = bv;
    }
    const int64_t step = p.O, row = p.C * p.rep_len;
    for (int64_t ci = 0; ci < p.C; ++ci) {
        const float *rbase = rep + oh * row + ci * p.rep_len + j0;
        const float *wci = wpat + ci * KH * p.KW * p.P;
        for (int64_t kw = 0; kw < p.KW; ++kw) {
            VF wv[KH][NB];
            for (int kh = 0; kh < KH; ++kh)
                for (int b = 0; b < NB; ++b) wv[kh][b] = LOADU(wci + (kh * p.KW + kw) * p.P + woff[b]);
            const float *rk = rbase + kw * step;
            for (int s = 0; s < R + KH - 1; ++s) {
                VF xv[NB];
                for (int b = 0; b < NB; ++b) {
                    xv[b] = LOADU(rk + s * row + b * V);
                    // keep it in a register: the compiler otherwise folds the load into
                    // each of the KH FMAs that use it (KH loads instead of one)
                    __asm__("" : "+v"(xv[b]));
                }
                for (int kh = 0; kh < KH; ++kh) {
                    const int r = s - kh;
                    if (r < 0 || r >= R) continue;
                    for (int b = 0; b < NB; ++b) acc[r][b] = FMA(xv[b], wv[kh][b], acc[r][b]);
                }
            }
        }
    }
    const int64_t rows = p.OH - oh < R ? p.OH - oh : R;
    for (int r = 0; r < R; ++r) {
        if (r >= rows) break;
        for (int b = 0; b < NB; ++b) {
            const int64_t j = j0 + int64_t(b) * V;
            const VF v = activate(acc[r][b], p.act);
            if (j + V <= L) STOREU(yrow + r * L + j, v);
            else STORE_N(yrow + r * L + j, v, int(L - j));
        }
    }
}

template <int R, int KH>
static void image_tiled(const Plan &p, const float *rep, const float *wpat, const float *bpat, int64_t n) {
    const int64_t L = p.OW * p.O, nv = (L + V - 1) / V;
    for (int64_t oh = 0; oh < p.OH; oh += R) {
        float *yrow = p.y + (n * p.OH + oh) * L;
        int64_t vb = 0, woff = 0;
        for (; vb + 2 <= nv; vb += 2) {
            row_tile<2, R, KH>(p, rep, wpat, bpat, yrow, oh, vb * V, woff, L);
            woff = (woff + 2 * V) % p.P;
        }
        if (vb < nv) row_tile<1, R, KH>(p, rep, wpat, bpat, yrow, oh, vb * V, woff, L);
    }
}

template <int R>
static inline void rows_chunk(int nb, const Plan &p, const float *rep, const float *wpat, const float *bpat,
                              float *yrow, int64_t oh, int64_t j0, int64_t woff0, int64_t L) {
    switch (nb) {
        case 1: return row_blocks<1, R>(p, rep, wpat, bpat, yrow, oh, j0, woff0, L);
        case 2: return row_blocks<2, R>(p, rep, wpat, bpat, yrow, oh, j0, woff0, L);
        case 3: return row_blocks<3, R>(p, rep, wpat, bpat, yrow, oh, j0, woff0, L);
        case 4: return row_blocks<4, R>(p, rep, wpat, bpat, yrow, oh, j0, woff0, L);
        case 5: return row_blocks<5, R>(p, rep, wpat, bpat, yrow, oh, j0, woff0, L);
        default: return row_blocks<6, R>(p, rep, wpat, bpat, yrow, oh, j0, woff0, L);
    }
}

// One image: replicate each (padded) input row's channel ci into rep (element x * O + co
// = padded input pixel x's channel ci, for every co), one permute per vector, then the
// output rows two at a time, each in chunks of at most 6 vectors (12 accumulators).
static void image(const Plan &p, const float *wpat, const float *bpat, const int32_t *idx, float *padrow,
                  float *rep, int64_t n) {
    const float *xn = p.x + n * p.H * p.W * p.C;
    const int64_t row = p.C * p.rep_len, Hp = p.H + p.pt + p.pb;
    for (int64_t i = 0; i < p.H * p.pad_len; ++i) padrow[i] = 0.0f;
    for (int64_t i = 0; i < p.pt * row; ++i) rep[i] = 0.0f;
    for (int64_t i = (p.pt + p.H) * row; i < (Hp + kTileSlackRows) * row; ++i) rep[i] = 0.0f;
    const int64_t dq = V / p.O, dr = V % p.O;
    // The image's rows, zero-padded, all copied before the first wide load reads them
    // (a 64-byte load over bytes stored just before by narrower stores cannot be
    // forwarded and stalls: that cost a third of the time when each row was copied
    // right before its use).
    for (int64_t ih = 0; ih < p.H; ++ih) {
        const float *src = xn + ih * p.W * p.C;
        float *dst = padrow + ih * p.pad_len + p.pl * p.C;
        for (int64_t i = 0; i < p.W * p.C; ++i) dst[i] = src[i];
    }
    for (int64_t ih = 0; ih < p.H; ++ih) {
        const float *prow = padrow + ih * p.pad_len;
        for (int64_t ci = 0; ci < p.C; ++ci) {
            float *rr = rep + (p.pt + ih) * row + ci * p.rep_len;
            int64_t p0 = 0, ph = 0;  // pixel and channel phase of element j0
            for (int64_t j0 = 0; j0 < p.rep_len; j0 += V) {
                STOREU(rr + j0, PERM(LOADI(idx + ph * V), LOADU(prow + p0 * p.C + ci)));
                p0 += dq;
                ph += dr;
                if (ph >= p.O) {
                    ph -= p.O;
                    ++p0;
                }
            }
        }
    }
    if (p.dh == 1 && p.KH == 3) return image_tiled<6, 3>(p, rep, wpat, bpat, n);
    if (p.dh == 1 && p.KH == 5) return image_tiled<4, 5>(p, rep, wpat, bpat, n);
    const int64_t L = p.OW * p.O, nv = (L + V - 1) / V;
    const int64_t chunks = (nv + 5) / 6, base = nv / chunks, extra = nv % chunks;
    for (int64_t oh = 0; oh < p.OH; oh += 2) {
        float *yrow = p.y + (n * p.OH + oh) * L;
        int64_t vb = 0, woff = 0;
        for (int64_t c = 0; c < chunks; ++c) {
            const int nb = int(base + (c < extra ? 1 : 0));
            if (oh + 1 < p.OH) rows_chunk<2>(nb, p, rep, wpat, bpat, yrow, oh, vb * V, woff, L);
            else rows_chunk<1>(nb, p, rep, wpat, bpat, yrow, oh, vb * V, woff, L);
            vb += nb;
            woff = (woff + int64_t(nb) * V) % p.P;
        }
    }
}

}  // namespace FW_SC_NS
