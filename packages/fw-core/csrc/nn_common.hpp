// Shared machinery of the nn kernels (convolution, normalization, softmax):
// a cached oneDNN primitive that runs on the caller's plain buffers.
//
// A kernel describes each argument as the caller holds it (`ArgSpec`: the
// oneDNN argument, the plain memory descriptor of the caller's buffer, whether
// the primitive reads it, writes it, or both). The primitive may want another
// layout (blocked formats chosen through `format_tag::any`) or another data
// type (bf16 computed in f32 on CPUs without bf16 kernels): `Prim` then keeps
// a reorder per such argument and converts on the way in / out, using buffers
// of its own that are allocated once per concurrent caller and reused.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "lru_cache.hpp"
#include "matmul.hpp"

namespace fw {
namespace nn {

using dnnl::memory;

memory::data_type dnnl_type(DType t);

// Dense row-major descriptor.
memory::desc plain_md(const memory::dims &dims, memory::data_type dt);

// An activation tensor of logical dims [N, C, *S] stored channel-first
// (N, C, *S) or channel-last (N, *S, C), dense.
memory::desc act_md(const memory::dims &ncs, memory::data_type dt, bool channel_last);

// The same descriptor with format_tag::any (the primitive picks the layout).
memory::desc any_md(const memory::dims &dims, memory::data_type dt);

enum Dir : uint8_t { kIn = 1, kOut = 2, kInOut = 3 };

struct ArgSpec {
    int arg = 0;          // DNNL_ARG_*
    memory::desc user;    // the caller's buffer: plain layout, caller's dtype
    Dir dir = kIn;
    // Taken as it is, never reordered (runtime scales and zero points: the primitive
    // descriptor reports no memory descriptor for them).
    bool raw = false;
};

// A primitive with the reorders that connect it to the caller's buffers.
class Prim {
public:
    Prim();
    ~Prim();
    Prim(const Prim &) = delete;
    Prim &operator=(const Prim &) = delete;

    // `pd` is the primitive's descriptor and `prim` the primitive built from it;
    // `specs` lists every argument the caller supplies (execute() takes one
    // pointer per spec, in this order). Arguments whose primitive descriptor
    // differs from the caller's get a reorder.
    void init(const dnnl::primitive_desc &pd, dnnl::primitive prim, std::vector<ArgSpec> specs,
              const char *op);

    // Runs the primitive on the caller's buffers (one per spec; a null pointer
    // for an absent optional argument is not allowed: leave it out of specs).
    // `stamps` (optional, one per spec) marks constant inputs: a nonzero stamp
    // is the caller's promise that (pointer, stamp) names bytes that never change
    // (a predictor's weights, see fw.core.kernels.frozen). Such an input that needs
    // a reorder is reordered once and the result reused by every later call —
    // oneDNN's "weights prepacking" — instead of on every call.
    void execute(void *const *ptrs, const uint64_t *stamps = nullptr);

    const std::string &impl() const { return impl_; }
    // Whether any argument needs a reorder (diagnostics and tests).
    int reorders() const { return n_reorders_; }

private:
    struct Slot {
        ArgSpec spec;
        memory::desc prim_md;
        bool reorder = false;
        dnnl::primitive to_prim, to_user;  // reorders (empty when not needed)
        memory::desc to_prim_scratch, to_user_scratch;  // their scratchpads
    };
    struct ExecSet;
    std::unique_ptr<ExecSet> make_set();

    const char *op_ = "";
    dnnl::primitive prim_;
    std::vector<Slot> slots_;
    memory::desc scratch_md_;   // the primitive's user-mode scratchpad
    size_t scratch_bytes_ = 0;  // max over the primitive and its reorders
    std::string impl_;
    int n_reorders_ = 0;
    std::mutex pool_mu_;
    std::vector<std::unique_ptr<ExecSet>> pool_;

    // Constant inputs already reordered: (slot, caller pointer, stamp) -> buffer in
    // the primitive's layout, most recently used last. Bounded (kMaxPacked): one
    // primitive serves every layer of its geometry, so it may hold a few weights.
    struct Packed {
        size_t slot;
        const void *user;
        uint64_t stamp;
        std::shared_ptr<void> buf;
    };
    static constexpr size_t kMaxPacked = 64;
    std::mutex packed_mu_;
    std::vector<Packed> packed_;
    std::shared_ptr<void> packed(size_t slot, void *user, uint64_t stamp, ExecSet &es, void *scratch);

public:
    // How many constant inputs are held reordered (tests, diagnostics).
    size_t packed_count();
};

// Cache kinds, one LRU cache each.
enum class Kind : int {
    conv_fwd = 0,
    conv_bwd_data,
    conv_bwd_weights,
    bnorm_fwd,
    bnorm_bwd,
    lnorm_fwd,
    lnorm_bwd,
    softmax_fwd,
    eltwise_exp,
    int8_conv,
    int8_matmul,
    count
};
const char *kind_name(Kind k);

LruCache<Prim> &cache(Kind k);
// The implementation names (oneDNN's impl_info_str, e.g. "brgconv:avx512_core",
// or "ref:any" for the reference fallback) of every cached primitive of `k`.
std::vector<std::string> cached_impls(Kind k);
void cache_set_capacity(size_t capacity);
void cache_clear();

// Looks `key` up in the cache of `kind`, building the entry with `build` on a
// miss (the builders turn oneDNN errors into std::runtime_error naming the op).
template <class Build>
std::shared_ptr<Prim> lookup(Kind kind, const FlatKey &key, Build &&build) {
    auto &c = cache(kind);
    auto e = c.get(key);
    if (e) return e;
    return c.put(key, build());
}

// Builds `make(ct)` in bf16 when the caller's data is bf16 and oneDNN has a
// real (non-reference) bf16 kernel, else in f32 (bf16 then converted by the
// reorders at the boundary).
template <class Make>
std::shared_ptr<Prim> build_typed(DType user, Make &&make) {
    if (user == DType::bf16) {
        try {
            auto p = make(memory::data_type::bf16);
            if (p->impl().rfind("ref", 0) != 0) return p;
        } catch (const dnnl::error &) {
        }
    }
    return make(memory::data_type::f32);
}

// Thread count for a problem of about `work` multiply-adds (1 for small ones:
// see matmul's apply_plan_threads), applied to the calling thread.
int threads_for(double work);

// Thread count for a memory-bound pass over `n` elements.
int threads_for_elems(int64_t n);

}  // namespace nn
}  // namespace fw
