#include "matmul.hpp"

#include <oneapi/dnnl/dnnl.hpp>
#include <oneapi/dnnl/dnnl_debug.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "bf16.hpp"
#include "runtime.hpp"

namespace fw {

const char *dtype_name(DType t) {
    switch (t) {
        case DType::f32: return "float32";
        case DType::bf16: return "bfloat16";
        default: return "undefined";
    }
}

namespace {

using dnnl::memory;

std::string describe(const Operand &t) {
    std::string s = dtype_name(t.dtype);
    s += '[';
    for (int i = 0; i < t.ndim; ++i) {
        if (i) s += ", ";
        s += std::to_string(t.shape[i]);
    }
    return s + ']';
}

std::string pybool(bool b) { return b ? "True" : "False"; }

int64_t numel(const Operand &t) {
    int64_t n = 1;
    for (int i = 0; i < t.ndim; ++i) n *= t.shape[i];
    return n;
}

memory::data_type to_dnnl(DType t) {
    return t == DType::bf16 ? memory::data_type::bf16 : memory::data_type::f32;
}

constexpr double kSerialWork = 64.0 * 64.0 * 64.0;

// Residual handling baked into a primitive.
enum ResidualMode : int { kResNone = 0, kResAddAfter, kResAddBefore, kResSumAfter, kResSumBefore };

int residual_mode(const Epilogue &ep) {
    if (!ep.residual.present()) return kResNone;
    if (ep.residual_in_place) return ep.residual_first ? kResSumBefore : kResSumAfter;
    return ep.residual_first ? kResAddBefore : kResAddAfter;
}

// Argument slots of a matmul primitive.
enum Slot : int { kSrc = 0, kWei, kDst, kBias, kRes, kSlots };

// oneDNN memory objects for one execution, re-pointed at the caller's buffers
// on each call so a cache hit allocates nothing.
struct MemorySet {
    dnnl_memory_t mem[kSlots] = {};
    dnnl_memory_t scratch = nullptr;  // re-pointed at the calling thread's scratchpad
    ~MemorySet() {
        for (auto m : mem)
            if (m) dnnl_memory_destroy(m);
        if (scratch) dnnl_memory_destroy(scratch);
    }
};

struct MatmulEntry {
    dnnl::primitive prim;
    memory::desc md[kSlots];
    int arg[kSlots] = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST, DNNL_ARG_BIAS, 0};
    bool used[kSlots] = {true, true, true, false, false};
    bool emulate_bf16 = false;  // CPU has no bf16 matmul: run in f32, convert
    memory::desc scratch_md;    // user-mode scratchpad (see thread_scratchpad)
    size_t scratch_bytes = 0;
    std::string impl;

    std::mutex pool_mu;
    std::vector<std::unique_ptr<MemorySet>> pool;  // one per concurrent caller

    std::unique_ptr<MemorySet> acquire() {
        {
            std::lock_guard<std::mutex> lock(pool_mu);
            if (!pool.empty()) {
                auto ms = std::move(pool.back());
                pool.pop_back();
                return ms;
            }
        }
        auto ms = std::make_unique<MemorySet>();
        for (int i = 0; i < kSlots; ++i) {
            if (!used[i]) continue;
            auto st = dnnl_memory_create(&ms->mem[i], md[i].get(), cpu_engine().get(), DNNL_MEMORY_NONE);
            if (st != dnnl_success)
                throw std::runtime_error(std::string("matmul: dnnl_memory_create failed: ") + dnnl_status2str(st));
        }
        if (scratch_bytes) {
            auto st = dnnl_memory_create(&ms->scratch, scratch_md.get(), cpu_engine().get(), DNNL_MEMORY_NONE);
            if (st != dnnl_success)
                throw std::runtime_error(std::string("matmul: dnnl_memory_create failed: ") + dnnl_status2str(st));
        }
        return ms;
    }

    void release(std::unique_ptr<MemorySet> ms) {
        std::lock_guard<std::mutex> lock(pool_mu);
        pool.push_back(std::move(ms));
    }

