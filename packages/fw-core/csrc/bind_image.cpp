// Bindings of the image kernel family (image.hpp): image_nms, image_resize,
// image_resize_nearest, image_warp, image_color. fw.vision reaches them through
// fw.core.internal.image_kernels(); it builds the tap tables and matrices (the NumPy
// reference's own helpers), these functions check everything memory safety depends
// on (dtypes, shapes, C-contiguity, index ranges, writability, overlap) and raise
// TypeError / ValueError naming the function and argument, then run without the GIL.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "image.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

using In = nb::ndarray<nb::ro, nb::device::cpu>;
using Out = nb::ndarray<nb::device::cpu>;
using fw::image::PixType;

std::string dtype_str(const nb::dlpack::dtype &d) {
    using code = nb::dlpack::dtype_code;
    switch (code(d.code)) {
        case code::Float: return "float" + std::to_string(d.bits);
        case code::Int: return "int" + std::to_string(d.bits);
        case code::UInt: return "uint" + std::to_string(d.bits);
        case code::Bool: return "bool";
        default: return "dtype(code=" + std::to_string(d.code) + ")";
    }
}

template <class A>
std::string describe(const A &a) {
    std::string s = dtype_str(a.dtype()) + "[";
    for (size_t i = 0; i < a.ndim(); ++i) s += (i ? ", " : "") + std::to_string(a.shape(i));
    return s + "]";
}

template <class A>
bool c_contiguous(const A &a) {
    if (a.size() == 0) return true;  // NumPy gives empty arrays arbitrary strides
    int64_t expected = 1;
    for (size_t i = a.ndim(); i-- > 0;) {
        const int64_t n = a.shape_ptr()[i];
        if (n != 1 && a.stride_ptr()[i] != expected) return false;
        expected *= n;
    }
    return true;
}

template <class A>
bool is(const A &a, nb::dlpack::dtype_code code, int bits) {
    return a.dtype().code == uint8_t(code) && a.dtype().bits == bits && a.dtype().lanes == 1;
}

using code = nb::dlpack::dtype_code;

[[noreturn]] void fail_type(const std::string &fn, const std::string &arg, const std::string &want,
                            const std::string &got) {
    throw nb::type_error((fn + ": argument '" + arg + "' must be " + want + ", got " + got).c_str());
}

[[noreturn]] void fail_value(const std::string &fn, const std::string &msg) {
    throw nb::value_error((fn + ": " + msg).c_str());
}

template <class A>
void need_contig(const std::string &fn, const std::string &arg, const A &a) {
    if (!c_contiguous(a)) fail_value(fn, "argument '" + arg + "' " + describe(a) + " must be C-contiguous");
}

PixType pix_type(const std::string &fn, const In &img) {
    if (is(img, code::UInt, 8)) return PixType::u8;
    if (is(img, code::Float, 32)) return PixType::f32;
    fail_type(fn, "img", "uint8 or float32", describe(img));
}

// An HWC image: returns (h, w, c).
void check_img(const std::string &fn, const In &img) {
    if (img.ndim() != 3) fail_value(fn, "argument 'img' must be HWC (3-D), got " + describe(img));
    need_contig(fn, "img", img);
}

void check_out(const std::string &fn, const Out &out, const In &img, int64_t oh, int64_t ow) {
    if (out.dtype() != img.dtype() || out.ndim() != 3 || int64_t(out.shape(0)) != oh ||
        int64_t(out.shape(1)) != ow || out.shape(2) != img.shape(2))
        fail_value(fn, "argument 'out' must be " + dtype_str(img.dtype()) + "[" + std::to_string(oh) + ", " +
                           std::to_string(ow) + ", " + std::to_string(img.shape(2)) + "], got " + describe(out));
    need_contig(fn, "out", out);
    const auto *o0 = static_cast<const char *>(out.data());
    const auto *i0 = static_cast<const char *>(img.data());
    if (out.nbytes() && img.nbytes() && o0 < i0 + img.nbytes() && i0 < o0 + out.nbytes())
        fail_value(fn, "argument 'out' must not overlap 'img'");
}

// A [dst, k] int64 index table with every entry in [0, n), copied into `keep`: the
// kernels read the copy, so a thread writing the array after the check (the GIL is
// released) cannot move an index out of range.
const int64_t *check_index(const std::string &fn, const std::string &arg, const In &a, int64_t n,
                           size_t ndim, std::vector<int64_t> &keep) {
    if (!is(a, code::Int, 64)) fail_type(fn, arg, "int64", describe(a));
    if (a.ndim() != ndim) fail_value(fn, "argument '" + arg + "' must be " + std::to_string(ndim) + "-D, got " + describe(a));
    need_contig(fn, arg, a);
    const auto *p = static_cast<const int64_t *>(a.data());
    keep.assign(p, p + a.size());
    for (const int64_t v : keep)
        if (v < 0 || v >= n)
            fail_value(fn, "argument '" + arg + "' holds index " + std::to_string(v) + " outside [0, " +
                               std::to_string(n) + ")");
    return keep.data();
}

