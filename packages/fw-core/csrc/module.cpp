// fw.core._C: the nanobind module. Converts NumPy arrays (through nb::ndarray)
// into fw::Operand views, validates them, and calls the kernels with the GIL
// released. All layout/dtype policy lives here and in matmul.hpp.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "matmul.hpp"
#include "runtime.hpp"

namespace nb = nanobind;
using namespace nb::literals;

#ifndef FW_CORE_VERSION
#error "FW_CORE_VERSION must be defined by the build (CMakeLists.txt)"
#endif

namespace {

using InArray = nb::ndarray<nb::ro, nb::device::cpu>;
using OutArray = nb::ndarray<nb::device::cpu>;

std::string dlpack_dtype_name(const nb::dlpack::dtype &d) {
    using code = nb::dlpack::dtype_code;
    std::string base;
    switch (code(d.code)) {
        case code::Int: base = "int"; break;
        case code::UInt: base = "uint"; break;
        case code::Float: base = "float"; break;
        case code::Bfloat: base = "bfloat"; break;
        case code::Complex: base = "complex"; break;
        case code::Bool: return "bool";
        default: base = "dtype(code=" + std::to_string(d.code) + ")"; break;
    }
    std::string s = base + std::to_string(d.bits);
    if (d.code == uint8_t(code::UInt) && d.bits == 16) s = "bfloat16 (as uint16 bits)";
    if (d.lanes != 1) s += "x" + std::to_string(d.lanes);
    return s;
}

// bfloat16 convention: NumPy cannot export ml_dtypes.bfloat16 through DLPack or
// the buffer protocol, so callers pass `a.view(np.uint16)`; every uint16 array
// reaching a native kernel is read as bfloat16 bit patterns. A real DLPack
// bfloat16 (e.g. from another framework) is accepted too.
fw::DType to_dtype(const nb::dlpack::dtype &d) {
    using code = nb::dlpack::dtype_code;
    if (d.lanes != 1) return fw::DType::undefined;
    if (d.code == uint8_t(code::Float) && d.bits == 32) return fw::DType::f32;
    if ((d.code == uint8_t(code::UInt) || d.code == uint8_t(code::Bfloat)) && d.bits == 16) return fw::DType::bf16;
    return fw::DType::undefined;
}

std::string shape_str(const int64_t *shape, size_t ndim) {
    std::string s = "[";
    for (size_t i = 0; i < ndim; ++i) {
        if (i) s += ", ";
        s += std::to_string(shape[i]);
    }
    return s + "]";
}

template <class A>
std::string describe(const A &a) {
    return dlpack_dtype_name(a.dtype()) + shape_str(a.shape_ptr(), a.ndim());
}

template <class A>
bool c_contiguous(const A &a) {
    if (a.size() == 0) return true;  // never read or written
    int64_t expected = 1;
    for (size_t i = a.ndim(); i-- > 0;) {
        const int64_t n = a.shape_ptr()[i];
        if (n != 1 && a.stride_ptr()[i] != expected) return false;
        expected *= n;
    }
    return true;
}

// `strided`: x and y of matmul may be strided views (plan_matmul checks what it
// supports); everything else must be C-contiguous.
template <class A>
fw::Operand operand(const A &a, const char *what, bool strided = false) {
    const bool dense = c_contiguous(a);
    if (!dense && !strided)
        throw std::invalid_argument(std::string("matmul: ") + what + " " + describe(a) +
                                    " must be C-contiguous (use numpy.ascontiguousarray)");
    fw::Operand op;
    if (!dense) {
        for (size_t i = 0; i < a.ndim(); ++i)
            if (a.stride_ptr()[i] <= 0 && a.shape_ptr()[i] > 1)
                throw std::invalid_argument(std::string("matmul: ") + what + " " + describe(a) +
                                            " has a negative or zero stride (use numpy.ascontiguousarray)");
        op.strides = a.stride_ptr();
    }
    op.data = const_cast<void *>(static_cast<const void *>(a.data()));
    op.ndim = int(a.ndim());
    op.shape = a.shape_ptr();
    op.dtype = to_dtype(a.dtype());
    return op;
}

size_t dtype_size(fw::DType t) { return t == fw::DType::f32 ? 4 : 2; }

// A fresh C-contiguous NumPy array owned by a capsule (64-byte aligned).
nb::object new_array(const fw::MatmulPlan &p, fw::DType t, void **data) {
    size_t shape[fw::kMaxNdim];
    size_t n = 1;
    for (int i = 0; i < p.out_ndim; ++i) n *= shape[i] = size_t(p.out_shape[i]);
    size_t bytes = (n * dtype_size(t) + 63) / 64 * 64;
    void *buf = std::aligned_alloc(64, bytes ? bytes : 64);
    if (!buf) throw std::bad_alloc();
    nb::capsule owner(buf, [](void *ptr) noexcept { std::free(ptr); });
    const nb::dlpack::dtype dt = t == fw::DType::f32 ? nb::dtype<float>() : nb::dtype<uint16_t>();
    nb::ndarray<nb::numpy> arr(buf, size_t(p.out_ndim), shape, owner, nullptr, dt);
    *data = buf;
    return nb::cast(arr, nb::rv_policy::reference);
}

nb::object py_matmul(const InArray &x, const InArray &y, nb::handle out_obj, bool transpose_x, bool transpose_y,
                     std::optional<InArray> bias, const std::string &activation, std::optional<InArray> residual,
                     bool residual_before_activation) {
    fw::Operand xo = operand(x, "x", true), yo = operand(y, "y", true);
    if (xo.dtype == fw::DType::undefined || xo.dtype != yo.dtype)
        throw nb::type_error(("matmul: unsupported dtypes x=" + describe(x) + ", y=" + describe(y) +
                              "; the native kernel takes two float32 or two bfloat16 (uint16 bits) arrays")
                                 .c_str());
    const fw::MatmulPlan plan = fw::plan_matmul(xo, yo, transpose_x, transpose_y);

    fw::Epilogue ep;
    ep.act = fw::parse_activation(activation.data(), activation.size());
    ep.residual_first = residual_before_activation;

    // Output: given (checked) or allocated here.
    nb::object result;
    fw::Operand oo;
    oo.ndim = plan.out_ndim;
    oo.shape = plan.out_shape;
    OutArray out;
    if (out_obj.is_none()) {
        oo.dtype = xo.dtype;
        result = new_array(plan, oo.dtype, &oo.data);
    } else {
        if (!nb::try_cast<OutArray>(out_obj, out, false))
            throw nb::type_error(("matmul: out must be a writable CPU array (NumPy ndarray), got " +
                                  nb::cast<std::string>(nb::str(out_obj.type())))
                                     .c_str());
        if (out.ndim() != size_t(plan.out_ndim) ||
            !std::equal(plan.out_shape, plan.out_shape + plan.out_ndim, out.shape_ptr()))
            throw std::invalid_argument("matmul: out " + describe(out) + " does not have the result shape " +
                                        shape_str(plan.out_shape, size_t(plan.out_ndim)) + " of x " +
                                        describe(x) + " and y " + describe(y));
        oo = operand(out, "out");
        oo.ndim = plan.out_ndim;
        oo.shape = plan.out_shape;
        if (!(oo.dtype == xo.dtype || (xo.dtype == fw::DType::bf16 && oo.dtype == fw::DType::f32)))
            throw nb::type_error(("matmul: out " + describe(out) + " must be float32 for float32 inputs and " +
                                  "bfloat16 or float32 for bfloat16 inputs (x=" + describe(x) + ")")
                                     .c_str());
        result = nb::borrow(out_obj);
    }

    if (bias) {
        ep.bias = operand(*bias, "bias");
        if (bias->ndim() != 1 || int64_t(bias->shape(0)) != plan.N)
            throw std::invalid_argument("matmul: bias " + describe(*bias) + " must have shape [" +
                                        std::to_string(plan.N) + "] (N of x " + describe(x) + " @ y " +
                                        describe(y) + ")");
        if (ep.bias.dtype == fw::DType::undefined)
            throw nb::type_error(("matmul: bias " + describe(*bias) + " must be float32 or bfloat16").c_str());
    }
    if (residual) {
        ep.residual = operand(*residual, "residual");
        if (residual->ndim() != size_t(plan.out_ndim) ||
            !std::equal(plan.out_shape, plan.out_shape + plan.out_ndim, residual->shape_ptr()))
            throw std::invalid_argument("matmul: residual " + describe(*residual) + " must have the result shape " +
                                        shape_str(plan.out_shape, size_t(plan.out_ndim)));
        if (ep.residual.dtype == fw::DType::undefined)
            throw nb::type_error(
                ("matmul: residual " + describe(*residual) + " must be float32 or bfloat16").c_str());
        // residual *is* out: accumulate in place with oneDNN's sum post-op.
        ep.residual_in_place = ep.residual.data == oo.data;
        if (ep.residual_in_place && ep.residual.dtype != oo.dtype)
            throw nb::type_error("matmul: residual aliases out with a different dtype");
    }

    {
        nb::gil_scoped_release nogil;
        fw::run_matmul(plan, xo, yo, oo, ep);
    }
    return result;
}

const char *kMatmulDoc = R"(matmul(x, y, out=None, transpose_x=False, transpose_y=False, bias=None, activation='none', residual=None, residual_before_activation=False)

Computes ``out = act(op(x) @ op(y) + bias) + residual`` with oneDNN, where
``op`` swaps the last two dims when ``transpose_*`` is set. With
``residual_before_activation`` the residual is added before ``act`` instead.

Layout: every array must be C-contiguous (the Python wrapper makes them so);
batch dims broadcast like numpy.matmul. dtypes: float32, or bfloat16 passed as
``a.view(numpy.uint16)`` (every uint16 array is read as bfloat16 bits); x and y
share one dtype; out is float32 for float32 inputs and bfloat16 (uint16) or
float32 for bfloat16 inputs. bias has shape (N,); residual has the result's
shape and may be ``out`` itself (then out += ... in place).
activation: a name or alias of ``epilogue_activations()`` /
``epilogue_aliases()`` (the table of fw/core/_epilogue.py).

Returns ``out`` (allocated when None; uint16 for bfloat16 results).
Raises TypeError for unsupported dtypes, ValueError for bad shapes or layouts.)";

}  // namespace