    void execute(void *const ptr[kSlots]) {
        auto ms = acquire();
        dnnl_exec_arg_t args[kSlots + 1];
        int n = 0;
        dnnl_status_t st = dnnl_success;
        for (int i = 0; i < kSlots && st == dnnl_success; ++i) {
            if (!used[i]) continue;
            st = dnnl_memory_set_data_handle(ms->mem[i], ptr[i]);
            args[n++] = {arg[i], ms->mem[i]};
        }
        if (scratch_bytes && st == dnnl_success) {
            st = dnnl_memory_set_data_handle(ms->scratch, thread_scratchpad(scratch_bytes));
            args[n++] = {DNNL_ARG_SCRATCHPAD, ms->scratch};
        }
        if (st == dnnl_success) st = dnnl_primitive_execute(prim.get(), cpu_stream().get(), n, args);
        release(std::move(ms));
        if (st != dnnl_success)
            throw std::runtime_error(std::string("matmul: oneDNN execution failed: ") + dnnl_status2str(st));
    }
};

LruCache<MatmulEntry> &cache() {
    static auto *c = new LruCache<MatmulEntry>(256);  // leaked: see cpu_engine()
    return *c;
}

struct EntryTypes {
    DType x, y, out, bias, res;  // bias/res undefined when absent
};

void build_primitive(MatmulEntry &e, const MatmulPlan &p, const EntryTypes &t, Activation act, int res_mode) {
    const int nb = p.nb, nd = nb + 2;
    memory::dims xd(nd), xs(nd), yd(nd), ys(nd), od(nd), os(nd);
    for (int i = 0; i < nb; ++i) {
        xd[i] = p.x_batch[i];
        yd[i] = p.y_batch[i];
        od[i] = p.o_batch[i];
    }
    xd[nb] = p.M, xd[nb + 1] = p.K;
    xs[nb] = p.trans_x ? 1 : p.K, xs[nb + 1] = p.trans_x ? p.M : 1;
    yd[nb] = p.K, yd[nb + 1] = p.N;
    ys[nb] = p.trans_y ? 1 : p.N, ys[nb + 1] = p.trans_y ? p.K : 1;
    od[nb] = p.M, od[nb + 1] = p.N;
    os[nb] = p.N, os[nb + 1] = 1;
    int64_t sx = p.M * p.K, sy = p.K * p.N, so = p.M * p.N;
    for (int i = nb - 1; i >= 0; --i) {
        xs[i] = sx, sx *= xd[i];
        ys[i] = sy, sy *= yd[i];
        os[i] = so, so *= od[i];
    }
    if (p.strided)
        for (int i = 0; i < nd; ++i) xs[i] = p.x_str[i], ys[i] = p.y_str[i];
    e.md[kSrc] = memory::desc(xd, to_dnnl(t.x), xs);
    e.md[kWei] = memory::desc(yd, to_dnnl(t.y), ys);
    e.md[kDst] = memory::desc(od, to_dnnl(t.out), os);

    memory::desc bias_md;
    if (t.bias != DType::undefined) {
        memory::dims bd(nd, 1), bs(nd, p.N);
        bd[nb + 1] = p.N;
        bs[nb + 1] = 1;
        bias_md = memory::desc(bd, to_dnnl(t.bias), bs);
        e.md[kBias] = bias_md;
        e.used[kBias] = true;
    }

    dnnl::post_ops po;
    auto add_residual = [&] {
        if (res_mode == kResSumAfter || res_mode == kResSumBefore) {
            po.append_sum(1.f);
        } else {
            e.md[kRes] = memory::desc(od, to_dnnl(t.res), os);
            e.arg[kRes] = DNNL_ARG_ATTR_MULTIPLE_POST_OP(po.len()) | DNNL_ARG_SRC_1;
            e.used[kRes] = true;
            po.append_binary(dnnl::algorithm::binary_add, e.md[kRes]);
        }
    };
    if (res_mode == kResAddBefore || res_mode == kResSumBefore) add_residual();
    append_activation(po, act);
    if (res_mode == kResAddAfter || res_mode == kResSumAfter) add_residual();

    dnnl::primitive_attr attr = user_attr();
    attr.set_post_ops(po);
    auto pd = dnnl::matmul::primitive_desc(cpu_engine(), e.md[kSrc], e.md[kWei], bias_md, e.md[kDst], attr);
    e.prim = dnnl::matmul(pd);
    e.impl = pd.impl_info_str();
    e.scratch_md = pd.scratchpad_desc();
    e.scratch_bytes = e.scratch_md.get_size();
}

std::shared_ptr<MatmulEntry> make_entry(const MatmulPlan &p, const EntryTypes &t, Activation act, int res_mode) {
    auto e = std::make_shared<MatmulEntry>();
    const bool any_bf16 = t.x == DType::bf16 || t.y == DType::bf16 || t.out == DType::bf16 ||
                          t.bias == DType::bf16 || t.res == DType::bf16;
    try {
        build_primitive(*e, p, t, act, res_mode);
    } catch (const dnnl::error &err) {
        if (!any_bf16 || err.status != dnnl_unimplemented)
            throw std::runtime_error(std::string("matmul: oneDNN could not create the primitive: ") + err.what());
        // No bf16 matmul on this ISA (e.g. AVX2 without AVX512-BF16): compute
        // in f32 and convert at the boundary, so bf16 still works everywhere.
        EntryTypes f = t;
        f.x = f.y = f.out = DType::f32;
        if (f.bias != DType::undefined) f.bias = DType::f32;
        if (f.res != DType::undefined) f.res = DType::f32;
        e = std::make_shared<MatmulEntry>();
        build_primitive(*e, p, f, act, res_mode);
        e->emulate_bf16 = true;
        e->impl = "emulated bf16 via f32: " + e->impl;
    }
    return e;
}

FlatKey make_key(const MatmulPlan &p, const EntryTypes &t, Activation act, int res_mode, int nthreads) {
    FlatKey k;
    k.push(p.nb);
    for (int i = 0; i < p.nb; ++i) {
        k.push(p.x_batch[i]);
        k.push(p.y_batch[i]);
    }
    k.push(p.M);
    k.push(p.K);
    k.push(p.N);
    k.push(int64_t(p.trans_x) | int64_t(p.trans_y) << 1);
    k.push(int64_t(t.x) | int64_t(t.y) << 8 | int64_t(t.out) << 16 | int64_t(t.bias) << 24 |
           int64_t(t.res) << 32);
    k.push(int64_t(act) | int64_t(res_mode) << 8);
    // oneDNN sizes its work partition for the thread count at creation time.
    k.push(nthreads);
    if (p.strided)
        for (int i = 0; i < p.nb + 2; ++i) {
            k.push(p.x_str[i]);
            k.push(p.y_str[i]);
        }
    return k;
}

std::shared_ptr<MatmulEntry> lookup(const MatmulPlan &p, const EntryTypes &t, Activation act, int res_mode,
                                    int nthreads) {
    const FlatKey key = make_key(p, t, act, res_mode, nthreads);
    auto e = cache().get(key);
    if (e) return e;
    return cache().put(key, make_entry(p, t, act, res_mode));
}

// Sets the calling thread's OpenMP team size for this problem and returns it.
// Small products run on the calling thread alone: a second thread saves
// nothing below ~64^3 multiply-adds, and an OpenMP barrier stalls for a whole
// scheduler slice when the other core is busy elsewhere.
int apply_plan_threads(const MatmulPlan &p) {
    double work = double(p.M) * double(p.N) * double(p.K);
    for (int i = 0; i < p.nb; ++i) work *= double(p.o_batch[i]);
    return apply_num_threads(work <= kSerialWork ? 1 : 1 << 30);
}

// f32 copy of a (possibly bf16) operand; returns the operand's own pointer when
// it is already f32.
void *as_f32(const Operand &t, std::vector<float> &buf) {
    if (t.dtype == DType::f32) return t.data;
    buf.resize(size_t(numel(t)));
    bf16_to_f32(static_cast<const uint16_t *>(t.data), buf.data(), int64_t(buf.size()));
    return buf.data();
}

// The element stride of dim i of o (its own, or the C-contiguous one).
int64_t stride_of(const Operand &o, int i) {
    if (o.strides) return o.strides[i];
    int64_t s = 1;
    for (int j = o.ndim - 1; j > i; --j) s *= o.shape[j];
    return s;
}

// Fills the strided layout of p (see MatmulPlan::strided).
template <class Fail>
void plan_strides(MatmulPlan &p, const Operand &x, const Operand &y, const int64_t *xb, const int64_t *yb,
                  const int64_t *ob, int nbo, Fail &&fail) {
    if (x.dtype != DType::f32 || y.dtype != DType::f32) fail("non-contiguous operands must be float32");
    if (x.ndim != y.ndim) fail("non-contiguous operands must have the same number of dims");
    for (int i = 0; i < nbo; ++i)
        if (xb[i] != yb[i]) fail("non-contiguous operands must have equal batch dims (no broadcasting)");
    if (nbo > kMaxBatch) fail("too many batch dims for oneDNN");
    // The byte extent of each view, sum of (dim - 1) * stride * 4, must stay far
    // from int64 overflow: oneDNN computes offsets with it (the dims themselves
    // come from a real array; the strides from a possibly absurd as_strided view).
    for (const Operand *o : {&x, &y}) {
        if (!o->strides) continue;  // C-contiguous: a real array's extent
        int64_t extent = 0;
        for (int i = 0; i < o->ndim; ++i) {
            const int64_t d = o->shape[i], s = o->strides[i];
            if (d <= 1) continue;
            if (s > (int64_t(1) << 60) / 4 / (d - 1) || (extent += (d - 1) * s * 4) > (int64_t(1) << 60))
                fail(std::string(o == &x ? "x" : "y") + " is a view whose strides span more than 2^60 bytes");
        }
    }
    const int n = x.ndim;
    p.strided = true;
    p.nb = nbo;
    for (int i = 0; i < nbo; ++i) {
        p.x_batch[i] = p.y_batch[i] = p.o_batch[i] = ob[i];
        p.x_str[i] = stride_of(x, i);
        p.y_str[i] = stride_of(y, i);
    }
    p.x_str[nbo] = stride_of(x, p.trans_x ? n - 1 : n - 2);      // M
    p.x_str[nbo + 1] = stride_of(x, p.trans_x ? n - 2 : n - 1);  // K
    p.y_str[nbo] = stride_of(y, p.trans_y ? n - 1 : n - 2);      // K
    p.y_str[nbo + 1] = stride_of(y, p.trans_y ? n - 2 : n - 1);  // N
}

}  // namespace

