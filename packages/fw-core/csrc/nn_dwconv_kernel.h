// (No include guard: nn_dwconv.cpp includes this file once per ISA region.)
// The depthwise 3x3 NHWC kernel body, included once per ISA by nn_dwconv.cpp inside
// that ISA's `#pragma GCC target` region and namespace, after it defines `V` (the
// vector type and its operations; CHUNK: output columns per chunk: L lanes, load/loadm/store/storem/fma/max/min/set1,
// tail(n): the mask of the first n lanes) and `UR` (outputs kept in registers per tile).
// Everything here is inline code of that region (no standard-library calls).

// act: 0 none, 1 relu, 2 relu6. max(0, v) / min(6, v) with v second: a NaN in v
// passes through (vmaxps/vminps return the second operand when either is NaN).
static inline typename V::vec activate(typename V::vec v, int act) {
    if (act == 0) return v;
    v = V::max(V::set1(0.f), v);
    return act == 2 ? V::min(V::set1(6.f), v) : v;
}

// UR neighbouring outputs of one channel block, every tap inside the input: each input
// vector of a kernel row is loaded once and feeds the (up to 3) outputs that use it.
// Sum order per output: bias, then taps (0,0), (0,1), ... (2,2), as in `edge`.
template <int S, int N, bool M>
static inline void tile(const float *const *r, int64_t iw0, int64_t C, typename V::mask m,
                        const typename V::vec *w, typename V::vec b, float *yp, int act) {
    typename V::vec acc[N];
#pragma GCC unroll 16
    for (int u = 0; u < N; ++u) acc[u] = b;
#pragma GCC unroll 3
    for (int kh = 0; kh < 3; ++kh) {
        if (!r[kh]) continue;
        const float *p = r[kh] + iw0 * C;
#pragma GCC unroll 40
        for (int j = 0; j < (N - 1) * S + 3; ++j) {
            typename V::vec v = M ? V::loadm(p + j * C, m) : V::load(p + j * C);
            // one load per input vector: without this GCC folds the load into each of
            // the (up to 3) FMAs that use it, tripling the loads of the tile
            __asm__("" : "+v"(v));
#pragma GCC unroll 3
            for (int kw = 0; kw < 3; ++kw) {
                const int o = j - kw;
                if (o >= 0 && o % S == 0 && o / S < N) acc[o / S] = V::fma(v, w[kh * 3 + kw], acc[o / S]);
            }
        }
    }
#pragma GCC unroll 16
    for (int u = 0; u < N; ++u) {
        const typename V::vec o = activate(acc[u], act);
        if (M) V::storem(yp + u * C, o, m);
        else V::store(yp + u * C, o);
    }
}

// One output whose window crosses the left or right border: taps outside are skipped
// (zero padding), in the same order as `tile`.
template <bool M>
static inline void edge(const float *const *r, int64_t iw0, int64_t W, int64_t C, typename V::mask m,
                        const typename V::vec *w, typename V::vec b, float *yp, int act) {
    typename V::vec acc = b;
    for (int kh = 0; kh < 3; ++kh) {
        if (!r[kh]) continue;
        for (int kw = 0; kw < 3; ++kw) {
            const int64_t iw = iw0 + kw;
            if (iw < 0 || iw >= W) continue;
            const float *p = r[kh] + iw * C;
            acc = V::fma(M ? V::loadm(p, m) : V::load(p), w[kh * 3 + kw], acc);
        }
    }
    acc = activate(acc, act);
    if (M) V::storem(yp, acc, m);
    else V::store(yp, acc);
}