// Kernel families bind themselves from their own files, so each family's code
// (and the people working on it) stays in its own translation units:
//   bind_nn.cpp     convolution, pooling, normalization, softmax (oneDNN primitives)
//   bind_fused.cpp  optimizer updates and fused elementwise chains (own C++)
//   bind_image.cpp  fw.vision's nms, resize and warps (own C++, image.cpp)
void bind_nn(nb::module_ &m);
void bind_fused(nb::module_ &m);
void bind_image(nb::module_ &m);

NB_MODULE(_C, m) {
    m.doc() = "fw-core native kernels (oneDNN, CPU)";
    m.attr("__version__") = FW_CORE_VERSION;
    fw::install_fork_handler();
    {
        const dnnl_version_t *v = dnnl_version();
        m.attr("onednn_version") = std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
                                   std::to_string(v->patch) + " (" + v->hash + ")";
    }

    m.def("matmul", &py_matmul, "x"_a, "y"_a, "out"_a.none() = nb::none(), "transpose_x"_a = false,
          "transpose_y"_a = false, "bias"_a.none() = nb::none(), "activation"_a = "none",
          "residual"_a.none() = nb::none(), "residual_before_activation"_a = false, kMatmulDoc);

    m.def("epilogue_activations", &fw::activation_table,
          "(name, value) of each epilogue activation matmul and conv_forward fuse, in "
          "table order (fw/core/_epilogue.py holds the same table).");
    m.def("epilogue_aliases", &fw::activation_aliases,
          "(alias, name) of the other spellings of epilogue activations that are accepted.");

    m.def(
        "matmul_impl",
        [](const InArray &x, const InArray &y, bool transpose_x, bool transpose_y) {
            fw::Operand xo = operand(x, "x"), yo = operand(y, "y");
            if (xo.dtype == fw::DType::undefined || xo.dtype != yo.dtype)
                throw nb::type_error("matmul_impl: unsupported dtypes");
            auto plan = fw::plan_matmul(xo, yo, transpose_x, transpose_y);
            return fw::matmul_impl_info(plan, xo.dtype, yo.dtype, xo.dtype, fw::Epilogue{});
        },
        "x"_a, "y"_a, "transpose_x"_a = false, "transpose_y"_a = false,
        "The oneDNN implementation matmul(x, y) runs (e.g. 'brg:avx2'), for diagnostics.");

    m.def("set_num_threads", &fw::set_num_threads, "n"_a,
          "Sets the number of OpenMP threads oneDNN kernels use (applies to every calling thread). "
          "A forked child starts at 1: GNU OpenMP cannot restart its pool after fork, and raising "
          "it there can hang if the parent had already run parallel kernels.");
    m.def("get_num_threads", &fw::get_num_threads, "The number of threads oneDNN kernels use.");

    m.def("set_cache_capacity", &fw::matmul_cache_set_capacity, "capacity"_a,
          "Bounds the primitive cache (LRU); 0 disables caching.");
    m.def("clear_cache", &fw::matmul_cache_clear, "Empties the primitive cache and resets its counters.");
    m.def(
        "matmul_cached_impls",
        []() {
            nb::list l;
            for (auto &s : fw::matmul_cached_impls()) l.append(nb::str(s.c_str()));
            return l;
        },
        "oneDNN implementation name of every cached matmul primitive.");
    m.def(
        "cache_info",
        []() {
            const fw::CacheStats s = fw::matmul_cache_stats();
            nb::dict d;
            d["hits"] = s.hits;
            d["misses"] = s.misses;
            d["evictions"] = s.evictions;
            d["size"] = s.size;
            d["capacity"] = s.capacity;
            return d;
        },
        "Primitive cache statistics: dict with hits, misses, evictions, size, capacity.");
    bind_nn(m);
    bind_fused(m);
    bind_image(m);
}