bool MatmulPlan::empty() const {
    for (int i = 0; i < out_ndim; ++i)
        if (out_shape[i] == 0) return true;
    return false;
}

MatmulPlan plan_matmul(const Operand &x, const Operand &y, bool trans_x, bool trans_y) {
    auto fail = [&](const std::string &why) {
        throw std::invalid_argument("matmul: " + why + " (x: " + describe(x) + ", transpose_x=" +
                                    pybool(trans_x) + "; y: " + describe(y) + ", transpose_y=" + pybool(trans_y) +
                                    ")");
    };
    if (x.ndim < 2 || y.ndim < 2) fail("the native kernel needs operands with at least 2 dims");
    if (x.ndim > kMaxNdim || y.ndim > kMaxNdim) fail("too many dims (at most " + std::to_string(kMaxNdim) + ")");

    MatmulPlan p;
    p.trans_x = trans_x, p.trans_y = trans_y;
    const int64_t *xs = x.shape, *ys = y.shape;
    const int xn = x.ndim, yn = y.ndim;
    p.M = trans_x ? xs[xn - 1] : xs[xn - 2];
    p.K = trans_x ? xs[xn - 2] : xs[xn - 1];
    const int64_t ky = trans_y ? ys[yn - 1] : ys[yn - 2];
    p.N = trans_y ? ys[yn - 2] : ys[yn - 1];
    if (p.K != ky)
        fail("contraction dims differ: op(x) has K=" + std::to_string(p.K) + ", op(y) has K=" + std::to_string(ky));

    // Broadcast the batch dims (right-aligned, NumPy rules).
    const int nbo = std::max(xn, yn) - 2;
    p.out_ndim = nbo + 2;
    int64_t xb[kMaxNdim], yb[kMaxNdim], ob[kMaxNdim];
    for (int i = 0; i < nbo; ++i) {
        const int ix = i - (nbo - (xn - 2)), iy = i - (nbo - (yn - 2));
        xb[i] = ix >= 0 ? xs[ix] : 1;
        yb[i] = iy >= 0 ? ys[iy] : 1;
        if (xb[i] != yb[i] && xb[i] != 1 && yb[i] != 1)
            fail("batch dims are not broadcastable (" + std::to_string(xb[i]) + " vs " + std::to_string(yb[i]) + ")");
        ob[i] = xb[i] == 1 ? yb[i] : xb[i];
        p.out_shape[i] = ob[i];
    }
    p.out_shape[nbo] = p.M;
    p.out_shape[nbo + 1] = p.N;

    // Merge runs of batch dims that broadcast the same way and drop unit dims:
    // all operands are dense, so such runs address memory like one dim.
    int nb = 0, last_pattern = -1;
    for (int i = 0; i < nbo; ++i) {
        if (ob[i] == 1) continue;
        const int pattern = (xb[i] == 1 ? 1 : 0) | (yb[i] == 1 ? 2 : 0);
        if (pattern == last_pattern) {
            p.x_batch[nb - 1] *= xb[i];
            p.y_batch[nb - 1] *= yb[i];
            p.o_batch[nb - 1] *= ob[i];
        } else {
            if (nb == kMaxBatch) fail("too many independent batch dims for oneDNN");
            p.x_batch[nb] = xb[i];
            p.y_batch[nb] = yb[i];
            p.o_batch[nb] = ob[i];
            ++nb;
            last_pattern = pattern;
        }
    }
    p.nb = nb;
    if (x.strides || y.strides) plan_strides(p, x, y, xb, yb, ob, nbo, fail);

    // (batch..., M, K) @ (K, N): fold the batch into M, one big GEMM -- the
    // shape of every linear layer.
    if (!p.strided && nb == 1 && p.y_batch[0] == 1 && p.x_batch[0] == p.o_batch[0] && !trans_x) {
        p.M *= p.o_batch[0];
        p.nb = 0;
    }
    return p;
}

