// Image and box kernels for fw.vision; see image.hpp for the contract. Every loop here
// mirrors a NumPy expression of fw.vision's reference implementation, named in the
// comments, in the same precision and evaluation order.
#include "image.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <type_traits>

namespace fw::image {

// ------------------------------------------------------------------------- nms
// ops/_iou.py: pairwise_iou (float64) and greedy_keep (eta = 1).
std::vector<int64_t> nms_greedy(const double *b, int64_t n, double threshold, double off,
                                const int64_t *cats) {
    std::vector<double> area(size_t(n > 0 ? n : 0));
    for (int64_t i = 0; i < n; ++i) {
        const double *x = b + 4 * i;
        const bool bad = x[2] < x[0] || x[3] < x[1];
        area[size_t(i)] = bad ? 0.0 : (x[2] - x[0] + off) * (x[3] - x[1] + off);
    }
    auto overlap = [off](double alo, double ahi, double blo, double bhi) {
        double d = std::min(ahi, bhi);
        d -= std::max(alo, blo);
        // boxes apart in raw coordinates do not overlap, whatever `off` adds
        return d < 0 ? 0.0 : d + off;
    };
    std::vector<char> alive(size_t(n > 0 ? n : 0), 1);
    std::vector<int64_t> keep;
    for (int64_t i = 0; i < n; ++i) {
        if (!alive[size_t(i)]) continue;
        keep.push_back(i);
        const double *a = b + 4 * i;
        for (int64_t j = i + 1; j < n; ++j) {
            if (!alive[size_t(j)] || (cats && cats[j] != cats[i])) continue;
            const double *o = b + 4 * j;
            double inter = overlap(a[0], a[2], o[0], o[2]);
            // no overlap: IoU 0 (or 0/0 -> 0) suppresses nothing at a threshold >= 0
            if (inter == 0.0 && threshold >= 0) continue;
            inter *= overlap(a[1], a[3], o[1], o[3]);
            double uni = area[size_t(i)] + area[size_t(j)];
            uni -= inter;
            const double iou = uni > 0 ? inter / uni : 0.0;
            if (iou > threshold) alive[size_t(j)] = 0;  // NaN never suppresses
        }
    }
    return keep;
}

// ---------------------------------------------------------------------- resize
namespace {

// std::floor / std::nearbyint compile to library calls on baseline x86-64 (no SSE4.1
// roundss); these inline forms give the same results. Below 2**22 in magnitude,
// adding and subtracting 1.5 * 2**23 rounds to an integer in the current (default:
// nearest, ties to even) mode, like nearbyint; larger values take the library call.
inline float rint_f(float v) {
    if (!(std::fabs(v) < 4194304.f)) return std::nearbyint(v);
    const float t = v + 12582912.f;  // not folded: without -ffast-math this is no identity
    return t - 12582912.f;
}

inline float floor_f(float v) {
    if (!(std::fabs(v) < 4194304.f)) return std::floor(v);
    const float t = float(int32_t(v));  // truncation toward zero
    return t > v ? t - 1.f : t;
}

inline uint8_t sat_round_u8(float v) {
    // np.clip(np.rint(v), 0, 255): round half to even (the default rounding mode)
    const float r = rint_f(v);
    return uint8_t(r < 0.f ? 0.f : r > 255.f ? 255.f : r);
}

// _cv_resize._apply twice with float32 accumulation: out = t0; out = out + t_k ...
// One horizontal pass, channels fixed at compile time (C > 0) or not (C == 0): per
// output element acc = v0 * w0, then acc = acc + v_k * w_k, as _apply does.
template <int C, class T, class W, class A>
void horizontal(const T *img, int64_t h, int64_t w, int64_t c_rt, const Taps &tx, A *tmp) {
    const int64_t c = C > 0 ? C : c_rt, ow = tx.dst;
    const auto *wx = static_cast<const W *>(tx.w);
    for (int64_t y = 0; y < h; ++y) {
        const T *row = img + y * w * c;
        A *trow = tmp + y * ow * c;
        for (int64_t x = 0; x < ow; ++x) {
            const int64_t *ix = tx.idx + x * tx.k;
            const W *iw = wx + x * tx.k;
            A *o = trow + x * c;
            {
                const T *p = row + ix[0] * c;
                const W w0 = iw[0];
                for (int64_t ch = 0; ch < c; ++ch) o[ch] = A(p[ch]) * w0;
            }
            for (int64_t k = 1; k < tx.k; ++k) {
                const T *p = row + ix[k] * c;
                const W wk = iw[k];
                for (int64_t ch = 0; ch < c; ++ch) o[ch] = o[ch] + A(p[ch]) * wk;
            }
        }
    }
}

template <class T, class W, class A>
void horizontal_any(const T *img, int64_t h, int64_t w, int64_t c, const Taps &tx, A *tmp) {
    switch (c) {
        case 1: horizontal<1, T, W, A>(img, h, w, c, tx, tmp); break;
        case 3: horizontal<3, T, W, A>(img, h, w, c, tx, tmp); break;
        case 4: horizontal<4, T, W, A>(img, h, w, c, tx, tmp); break;
        default: horizontal<0, T, W, A>(img, h, w, c, tx, tmp);
    }
}

// _cv_resize._apply twice with float32 accumulation: out = t0; out = out + t_k ...
template <class T>
void resize_float(const T *img, int64_t h, int64_t w, int64_t c, const Taps &ty, const Taps &tx,
                  T *out) {
    const int64_t ow = tx.dst, oh = ty.dst;
    const auto *wy = static_cast<const float *>(ty.w);
    std::unique_ptr<float[]> tmp(new float[size_t(h * ow * c)]);
    horizontal_any<T, float, float>(img, h, w, c, tx, tmp.get());
    const int64_t rl = ow * c;
    std::unique_ptr<float[]> acc(new float[size_t(rl)]);
    for (int64_t y = 0; y < oh; ++y) {
        const int64_t *iy = ty.idx + y * ty.k;
        const float *iw = wy + y * ty.k;
        const float *r0 = tmp.get() + iy[0] * rl;
        for (int64_t i = 0; i < rl; ++i) acc[size_t(i)] = r0[i] * iw[0];
        for (int64_t k = 1; k < ty.k; ++k) {
            const float *rk = tmp.get() + iy[k] * rl;
            const float wk = iw[k];
            for (int64_t i = 0; i < rl; ++i) acc[size_t(i)] = acc[size_t(i)] + rk[i] * wk;
        }
        T *orow = out + y * rl;
        if constexpr (std::is_same_v<T, uint8_t>) {
            for (int64_t i = 0; i < rl; ++i) orow[i] = sat_round_u8(acc[size_t(i)]);
        } else {
            for (int64_t i = 0; i < rl; ++i) orow[i] = acc[size_t(i)];
        }
    }
}

// _cv_resize._resize_u8: int32 horizontal sums of weights scaled by 2048, then either the
// bilinear vector path's shifts or 64-bit vertical sums.
void resize_u8_fixed(const uint8_t *img, int64_t h, int64_t w, int64_t c, const Taps &ty,
                     const Taps &tx, bool linear, uint8_t *out) {
    const int64_t ow = tx.dst, oh = ty.dst, rl = ow * c;
    const auto *wy = static_cast<const int32_t *>(ty.w);
    std::unique_ptr<int32_t[]> tmp(new int32_t[size_t(h * rl)]);
    // int32 sums, as NumPy's int32 products and sums (|sum| < 255 * 2048 * 8)
    horizontal_any<uint8_t, int32_t, int32_t>(img, h, w, c, tx, tmp.get());
    std::unique_ptr<int64_t[]> acc(new int64_t[size_t(rl)]);
    std::unique_ptr<int32_t[]> acc32(new int32_t[size_t(rl)]);
    for (int64_t y = 0; y < oh; ++y) {
        const int64_t *iy = ty.idx + y * ty.k;
        const int32_t *iw = wy + y * ty.k;
        uint8_t *orow = out + y * rl;
        if (linear) {
            // the vector path: sum of ((S_k >> 4) * b_k) >> 16, then (x + 2) >> 2
            std::fill(acc32.get(), acc32.get() + rl, 0);
            for (int64_t k = 0; k < ty.k; ++k) {
                const int32_t *r = tmp.get() + iy[k] * rl;
                const int32_t wk = iw[k];
                for (int64_t i = 0; i < rl; ++i) acc32[size_t(i)] += ((r[i] >> 4) * wk) >> 16;
            }
            for (int64_t i = 0; i < rl; ++i) {
                const int32_t v = (acc32[size_t(i)] + 2) >> 2;
                orow[i] = uint8_t(v < 0 ? 0 : v > 255 ? 255 : v);
            }
        } else {
            std::fill(acc.get(), acc.get() + rl, 0);
            for (int64_t k = 0; k < ty.k; ++k) {
                const int32_t *r = tmp.get() + iy[k] * rl;
                const int64_t wk = iw[k];
                for (int64_t i = 0; i < rl; ++i) acc[size_t(i)] += int64_t(r[i]) * wk;
            }
            for (int64_t i = 0; i < rl; ++i) {
                const int64_t v = (acc[size_t(i)] + (int64_t(1) << 21)) >> 22;
                orow[i] = uint8_t(v < 0 ? 0 : v > 255 ? 255 : v);
            }
        }
    }
}

}  // namespace

void resize_taps(const void *img, PixType t, int64_t h, int64_t w, int64_t c, const Taps &ty,
                 const Taps &tx, ResizeMode mode, void *out) {
    if (mode == ResizeMode::floating) {
        if (t == PixType::u8)
            resize_float(static_cast<const uint8_t *>(img), h, w, c, ty, tx, static_cast<uint8_t *>(out));
        else
            resize_float(static_cast<const float *>(img), h, w, c, ty, tx, static_cast<float *>(out));
        return;
    }
    resize_u8_fixed(static_cast<const uint8_t *>(img), h, w, c, ty, tx, mode == ResizeMode::u8_linear,
                    static_cast<uint8_t *>(out));
}

void resize_nearest(const uint8_t *img, int64_t w, int64_t bytes, const int64_t *iy, int64_t oh,
                    const int64_t *ix, int64_t ow, uint8_t *out) {
    for (int64_t y = 0; y < oh; ++y) {
        const uint8_t *row = img + iy[y] * w * bytes;
        uint8_t *orow = out + y * ow * bytes;
        for (int64_t x = 0; x < ow; ++x) std::memcpy(orow + x * bytes, row + ix[x] * bytes, size_t(bytes));
    }
}

// ------------------------------------------------------------------------ warp
namespace {

// _cv_warp._cubic, float32
inline void cubic(float x, float c[4]) {
    const float a = -0.75f;
    c[0] = ((a * (x + 1.f) - 5.f * a) * (x + 1.f) + 8.f * a) * (x + 1.f) - 4.f * a;
    c[1] = ((a + 2.f) * x - (a + 3.f)) * x * x + 1.f;
    c[2] = ((a + 2.f) * (1.f - x) - (a + 3.f)) * (1.f - x) * (1.f - x) + 1.f;
    c[3] = 1.f - c[0] - c[1] - c[2];
}

// Channels fixed at compile time (C > 0) or not (C == 0).
template <int C, class T>
void warp_t(const T *img, int64_t h, int64_t w, int64_t c_rt, bool affine, const double *inv,
            const float *f, Interp interp, const double *border, T *out, int64_t oh, int64_t ow) {
    const int64_t c = C > 0 ? C : c_rt;
    std::vector<float> bord(static_cast<size_t>(c));
    for (int64_t ch = 0; ch < c; ++ch) bord[size_t(ch)] = float(border[ch]);
    std::vector<T> bord_t(static_cast<size_t>(c));
    for (int64_t ch = 0; ch < c; ++ch) {
        if constexpr (std::is_same_v<T, uint8_t>) {
            const float v = bord[size_t(ch)];  // astype(uint8) truncates
            bord_t[size_t(ch)] = uint8_t(v < 0.f ? 0.f : v > 255.f ? 255.f : v);
        } else {
            bord_t[size_t(ch)] = bord[size_t(ch)];
        }
    }
    // _remap: coordinates clipped to +-(w + h + 8) so they stay in int range
    const float big = float(w + h + 8);
    std::vector<float> acc_v(static_cast<size_t>(c));
    float *acc = acc_v.data();
    const int n_taps = interp == Interp::bilinear ? 2 : 4;
    const int first = interp == Interp::bilinear ? 0 : -1;
    const int64_t row_stride = w * c;
    for (int64_t y = 0; y < oh; ++y) {
        for (int64_t x = 0; x < ow; ++x) {
            float xs, ys;
            if (affine) {
                // warp_affine_inverse: float64 map, rounded to float32
                const double xd = double(x), yd = double(y);
                xs = float(inv[0] * xd + inv[1] * yd + inv[2]);
                ys = float(inv[3] * xd + inv[4] * yd + inv[5]);
            } else {
                // warp_perspective: float32 map; a point at infinity samples the border
                const float xf = float(x), yf = float(y);
                const float X = f[0] * xf + f[1] * yf + f[2];
                const float Y = f[3] * xf + f[4] * yf + f[5];
                const float W = f[6] * xf + f[7] * yf + f[8];
                xs = W != 0.f ? X / W : -1e9f;
                ys = W != 0.f ? Y / W : -1e9f;
            }
            if (std::isnan(xs)) xs = -big;
            if (std::isnan(ys)) ys = -big;
            xs = std::min(std::max(xs, -big), big);
            ys = std::min(std::max(ys, -big), big);
            T *o = out + (y * ow + x) * c;
            if (interp == Interp::nearest) {
                const int64_t ix = int64_t(rint_f(xs)), iy = int64_t(rint_f(ys));
                const T *src = (ix >= 0 && ix < w && iy >= 0 && iy < h) ? img + iy * row_stride + ix * c : bord_t.data();
                for (int64_t ch = 0; ch < c; ++ch) o[ch] = src[ch];
                continue;
            }
            const float x0f = floor_f(xs), y0f = floor_f(ys);
            const float fx = xs - x0f, fy = ys - y0f;
            const int64_t x0 = int64_t(x0f) + first, y0 = int64_t(y0f) + first;
            float wx[4], wy[4];
            if (interp == Interp::bilinear) {
                wx[0] = 1.f - fx, wx[1] = fx, wy[0] = 1.f - fy, wy[1] = fy;
            } else {
                cubic(fx, wx);
                cubic(fy, wy);
            }
            for (int64_t ch = 0; ch < c; ++ch) acc[ch] = 0.f;
            if (x0 >= 0 && y0 >= 0 && x0 + n_taps <= w && y0 + n_taps <= h) {
                // every tap inside the image (the common case): no border tests
                const T *base = img + y0 * row_stride + x0 * c;
                for (int j = 0; j < n_taps; ++j) {
                    const T *rp = base + j * row_stride;
                    for (int i = 0; i < n_taps; ++i) {
                        const float wgt = wx[i] * wy[j];
                        const T *src = rp + i * c;
                        for (int64_t ch = 0; ch < c; ++ch) acc[ch] = acc[ch] + float(src[ch]) * wgt;
                    }
                }
            } else {
                for (int j = 0; j < n_taps; ++j) {
                    const int64_t py = y0 + j;
                    const bool row_in = py >= 0 && py < h;
                    for (int i = 0; i < n_taps; ++i) {
                        const int64_t px = x0 + i;
                        const float wgt = wx[i] * wy[j];
                        const bool in = row_in && px >= 0 && px < w;
                        for (int64_t ch = 0; ch < c; ++ch)
                            acc[ch] = acc[ch] + (in ? float(img[py * row_stride + px * c + ch]) : bord[size_t(ch)]) * wgt;
                    }
                }
            }
            if constexpr (std::is_same_v<T, uint8_t>) {
                for (int64_t ch = 0; ch < c; ++ch) o[ch] = sat_round_u8(acc[ch]);
            } else {
                for (int64_t ch = 0; ch < c; ++ch) o[ch] = acc[ch];
            }
        }
    }
}

template <class T>
void warp_any(const T *img, int64_t h, int64_t w, int64_t c, bool affine, const double *inv,
              const float *f, Interp interp, const double *border, T *out, int64_t oh, int64_t ow) {
    switch (c) {
        case 1: warp_t<1>(img, h, w, c, affine, inv, f, interp, border, out, oh, ow); break;
        case 3: warp_t<3>(img, h, w, c, affine, inv, f, interp, border, out, oh, ow); break;
        case 4: warp_t<4>(img, h, w, c, affine, inv, f, interp, border, out, oh, ow); break;
        default: warp_t<0>(img, h, w, c, affine, inv, f, interp, border, out, oh, ow);
    }
}

}  // namespace

void warp(const void *img, PixType t, int64_t h, int64_t w, int64_t c, bool affine,
          const double *inv, const float *inv_f, Interp interp, const double *border, void *out,
          int64_t oh, int64_t ow) {
    if (t == PixType::u8)
        warp_any(static_cast<const uint8_t *>(img), h, w, c, affine, inv, inv_f, interp, border,
               static_cast<uint8_t *>(out), oh, ow);
    else
        warp_any(static_cast<const float *>(img), h, w, c, affine, inv, inv_f, interp, border,
               static_cast<float *>(out), oh, ow);
}

// ----------------------------------------------------------------------- colour
namespace {

// _cv_color._SDIV and _HDIV_FULL: 12-bit fixed-point division tables
struct HsvTables {
    int32_t sdiv[256], hdiv[256];
    HsvTables() {
        sdiv[0] = hdiv[0] = 0;
        for (int i = 1; i < 256; ++i) {
            sdiv[i] = int32_t(std::nearbyint(double(255 << 12) / double(i)));
            hdiv[i] = int32_t(std::nearbyint(double(256 << 12) / (6.0 * double(i))));
        }
    }
};

const HsvTables &hsv_tables() {
    static const HsvTables t;  // thread-safe initialisation
    return t;
}

}  // namespace

void hue_shift(const uint8_t *img, int64_t n, int delta, uint8_t *out) {
    const HsvTables &t = hsv_tables();
    static const int sectors[6][3] = {{1, 3, 0}, {1, 0, 2}, {3, 0, 1}, {0, 2, 1}, {0, 1, 3}, {2, 1, 0}};
    const float kh = float(6.0 / 255), ks = float(1.0 / 255);
    for (int64_t p = 0; p < n; ++p) {
        const uint8_t *px = img + 3 * p;
        // bgr_to_hsv_full
        const int32_t b = px[0], g = px[1], r = px[2];
        const int32_t v = std::max(std::max(b, g), r), vmin = std::min(std::min(b, g), r);
        const int32_t diff = v - vmin;
        const bool vr = v == r, vg = v == g && !vr;
        const int32_t s = (diff * t.sdiv[v] + (1 << 11)) >> 12;
        int32_t h = vr ? g - b : vg ? b - r + 2 * diff : r - g + 4 * diff;
        h = (h * t.hdiv[diff] + (1 << 11)) >> 12;
        if (h < 0) h += 256;
        // adjust_hue: (h + delta) % 256 of the uint8 hue
        int32_t hh = (int32_t(uint8_t(h)) + delta) % 256;
        if (hh < 0) hh += 256;
        // hsv_full_to_bgr, float32
        float hf = float(hh) * kh;
        const float sf = float(uint8_t(s)) * ks, vf = float(uint8_t(v)) * ks;
        int64_t sector = int64_t(floor_f(hf));
        hf = hf - float(sector);
        if (sector < 0 || sector >= 6) sector = 0, hf = 0.f;
        const float tab[4] = {vf, vf * (1.f - sf), vf * (1.f - sf * hf), vf * (1.f - sf * (1.f - hf))};
        uint8_t *o = out + 3 * p;
        for (int k = 0; k < 3; ++k) {
            const float x = sf == 0.f ? vf : tab[sectors[sector][k]];
            o[k] = sat_round_u8(x * 255.f);
        }
    }
}

}  // namespace fw::image