fw::image::Taps taps(const std::string &fn, const std::string &name, const In &idx, const In &w, int64_t n,
                     bool fixed, std::vector<int64_t> &keep) {
    const std::string iarg = "t" + name, warg = "w" + name;
    const int64_t *p = check_index(fn, iarg, idx, n, 2, keep);
    if (idx.shape(1) < 1) fail_value(fn, "argument '" + iarg + "' needs at least one tap, got " + describe(idx));
    if (fixed ? !is(w, code::Int, 32) : !is(w, code::Float, 32))
        fail_type(fn, warg, fixed ? "int32 (fixed-point weights)" : "float32", describe(w));
    if (w.ndim() != 2 || w.shape(0) != idx.shape(0) || w.shape(1) != idx.shape(1))
        fail_value(fn, "argument '" + warg + "' " + describe(w) + " must have the shape of '" + iarg + "' " +
                           describe(idx));
    need_contig(fn, warg, w);
    return {p, w.data(), int64_t(idx.shape(0)), int64_t(idx.shape(1))};
}

nb::ndarray<nb::numpy, int64_t, nb::ndim<1>> py_nms(const In &boxes, double threshold, bool normalized,
                                                    std::optional<In> categories) {
    const std::string fn = "image_nms";
    if (!is(boxes, code::Float, 64)) fail_type(fn, "boxes", "float64", describe(boxes));
    if (boxes.ndim() != 2 || boxes.shape(1) != 4)
        fail_value(fn, "argument 'boxes' must be [N, 4], got " + describe(boxes));
    need_contig(fn, "boxes", boxes);
    const int64_t n = int64_t(boxes.shape(0));
    const int64_t *cats = nullptr;
    if (categories) {
        if (!is(*categories, code::Int, 64)) fail_type(fn, "categories", "int64", describe(*categories));
        if (categories->ndim() != 1 || int64_t(categories->shape(0)) != n)
            fail_value(fn, "argument 'categories' must be [" + std::to_string(n) + "] (one per box), got " +
                               describe(*categories));
        need_contig(fn, "categories", *categories);
        cats = static_cast<const int64_t *>(categories->data());
    }
    auto *keep = new std::vector<int64_t>();
    {
        nb::gil_scoped_release nogil;
        *keep = fw::image::nms_greedy(static_cast<const double *>(boxes.data()), n, threshold,
                                      normalized ? 0.0 : 1.0, cats);
    }
    nb::capsule owner(keep, [](void *p) noexcept { delete static_cast<std::vector<int64_t> *>(p); });
    return nb::ndarray<nb::numpy, int64_t, nb::ndim<1>>(keep->data(), {keep->size()}, owner);
}

Out py_resize(const In &img, const In &ty, const In &wy, const In &tx, const In &wx, const std::string &mode,
              Out out) {
    const std::string fn = "image_resize";
    const PixType t = pix_type(fn, img);
    check_img(fn, img);
    fw::image::ResizeMode m;
    if (mode == "float") m = fw::image::ResizeMode::floating;
    else if (mode == "u8_linear") m = fw::image::ResizeMode::u8_linear;
    else if (mode == "u8_wide") m = fw::image::ResizeMode::u8_wide;
    else fail_value(fn, "argument 'mode' must be 'float', 'u8_linear' or 'u8_wide', got '" + mode + "'");
    const bool fixed = m != fw::image::ResizeMode::floating;
    if (fixed && t != PixType::u8) fail_type(fn, "img", "uint8 for mode '" + mode + "'", describe(img));
    const int64_t h = int64_t(img.shape(0)), w = int64_t(img.shape(1)), c = int64_t(img.shape(2));
    std::vector<int64_t> ky, kx;
    const auto y = taps(fn, "y", ty, wy, h, fixed, ky), x = taps(fn, "x", tx, wx, w, fixed, kx);
    check_out(fn, out, img, y.dst, x.dst);
    if (h == 0 || w == 0 || c == 0) {
        if (out.size()) fail_value(fn, "argument 'img' " + describe(img) + " is empty");
        return out;
    }
    {
        nb::gil_scoped_release nogil;
        fw::image::resize_taps(img.data(), t, h, w, c, y, x, m, out.data());
    }
    return out;
}

Out py_resize_nearest(const In &img, const In &iy, const In &ix, Out out) {
    const std::string fn = "image_resize_nearest";
    check_img(fn, img);
    const int64_t h = int64_t(img.shape(0)), w = int64_t(img.shape(1));
    std::vector<int64_t> ky, kx;
    const int64_t *py = check_index(fn, "iy", iy, h, 1, ky);
    const int64_t *px = check_index(fn, "ix", ix, w, 1, kx);
    check_out(fn, out, img, int64_t(iy.shape(0)), int64_t(ix.shape(0)));
    const int64_t bytes = int64_t(img.shape(2)) * int64_t(img.itemsize());
    {
        nb::gil_scoped_release nogil;
        fw::image::resize_nearest(static_cast<const uint8_t *>(img.data()), w, bytes, py,
                                  int64_t(iy.shape(0)), px, int64_t(ix.shape(0)),
                                  static_cast<uint8_t *>(out.data()));
    }
    return out;
}

