#include "nn_common.hpp"

#include <oneapi/dnnl/dnnl_debug.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include "runtime.hpp"

namespace fw {
namespace nn {

memory::data_type dnnl_type(DType t) {
    return t == DType::bf16 ? memory::data_type::bf16 : memory::data_type::f32;
}

memory::desc plain_md(const memory::dims &dims, memory::data_type dt) {
    memory::dims strides(dims.size());
    int64_t s = 1;
    for (size_t i = dims.size(); i-- > 0;) {
        strides[i] = s;
        s *= std::max<int64_t>(dims[i], 1);
    }
    return memory::desc(dims, dt, strides);
}

memory::desc act_md(const memory::dims &ncs, memory::data_type dt, bool channel_last) {
    if (!channel_last) return plain_md(ncs, dt);
    // channel-last: memory order N, S..., C
    const size_t nd = ncs.size();
    memory::dims strides(nd);
    int64_t s = 1;
    strides[1] = s;
    s *= std::max<int64_t>(ncs[1], 1);
    for (size_t i = nd; i-- > 2;) {
        strides[i] = s;
        s *= std::max<int64_t>(ncs[i], 1);
    }
    strides[0] = s;
    return memory::desc(ncs, dt, strides);
}

memory::desc any_md(const memory::dims &dims, memory::data_type dt) {
    return memory::desc(dims, dt, memory::format_tag::any);
}

int threads_for(double work) {
    // Below ~64^3 multiply-adds a second thread saves nothing and an OpenMP
    // barrier can stall for a scheduler slice when the other core is busy.
    return apply_num_threads(work <= 64.0 * 64.0 * 64.0 ? 1 : 1 << 30);
}

int threads_for_elems(int64_t n) { return apply_num_threads(n < (int64_t(1) << 16) ? 1 : 1 << 30); }

// ---------------------------------------------------------------- Prim

namespace {

// Two dense descriptors address the same bytes when dims, data type and the
// strides of every dim longer than 1 agree (a size-1 dim's stride is never
// used: NCHW with C=1 is NHWC).
bool same_memory(const memory::desc &a, const memory::desc &b) {
    if (a == b) return true;
    if (a.get_format_kind() != memory::format_kind::blocked ||
        b.get_format_kind() != memory::format_kind::blocked || a.get_inner_nblks() || b.get_inner_nblks() ||
        a.get_data_type() != b.get_data_type() || a.get_dims() != b.get_dims())
        return false;
    const auto d = a.get_dims();
    const auto sa = a.get_strides(), sb = b.get_strides();
    for (size_t i = 0; i < d.size(); ++i)
        if (d[i] > 1 && sa[i] != sb[i]) return false;
    return a.get_size() == b.get_size();
}

}  // namespace

struct Prim::ExecSet {
    std::vector<dnnl_memory_t> prim_mem;  // what the primitive reads/writes
    std::vector<dnnl_memory_t> user_mem;  // caller's buffers (reordered slots only)
    std::vector<void *> buffers;          // owned storage of reordered slots
    std::vector<dnnl_exec_arg_t> args;    // the primitive's, then its scratchpad's
    // scratchpad memories (null when that primitive needs none), all pointed at
    // the executing thread's thread_scratchpad() on each call
    dnnl_memory_t scratch = nullptr;
    std::vector<dnnl_memory_t> scratch_in, scratch_out;  // per slot: its reorders'
    ~ExecSet() {
        for (auto m : prim_mem)
            if (m) dnnl_memory_destroy(m);
        for (auto m : user_mem)
            if (m) dnnl_memory_destroy(m);
        for (auto b : buffers) std::free(b);
        if (scratch) dnnl_memory_destroy(scratch);
        for (auto m : scratch_in)
            if (m) dnnl_memory_destroy(m);
        for (auto m : scratch_out)
            if (m) dnnl_memory_destroy(m);
    }
};

Prim::Prim() = default;
Prim::~Prim() = default;

void Prim::init(const dnnl::primitive_desc &pd, dnnl::primitive prim, std::vector<ArgSpec> specs,
                const char *op) {
    op_ = op;
    // every primitive runs on the caller's thread scratchpad (see user_attr())
    if (pd.get_primitive_attr().get_scratchpad_mode() != dnnl::scratchpad_mode::user)
        throw std::logic_error(std::string(op) + ": primitive built without user_attr() (scratchpad_mode::user)");
    prim_ = std::move(prim);
    impl_ = pd.impl_info_str();
    scratch_md_ = pd.scratchpad_desc();
    scratch_bytes_ = scratch_md_.get_size();
    slots_.clear();
    n_reorders_ = 0;
    for (auto &s : specs) {
        Slot sl;
        sl.spec = s;
        sl.prim_md = s.raw ? s.user : pd.query_md(dnnl::query::exec_arg_md, s.arg);
        if (!s.raw && !same_memory(sl.prim_md, s.user)) {
            sl.reorder = true;
            ++n_reorders_;
            const auto &eng = cpu_engine();
            if (s.dir & kIn) {
                auto rpd = dnnl::reorder::primitive_desc(eng, s.user, eng, sl.prim_md, user_attr());
                sl.to_prim = dnnl::reorder(rpd);
                sl.to_prim_scratch = rpd.scratchpad_desc();
                scratch_bytes_ = std::max(scratch_bytes_, sl.to_prim_scratch.get_size());
            }
            if (s.dir & kOut) {
                auto rpd = dnnl::reorder::primitive_desc(eng, sl.prim_md, eng, s.user, user_attr());
                sl.to_user = dnnl::reorder(rpd);
                sl.to_user_scratch = rpd.scratchpad_desc();
                scratch_bytes_ = std::max(scratch_bytes_, sl.to_user_scratch.get_size());
            }
        }
        slots_.push_back(std::move(sl));
    }
}

std::unique_ptr<Prim::ExecSet> Prim::make_set() {
    auto es = std::make_unique<ExecSet>();
    const size_t n = slots_.size();
    es->prim_mem.assign(n, nullptr);
    es->user_mem.assign(n, nullptr);
    es->buffers.assign(n, nullptr);
    es->args.resize(n);
    es->scratch_in.assign(n, nullptr);
    es->scratch_out.assign(n, nullptr);
    const auto eng = cpu_engine().get();
    auto scratch_mem = [&](const memory::desc &md, dnnl_memory_t *m) {
        if (!md.get_size()) return;
        dnnl_status_t st = dnnl_memory_create(m, md.get(), eng, DNNL_MEMORY_NONE);
        if (st != dnnl_success)
            throw std::runtime_error(std::string(op_) + ": dnnl_memory_create failed: " + dnnl_status2str(st));
    };
    scratch_mem(scratch_md_, &es->scratch);
    if (es->scratch) es->args.push_back({DNNL_ARG_SCRATCHPAD, es->scratch});
    for (size_t i = 0; i < n; ++i) {
        scratch_mem(slots_[i].to_prim_scratch, &es->scratch_in[i]);
        scratch_mem(slots_[i].to_user_scratch, &es->scratch_out[i]);
    }
    for (size_t i = 0; i < n; ++i) {
        const Slot &s = slots_[i];
        dnnl_status_t st = dnnl_memory_create(&es->prim_mem[i], s.prim_md.get(), eng, DNNL_MEMORY_NONE);
        if (st == dnnl_success && s.reorder) {
            const size_t bytes = (s.prim_md.get_size() + 63) / 64 * 64;
            es->buffers[i] = std::aligned_alloc(64, bytes ? bytes : 64);
            if (!es->buffers[i]) throw std::bad_alloc();
            st = dnnl_memory_set_data_handle(es->prim_mem[i], es->buffers[i]);
            if (st == dnnl_success)
                st = dnnl_memory_create(&es->user_mem[i], s.spec.user.get(), eng, DNNL_MEMORY_NONE);
        }
        if (st != dnnl_success)
            throw std::runtime_error(std::string(op_) + ": dnnl_memory_create failed: " + dnnl_status2str(st));
        es->args[i] = {s.spec.arg, es->prim_mem[i]};
    }
    return es;
}

size_t Prim::packed_count() {
    std::lock_guard<std::mutex> lock(packed_mu_);
    return packed_.size();
}

std::shared_ptr<void> Prim::packed(size_t slot, void *user, uint64_t stamp, ExecSet &es, void *scratch) {
    {
        std::lock_guard<std::mutex> lock(packed_mu_);
        for (size_t i = 0; i < packed_.size(); ++i) {
            if (packed_[i].slot == slot && packed_[i].user == user && packed_[i].stamp == stamp) {
                auto hit = packed_[i];
                packed_.erase(packed_.begin() + long(i));
                packed_.push_back(hit);
                return hit.buf;
            }
        }
    }
    // miss: reorder into a new buffer outside the lock (a racing thread may pack
    // the same weights too; the first one stored wins, both results are equal)
    const Slot &s = slots_[slot];
    const size_t bytes = (s.prim_md.get_size() + 63) / 64 * 64;
    void *raw = std::aligned_alloc(64, bytes ? bytes : 64);
    if (!raw) throw std::bad_alloc();
    std::shared_ptr<void> buf(raw, [](void *p) { std::free(p); });
    dnnl_memory_t target = es.prim_mem[slot];
    dnnl_status_t st = dnnl_memory_set_data_handle(es.user_mem[slot], user);
    if (st == dnnl_success) st = dnnl_memory_set_data_handle(target, raw);
    dnnl_memory_t sp = es.scratch_in[slot];
    if (st == dnnl_success && sp) st = dnnl_memory_set_data_handle(sp, scratch);
    if (st == dnnl_success) {
        dnnl_exec_arg_t a[3] = {{DNNL_ARG_FROM, es.user_mem[slot]}, {DNNL_ARG_TO, target}, {DNNL_ARG_SCRATCHPAD, sp}};
        st = dnnl_primitive_execute(s.to_prim.get(), cpu_stream().get(), sp ? 3 : 2, a);
    }
    if (st != dnnl_success)
        throw std::runtime_error(std::string(op_) + ": packing a constant input failed: " + dnnl_status2str(st));
    std::lock_guard<std::mutex> lock(packed_mu_);
    for (auto &p : packed_)
        if (p.slot == slot && p.user == user && p.stamp == stamp) return p.buf;
    if (packed_.size() >= kMaxPacked) packed_.erase(packed_.begin());
    packed_.push_back({slot, user, stamp, buf});
    return buf;
}

void Prim::execute(void *const *ptrs, const uint64_t *stamps) {
    std::unique_ptr<ExecSet> es;
    {
        std::lock_guard<std::mutex> lock(pool_mu_);
        if (!pool_.empty()) {
            es = std::move(pool_.back());
            pool_.pop_back();
        }
    }
    if (!es) es = make_set();
    dnnl_status_t st = dnnl_success;
    auto stream = cpu_stream().get();
    const size_t n = slots_.size();
    // the primitive and its reorders run one after another: they share the buffer
    void *scratch = nullptr;
    try {
        if (scratch_bytes_) scratch = thread_scratchpad(scratch_bytes_);
    } catch (...) {
        std::lock_guard<std::mutex> lock(pool_mu_);
        pool_.push_back(std::move(es));
        throw;
    }
    auto reorder = [&](const dnnl::primitive &r, dnnl_memory_t from, dnnl_memory_t to, dnnl_memory_t sp) {
        dnnl_exec_arg_t a[3] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}, {DNNL_ARG_SCRATCHPAD, sp}};
        if (sp) {
            dnnl_status_t s = dnnl_memory_set_data_handle(sp, scratch);
            if (s != dnnl_success) return s;
        }
        return dnnl_primitive_execute(r.get(), stream, sp ? 3 : 2, a);
    };
    if (es->scratch) st = dnnl_memory_set_data_handle(es->scratch, scratch);
    std::shared_ptr<void> held[8];  // packed constants in use by this call
    size_t n_held = 0;
    for (size_t i = 0; i < n && st == dnnl_success; ++i) {
        const Slot &s = slots_[i];
        if (!s.reorder) {
            st = dnnl_memory_set_data_handle(es->prim_mem[i], ptrs[i]);
            continue;
        }
        if (stamps && stamps[i] && s.spec.dir == kIn && n_held < 8) {
            try {
                held[n_held] = packed(i, ptrs[i], stamps[i], *es, scratch);
            } catch (...) {
                std::lock_guard<std::mutex> lock(pool_mu_);
                pool_.push_back(std::move(es));
                throw;
            }
            st = dnnl_memory_set_data_handle(es->prim_mem[i], held[n_held++].get());
            continue;
        }
        // this set's own buffer (a packed constant may have been pointed at before)
        st = dnnl_memory_set_data_handle(es->prim_mem[i], es->buffers[i]);
        if (st == dnnl_success) st = dnnl_memory_set_data_handle(es->user_mem[i], ptrs[i]);
        if (st == dnnl_success && (s.spec.dir & kIn))
            st = reorder(s.to_prim, es->user_mem[i], es->prim_mem[i], es->scratch_in[i]);
    }
    if (st == dnnl_success)
        st = dnnl_primitive_execute(prim_.get(), stream, int(es->args.size()), es->args.data());
    for (size_t i = 0; i < n && st == dnnl_success; ++i) {
        const Slot &s = slots_[i];
        if (s.reorder && (s.spec.dir & kOut))
            st = reorder(s.to_user, es->prim_mem[i], es->user_mem[i], es->scratch_out[i]);
    }
    {
        std::lock_guard<std::mutex> lock(pool_mu_);
        pool_.push_back(std::move(es));
    }
    if (st != dnnl_success)
        throw std::runtime_error(std::string(op_) + ": oneDNN execution failed: " + dnnl_status2str(st));
}