void run_matmul(const MatmulPlan &p, const Operand &x, const Operand &y, const Operand &out, const Epilogue &ep) {
    if (p.empty()) return;
    if (p.K == 0)
        throw std::invalid_argument("matmul: the native kernel does not support a zero-size contraction dim (K=0)");

    const int res_mode = residual_mode(ep);
    EntryTypes t{x.dtype, y.dtype, out.dtype, ep.bias.present() ? ep.bias.dtype : DType::undefined,
                 (res_mode == kResAddAfter || res_mode == kResAddBefore) ? ep.residual.dtype : DType::undefined};
    auto entry = lookup(p, t, ep.act, res_mode, apply_plan_threads(p));

    void *ptr[kSlots] = {x.data, y.data, out.data, ep.bias.data, ep.residual.data};
    if (!entry->emulate_bf16) {
        entry->execute(ptr);
        return;
    }
    std::vector<float> xf, yf, bf, rf, of;
    ptr[kSrc] = as_f32(x, xf);
    ptr[kWei] = as_f32(y, yf);
    if (ep.bias.present()) ptr[kBias] = as_f32(ep.bias, bf);
    if (res_mode == kResAddAfter || res_mode == kResAddBefore) ptr[kRes] = as_f32(ep.residual, rf);
    if (out.dtype == DType::bf16) {
        of.resize(size_t(numel(out)));
        if (res_mode == kResSumAfter || res_mode == kResSumBefore)  // sum reads dst
            bf16_to_f32(static_cast<const uint16_t *>(out.data), of.data(), int64_t(of.size()));
        ptr[kDst] = of.data();
    }
    entry->execute(ptr);
    if (out.dtype == DType::bf16) f32_to_bf16(of.data(), static_cast<uint16_t *>(out.data), int64_t(of.size()));
}

void matmul_cache_set_capacity(size_t capacity) { cache().set_capacity(capacity); }
CacheStats matmul_cache_stats() { return cache().stats(); }
std::vector<std::string> matmul_cached_impls() {
    std::vector<std::string> out;
    for (auto &e : cache().values()) out.push_back(e->impl);
    return out;
}
void matmul_cache_clear() { cache().clear(); }

std::string matmul_impl_info(const MatmulPlan &p, DType x, DType y, DType out, const Epilogue &ep) {
    const int res_mode = residual_mode(ep);
    EntryTypes t{x, y, out, ep.bias.present() ? ep.bias.dtype : DType::undefined,
                 (res_mode == kResAddAfter || res_mode == kResAddBefore) ? ep.residual.dtype : DType::undefined};
    return lookup(p, t, ep.act, res_mode, apply_plan_threads(p))->impl;
}

}  // namespace fw
