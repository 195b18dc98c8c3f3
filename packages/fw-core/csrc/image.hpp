// Image and box kernels for fw.vision (reached through fw.core.internal.image_kernels()):
// greedy non-maximum suppression, separable tap-table resize and affine / perspective
// warps of HWC images. Plain single-threaded C++: DataLoader workers are forked
// processes, and a GNU OpenMP pool does not survive fork(), so these never start one;
// they hold no state, so any number of Python threads may call them at once (the
// bindings release the GIL).
//
// The numerics are fw.vision's NumPy reference (fw/vision/transforms/_cv_resize.py,
// _cv_warp.py and ops/_iou.py) operation for operation, in the same precision and
// order, so results are bit-identical to it (the build keeps -ffp-contract=off, the
// ISO C++ default of GCC: no fused multiply-adds).
#pragma once

#include <cstdint>
#include <vector>

namespace fw::image {

// Greedy NMS over n boxes (x1, y1, x2, y2) already in priority order: box i is kept
// unless a kept box before it (of the same category, when `cats` is given) has IoU
// above `threshold` with it. `off` is 0 (normalized) or 1 (inclusive pixel widths).
// Returns the kept positions, ascending.
std::vector<int64_t> nms_greedy(const double *boxes, int64_t n, double threshold, double off,
                                const int64_t *cats);

// Pixel types the resize and warp kernels take.
enum class PixType { u8, f32 };

// Resize mode: float accumulation (OpenCV's float path, also uint8 area downscaling),
// uint8 fixed point with the bilinear vector path's shifts, or uint8 fixed point with
// 64-bit sums (bicubic, Lanczos).
enum class ResizeMode { floating, u8_linear, u8_wide };

struct Taps {
    const int64_t *idx;  // [dst, k] source indices (already clipped into range)
    const void *w;       // [dst, k] float32 weights (floating) or int32 (fixed point)
    int64_t dst, k;
};

// out[oh, ow, c] from img[h, w, c]: horizontal pass with `tx`, then vertical with `ty`.
void resize_taps(const void *img, PixType t, int64_t h, int64_t w, int64_t c, const Taps &ty,
                 const Taps &tx, ResizeMode mode, void *out);

// Nearest resize: out[y, x] = img[iy[y], ix[x]], `bytes` per pixel.
void resize_nearest(const uint8_t *img, int64_t w, int64_t bytes, const int64_t *iy, int64_t oh,
                    const int64_t *ix, int64_t ow, uint8_t *out);

enum class Interp { nearest, bilinear, bicubic };

// Warp with a constant border. `affine`: `inv` holds the 2x3 double matrix mapping
// output pixels to input ones; otherwise `inv_f` holds the 3x3 float32 inverse homography.
void warp(const void *img, PixType t, int64_t h, int64_t w, int64_t c, bool affine,
          const double *inv, const float *inv_f, Interp interp, const double *border, void *out,
          int64_t oh, int64_t ow);

// fw.vision's cv2-backend hue adjustment of a uint8 BGR image [n, 3] (_cv_color.py and
// functional_cv2.adjust_hue): the 8-bit HSV_FULL round trip with `delta` added to the
// hue (mod 256). (Saturation stays in NumPy: its four vectorized passes beat a scalar
// loop over interleaved channels.)
void hue_shift(const uint8_t *img, int64_t n, int delta, uint8_t *out);

}  // namespace fw::image