// ---------------------------------------------------------------- caches

const char *kind_name(Kind k) {
    switch (k) {
        case Kind::conv_fwd: return "conv_fwd";
        case Kind::conv_bwd_data: return "conv_bwd_data";
        case Kind::conv_bwd_weights: return "conv_bwd_weights";
        case Kind::bnorm_fwd: return "batch_norm_fwd";
        case Kind::bnorm_bwd: return "batch_norm_bwd";
        case Kind::lnorm_fwd: return "layer_norm_fwd";
        case Kind::lnorm_bwd: return "layer_norm_bwd";
        case Kind::softmax_fwd: return "softmax_fwd";
        case Kind::eltwise_exp: return "exp";
        case Kind::int8_conv: return "int8_conv";
        case Kind::int8_matmul: return "int8_matmul";
        default: return "?";
    }
}

std::vector<std::string> cached_impls(Kind k) {
    std::vector<std::string> out;
    for (auto &p : cache(k).values()) out.push_back(p->impl());
    return out;
}

LruCache<Prim> &cache(Kind k) {
    // leaked like the engine: oneDNN objects must not outlive libdnnl at exit
    static auto *caches = [] {
        auto *v = new std::vector<std::unique_ptr<LruCache<Prim>>>();
        for (int i = 0; i < int(Kind::count); ++i) v->emplace_back(new LruCache<Prim>(128));
        return v;
    }();
    return *(*caches)[size_t(k)];
}

void cache_set_capacity(size_t capacity) {
    for (int i = 0; i < int(Kind::count); ++i) cache(Kind(i)).set_capacity(capacity);
}

void cache_clear() {
    for (int i = 0; i < int(Kind::count); ++i) cache(Kind(i)).clear();
}

}  // namespace nn
}  // namespace fw