// Output columns [ow0, ow1) of one channel block; of those, [ow_lo, ow_hi) have all
// three taps inside the row: tiles of UR, then single outputs; the others are `edge`s.
template <int S, bool M>
static inline void row_block(const DwArgs &a, const float *const *r, float *yrow, int64_t c0,
                             typename V::mask m, int64_t ow0, int64_t ow1, int64_t ow_lo, int64_t ow_hi) {
    const int64_t C = a.C;
    typename V::vec w[9];
#pragma GCC unroll 9
    for (int k = 0; k < 9; ++k) w[k] = M ? V::loadm(a.w + k * C + c0, m) : V::load(a.w + k * C + c0);
    const typename V::vec b =
        a.b ? (M ? V::loadm(a.b + c0, m) : V::load(a.b + c0)) : V::set1(0.f);
    const float *rc[3] = {r[0] ? r[0] + c0 : nullptr, r[1] ? r[1] + c0 : nullptr,
                          r[2] ? r[2] + c0 : nullptr};
    float *yc = yrow + c0;
    const int64_t lo = ow_lo > ow1 ? ow1 : ow_lo < ow0 ? ow0 : ow_lo;
    const int64_t hi = ow_hi > ow1 ? ow1 : ow_hi < lo ? lo : ow_hi;
    int64_t ow = ow0;
    for (; ow < lo; ++ow) edge<M>(rc, ow * S - a.pl, a.W, C, m, w, b, yc + ow * C, a.act);
    for (; ow + UR <= hi; ow += UR) tile<S, UR, M>(rc, ow * S - a.pl, C, m, w, b, yc + ow * C, a.act);
    for (; ow < hi; ++ow) tile<S, 1, M>(rc, ow * S - a.pl, C, m, w, b, yc + ow * C, a.act);
    for (; ow < ow1; ++ow) edge<M>(rc, ow * S - a.pl, a.W, C, m, w, b, yc + ow * C, a.act);
}

// Output rows t0 .. t1 - 1 of the flattened [N * OH] rows.
template <int S>
static void rows_s(const DwArgs &a, int64_t t0, int64_t t1) {
    const int64_t C = a.C;
    // interior columns: ow * S - pl >= 0 and ow * S - pl + 2 <= W - 1
    // (plain comparisons: no standard-library template is instantiated in this region)
    const int64_t lo = (a.pl + S - 1) / S, last = a.W - 3 + a.pl;  // ow * S <= last
    const int64_t ow_lo = lo < a.OW ? lo : a.OW;
    int64_t ow_hi = last < 0 ? ow_lo : last / S + 1;
    if (ow_hi > a.OW) ow_hi = a.OW;
    if (ow_hi < ow_lo) ow_hi = ow_lo;
    for (int64_t t = t0; t < t1; ++t) {
        const int64_t n = t / a.OH, oh = t % a.OH;
        const float *r[3];
        for (int kh = 0; kh < 3; ++kh) {
            const int64_t ih = oh * a.sh - a.pt + kh;
            r[kh] = ih >= 0 && ih < a.H ? a.x + ((n * a.H + ih) * a.W) * C : nullptr;
        }
        float *yrow = a.y + ((n * a.OH + oh) * a.OW) * C;
        // Chunks of CHUNK output columns, every channel block of a chunk before the next
        // chunk: the input is walked nearly in memory order (which the prefetchers follow)
        // while a block's weights stay in registers for a chunk. A narrow row is one chunk.
        for (int64_t ow0 = 0; ow0 < a.OW; ow0 += CHUNK) {
            const int64_t ow1 = ow0 + CHUNK < a.OW ? ow0 + CHUNK : a.OW;
            int64_t c0 = 0;
            for (; c0 + V::L <= C; c0 += V::L)
                row_block<S, false>(a, r, yrow, c0, V::tail(V::L), ow0, ow1, ow_lo, ow_hi);
            if (c0 < C) row_block<S, true>(a, r, yrow, c0, V::tail(int(C - c0)), ow0, ow1, ow_lo, ow_hi);
        }
    }
}

static void rows(const DwArgs &a, int64_t t0, int64_t t1) {
    if (a.sw == 1) rows_s<1>(a, t0, t1);
    else rows_s<2>(a, t0, t1);
}