Out py_warp(const In &img, const In &matrix, const std::string &interpolation, const In &border, Out out) {
    const std::string fn = "image_warp";
    const PixType t = pix_type(fn, img);
    check_img(fn, img);
    fw::image::Interp ip;
    if (interpolation == "nearest") ip = fw::image::Interp::nearest;
    else if (interpolation == "bilinear") ip = fw::image::Interp::bilinear;
    else if (interpolation == "bicubic") ip = fw::image::Interp::bicubic;
    else fail_value(fn, "argument 'interpolation' must be 'nearest', 'bilinear' or 'bicubic', got '" +
                            interpolation + "'");
    bool affine;
    if (is(matrix, code::Float, 64) && matrix.ndim() == 2 && matrix.shape(0) == 2 && matrix.shape(1) == 3)
        affine = true;
    else if (is(matrix, code::Float, 32) && matrix.ndim() == 2 && matrix.shape(0) == 3 && matrix.shape(1) == 3)
        affine = false;
    else
        fail_value(fn, "argument 'matrix' must be a float64 [2, 3] inverse affine map or a float32 [3, 3] "
                       "inverse homography, got " + describe(matrix));
    need_contig(fn, "matrix", matrix);
    const int64_t c = int64_t(img.shape(2));
    if (!is(border, code::Float, 64) || border.ndim() != 1 || int64_t(border.shape(0)) != c)
        fail_value(fn, "argument 'border' must be float64[" + std::to_string(c) + "] (one value per channel), got " +
                           describe(border));
    need_contig(fn, "border", border);
    if (out.ndim() != 3) fail_value(fn, "argument 'out' must be HWC (3-D), got " + describe(out));
    const int64_t oh = int64_t(out.shape(0)), ow = int64_t(out.shape(1));
    check_out(fn, out, img, oh, ow);
    {
        nb::gil_scoped_release nogil;
        fw::image::warp(img.data(), t, int64_t(img.shape(0)), int64_t(img.shape(1)), c, affine,
                        affine ? static_cast<const double *>(matrix.data()) : nullptr,
                        affine ? nullptr : static_cast<const float *>(matrix.data()), ip,
                        static_cast<const double *>(border.data()), out.data(), oh, ow);
    }
    return out;
}

Out py_color(const In &img, const std::string &op, double value, Out out) {
    const std::string fn = "image_color";
    if (!is(img, code::UInt, 8)) fail_type(fn, "img", "uint8", describe(img));
    check_img(fn, img);
    if (img.shape(2) != 3) fail_value(fn, "argument 'img' must have 3 channels (BGR), got " + describe(img));
    check_out(fn, out, img, int64_t(img.shape(0)), int64_t(img.shape(1)));
    const int64_t n = int64_t(img.shape(0) * img.shape(1));
    const auto *src = static_cast<const uint8_t *>(img.data());
    auto *dst = static_cast<uint8_t *>(out.data());
    if (op == "hue") {
        if (value != double(int64_t(value)) || value < -65536 || value > 65536)
            fail_value(fn, "argument 'value' (the hue shift) must be an integer, got " + std::to_string(value));
        nb::gil_scoped_release nogil;
        fw::image::hue_shift(src, n, int(value), dst);
    } else {
        fail_value(fn, "argument 'op' must be 'hue', got '" + op + "'");
    }
    return out;
}

}  // namespace

void bind_image(nb::module_ &m) {
    m.def("image_nms", &py_nms, "boxes"_a, "threshold"_a, "normalized"_a = true,
          "categories"_a.none() = nb::none(),
          "Greedy NMS over float64 [N, 4] boxes in priority order; with int64 [N] categories a box "
          "suppresses only boxes of its own category. Returns the kept positions (int64, ascending).");
    m.def("image_resize", &py_resize, "img"_a, "ty"_a, "wy"_a, "tx"_a, "wx"_a, "mode"_a, "out"_a,
          "Separable resize of an HWC uint8/float32 image through [dst, k] tap tables (int64 source "
          "indices, float32 or int32 fixed-point weights); mode 'float', 'u8_linear' or 'u8_wide'. "
          "Writes and returns out.");
    m.def("image_resize_nearest", &py_resize_nearest, "img"_a, "iy"_a, "ix"_a, "out"_a,
          "out[y, x] = img[iy[y], ix[x]] for an HWC image of any dtype. Writes and returns out.");
    m.def("image_warp", &py_warp, "img"_a, "matrix"_a, "interpolation"_a, "border"_a, "out"_a,
          "Affine (float64 [2, 3] inverse map) or perspective (float32 [3, 3] inverse homography) warp "
          "of an HWC uint8/float32 image with a constant border. Writes and returns out.");
    m.def("image_color", &py_color, "img"_a, "op"_a, "value"_a, "out"_a,
          "Colour adjustment of a uint8 HW3 (BGR) image: op 'hue' (integer shift `value` of the "
          "8-bit HSV_FULL hue). Writes and returns out.");
}
