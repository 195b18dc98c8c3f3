#include "nn_conv.hpp"

#include <atomic>
#include <stdexcept>

#include "nn_conv_small.hpp"
#include "runtime.hpp"

namespace fw {
namespace nn {
namespace {

using dnnl::algorithm;
using dnnl::prop_kind;

std::atomic<int> g_policy{0};
std::atomic<bool> g_prefer_jit_dw{true};  // see prefer_jit_dw

// The forward primitive never feeds a backward one (the gradient passes build
// their own forward hint), so it is created for inference: oneDNN may then pick
// kernels that keep no state for a backward pass.
constexpr prop_kind kFwdKind = prop_kind::forward_inference;

memory::dims src_dims(const ConvGeom &g) {
    memory::dims d{g.N, g.C};
    for (int i = 0; i < g.nd; ++i) d.push_back(g.in[i]);
    return d;
}

memory::dims dst_dims(const ConvGeom &g) {
    memory::dims d{g.N, g.O};
    for (int i = 0; i < g.nd; ++i) d.push_back(g.out[i]);
    return d;
}

// fw's [O, C/G, *K] read as oneDNN's [G, O/G, C/G, *K] when grouped: same memory.
memory::dims wei_dims(const ConvGeom &g) {
    memory::dims d;
    if (g.G > 1) d = {g.G, g.O / g.G, g.C / g.G};
    else d = {g.O, g.C};
    for (int i = 0; i < g.nd; ++i) d.push_back(g.k[i]);
    return d;
}

memory::dims spatial(const int64_t *v, int nd, int64_t minus = 0) {
    memory::dims d;
    for (int i = 0; i < nd; ++i) d.push_back(v[i] - minus);
    return d;
}

// The activation layout a pass runs in: the caller's, channel-last (plain),
// or oneDNN's choice (usually blocked nChw8c), the last two with reorders
// from/to the caller's layout. Measured on the 2-core AVX2 reference machine
// (bench_nn_ops.py): on plain channel-first data oneDNN falls back to im2col +
// GEMM ("gemm:jit"), slower than its direct blocked kernels plus reorders;
// channel-last data has direct kernels of its own ("brgconv") except for
// backward data; the weight gradient of a layer with few input channels (the
// first layer of a network) is fastest channel-last, and its data gradient
// with GEMM on the plain layout (2x faster than the blocked kernel there).
enum Lay { kUser = 0, kChannelLast, kAny };
enum Pass { kFwd = 0, kBwdData, kBwdWeights };

Lay layout_for(const ConvGeom &g, Pass pass) {
    const int p = g_policy.load(std::memory_order_relaxed);
    if (p == 1) return kUser;
    if (p == 2) return kAny;
    if (pass == kBwdWeights && g.C / g.G < 8) return g.channel_last ? kUser : kChannelLast;
    if (pass == kBwdData && !g.channel_last && g.C / g.G < 4) return kUser;
    if (g.channel_last) return pass == kBwdData ? kAny : kUser;
    return kAny;
}

struct Mds {
    memory::desc src, wei, bias, dst;
};

Mds make_mds(const ConvGeom &g, memory::data_type ct, Lay lay, bool with_bias) {
    Mds m;
    const bool cl = lay == kChannelLast || (lay == kUser && g.channel_last);
    m.src = lay == kAny ? any_md(src_dims(g), ct) : act_md(src_dims(g), ct, cl);
    m.dst = lay == kAny ? any_md(dst_dims(g), ct) : act_md(dst_dims(g), ct, cl);
    m.wei = any_md(wei_dims(g), ct);
    if (with_bias) m.bias = plain_md({g.O}, ct);
    return m;
}

dnnl::convolution_forward::primitive_desc fwd_pd(const ConvGeom &g, const Mds &m, prop_kind pk,
                                                 const dnnl::primitive_attr &attr) {
    return dnnl::convolution_forward::primitive_desc(
        cpu_engine(), pk, algorithm::convolution_direct, m.src, m.wei, m.bias, m.dst,
        spatial(g.stride, g.nd), spatial(g.dil, g.nd, 1), spatial(g.pad_l, g.nd), spatial(g.pad_r, g.nd),
        attr);
}

// Depthwise forward convolutions on caller-laid-out (NHWC) f32 data: oneDNN 3.2 lists
// its brdgmm_dw kernel first, but its jit_dw kernel for the same ISA was faster or even
// on every 3x3 shape measured on the Zen 4 reference VM (one thread, hot, median of 100
// runs, us brdgmm -> jit_dw: 16@224x224 239 -> 151, 32@112 117 -> 77, 96@112 stride 2
// 118 -> 102, 144@56 134 -> 94, 64@56 60 -> 42, 192@28 45 -> 32, 512@28 133 -> 114,
// 384@14 22 -> 19, 576@14 33 -> 29, 960@7 13 -> 13; onnxruntime's depthwise kernels beat
// brdgmm_dw by as much on MobileNetV2). So such a convolution takes jit_dw when oneDNN
// offers it for the ISA of its first choice; otherwise the first choice stays.
// Measured in a C++ program against the library, see fw-inference's README ("Speed").
// Returns false when it moved `pd` past the first choice without finding jit_dw (the
// caller then builds the first choice again).
bool prefer_jit_dw(bool on, const ConvGeom &g, const Mds &m, Lay lay,
                   dnnl::convolution_forward::primitive_desc &pd) {
    if (!on || g.G < 2 || g.G != g.C || g.G != g.O || lay == kAny ||
        m.src.get_data_type() != memory::data_type::f32)
        return true;
    const std::string first = pd.impl_info_str();
    const auto colon = first.find(':');
    if (first.rfind("brdgmm_dw:", 0) != 0 || colon == std::string::npos) return true;
    const std::string want = "jit_dw" + first.substr(colon);  // e.g. "jit_dw:avx512_core"
    for (int i = 0; i < 4 && pd.next_impl(); ++i) {  // next_impl moves `pd` itself
        const std::string impl = pd.impl_info_str();
        if (impl == want) return true;
        if (impl.rfind("ref", 0) == 0) break;
    }
    return false;
}

FlatKey geom_key(const ConvGeom &g, DType dt, int nthreads, Lay lay) {
    FlatKey k;
    k.push(g.nd);
    k.push(g.N);
    k.push(g.C);
    k.push(g.O);
    k.push(g.G);
    for (int i = 0; i < g.nd; ++i) {
        k.push(g.in[i]);
        k.push(g.k[i]);
        k.push(g.stride[i]);
        k.push(g.dil[i]);
        k.push(g.pad_l[i]);
        k.push(g.pad_r[i]);
    }
    k.push(int64_t(g.channel_last) | int64_t(lay) << 1);
    k.push(int64_t(dt));
    k.push(nthreads);
    return k;
}

[[noreturn]] void fail(const char *op, const ConvGeom &g, const std::string &why) {
    throw std::runtime_error(std::string(op) + ": oneDNN could not create the primitive for " + g.str() +
                             ": " + why);
}

std::shared_ptr<Prim> fwd_entry(const ConvGeom &g, DType dt, bool bias, Activation act, bool residual) {
    const int nt = threads_for(g.work());
    const Lay lay = layout_for(g, kFwd);
    FlatKey key = geom_key(g, dt, nt, lay);
    const bool jit_dw = g_prefer_jit_dw.load(std::memory_order_relaxed);
    key.push(int64_t(bias) | int64_t(residual) << 1 | int64_t(jit_dw) << 2 | int64_t(act) << 8);
    return lookup(Kind::conv_fwd, key, [&] {
        try {
            return build_typed(dt, [&](memory::data_type ct) {
                Mds m = make_mds(g, ct, lay, bias);
                const auto udt = dnnl_type(dt);
                dnnl::post_ops po;
                append_activation(po, act);
                int res_arg = 0;
                if (residual) {
                    // The residual operand must be in the layout the primitive writes its
                    // output in: a binary post-op whose second source has another layout
                    // (plain NCHW next to a blocked or channel-last output) has no
                    // optimized kernel and oneDNN falls back to `ref:any`, 100x slower
                    // (measured on ResNet-18's residual convs). So the output layout is
                    // chosen first, without the post-op, and the residual follows it;
                    // Prim reorders the caller's residual into it.
                    dnnl::primitive_attr probe = user_attr();
                    dnnl::post_ops act_only;
                    append_activation(act_only, act);
                    probe.set_post_ops(act_only);
                    const memory::desc res_md = fwd_pd(g, m, kFwdKind, probe).dst_desc();
                    m.dst = res_md;
                    res_arg = DNNL_ARG_ATTR_MULTIPLE_POST_OP(po.len()) | DNNL_ARG_SRC_1;
                    po.append_binary(algorithm::binary_add, res_md);
                }
                dnnl::primitive_attr attr = user_attr();
                attr.set_post_ops(po);
                auto pd = fwd_pd(g, m, kFwdKind, attr);
                if (!prefer_jit_dw(jit_dw, g, m, lay, pd)) pd = fwd_pd(g, m, kFwdKind, attr);
                std::vector<ArgSpec> specs{
                    {DNNL_ARG_SRC, act_md(src_dims(g), udt, g.channel_last), kIn},
                    {DNNL_ARG_WEIGHTS, plain_md(wei_dims(g), udt), kIn},
                    {DNNL_ARG_DST, act_md(dst_dims(g), udt, g.channel_last), kOut}};
                if (bias) specs.push_back({DNNL_ARG_BIAS, plain_md({g.O}, udt), kIn});
                if (residual) specs.push_back({res_arg, act_md(dst_dims(g), udt, g.channel_last), kIn});
                auto p = std::make_shared<Prim>();
                p->init(pd, dnnl::convolution_forward(pd), std::move(specs), "conv");
                return p;
            });
        } catch (const dnnl::error &e) {
            fail("conv", g, e.what());
        }
    });
}

std::shared_ptr<Prim> bwd_data_entry(const ConvGeom &g, DType dt) {
    const int nt = threads_for(g.work());
    const Lay lay = layout_for(g, kBwdData);
    return lookup(Kind::conv_bwd_data, geom_key(g, dt, nt, lay), [&] {
        try {
            return build_typed(dt, [&](memory::data_type ct) {
                Mds m = make_mds(g, ct, lay, false);
                auto hint = fwd_pd(g, m, prop_kind::forward_training, dnnl::primitive_attr());
                auto pd = dnnl::convolution_backward_data::primitive_desc(
                    cpu_engine(), algorithm::convolution_direct, m.src, m.wei, m.dst, spatial(g.stride, g.nd),
                    spatial(g.dil, g.nd, 1), spatial(g.pad_l, g.nd), spatial(g.pad_r, g.nd), hint,
                    user_attr());
                const auto udt = dnnl_type(dt);
                std::vector<ArgSpec> specs{
                    {DNNL_ARG_DIFF_DST, act_md(dst_dims(g), udt, g.channel_last), kIn},
                    {DNNL_ARG_WEIGHTS, plain_md(wei_dims(g), udt), kIn},
                    {DNNL_ARG_DIFF_SRC, act_md(src_dims(g), udt, g.channel_last), kOut}};
                auto p = std::make_shared<Prim>();
                p->init(pd, dnnl::convolution_backward_data(pd), std::move(specs), "conv backward data");
                return p;
            });
        } catch (const dnnl::error &e) {
            fail("conv backward data", g, e.what());
        }
    });
}

std::shared_ptr<Prim> bwd_weights_entry(const ConvGeom &g, DType dt, bool bias) {
    const int nt = threads_for(g.work());
    const Lay lay = layout_for(g, kBwdWeights);
    FlatKey key = geom_key(g, dt, nt, lay);
    key.push(bias);
    return lookup(Kind::conv_bwd_weights, key, [&] {
        try {
            return build_typed(dt, [&](memory::data_type ct) {
                Mds m = make_mds(g, ct, lay, bias);
                auto hint = fwd_pd(g, m, prop_kind::forward_training, dnnl::primitive_attr());
                auto pd = dnnl::convolution_backward_weights::primitive_desc(
                    cpu_engine(), algorithm::convolution_direct, m.src, m.wei, m.bias, m.dst,
                    spatial(g.stride, g.nd), spatial(g.dil, g.nd, 1), spatial(g.pad_l, g.nd),
                    spatial(g.pad_r, g.nd), hint, user_attr());
                const auto udt = dnnl_type(dt);
                std::vector<ArgSpec> specs{
                    {DNNL_ARG_SRC, act_md(src_dims(g), udt, g.channel_last), kIn},
                    {DNNL_ARG_DIFF_DST, act_md(dst_dims(g), udt, g.channel_last), kIn},
                    {DNNL_ARG_DIFF_WEIGHTS, plain_md(wei_dims(g), udt), kOut}};
                if (bias) specs.push_back({DNNL_ARG_DIFF_BIAS, plain_md({g.O}, udt), kOut});
                auto p = std::make_shared<Prim>();
                p->init(pd, dnnl::convolution_backward_weights(pd), std::move(specs), "conv backward weights");
                return p;
            });
        } catch (const dnnl::error &e) {
            fail("conv backward weights", g, e.what());
        }
    });
}

}  // namespace

double ConvGeom::work() const {
    double w = double(N) * double(O) * double(C / std::max<int64_t>(G, 1));
    for (int i = 0; i < nd; ++i) w *= double(out[i]) * double(k[i]);
    return w;
}

std::string ConvGeom::str() const {
    auto list = [&](const int64_t *v) {
        std::string s = "[";
        for (int i = 0; i < nd; ++i) s += (i ? ", " : "") + std::to_string(v[i]);
        return s + "]";
    };
    return "N=" + std::to_string(N) + " C_in=" + std::to_string(C) + " C_out=" + std::to_string(O) +
           " groups=" + std::to_string(G) + " input " + list(in) + " kernel " + list(k) + " output " +
           list(out) + " stride " + list(stride) + " dilation " + list(dil) + " padding " + list(pad_l) +
           "+" + list(pad_r) + (channel_last ? " channel-last" : " channel-first");
}

void check_geometry(const ConvGeom &g, const char *op) {
    auto bad = [&](const std::string &why) {
        throw std::invalid_argument(std::string(op) + ": " + why + " (" + g.str() + ")");
    };
    if (g.nd < 1 || g.nd > 3) bad("1 to 3 spatial dims are supported");
    if (g.G < 1 || g.C % g.G || g.O % g.G) bad("groups must divide both channel counts");
    if (g.N < 1 || g.C < 1 || g.O < 1) bad("empty batch or channels");
    for (int i = 0; i < g.nd; ++i) {
        if (g.k[i] < 1 || g.stride[i] < 1 || g.dil[i] < 1 || g.in[i] < 1 || g.out[i] < 1)
            bad("sizes, strides and dilations must be positive");
        const int64_t ek = g.dil[i] * (g.k[i] - 1) + 1;
        const int64_t span = g.in[i] + g.pad_l[i] + g.pad_r[i] - ek;
        if (g.pad_l[i] < 0 || g.pad_r[i] < 0 || span < 0 || span / g.stride[i] + 1 != g.out[i])
            bad("the output size does not follow from input, kernel, stride, dilation and padding");
    }
}

void conv_forward(const ConvGeom &g, const Operand &x, const Operand &w, const Operand &y,
                  const ConvEpilogue &ep, uint64_t weight_stamp) {
    if (conv_small_forward(g, x, w, y, ep)) return;  // few output channels: nn_conv_small.cpp
    auto e = fwd_entry(g, x.dtype, ep.bias != nullptr, ep.act, ep.residual != nullptr);
    void *ptrs[5] = {x.data, w.data, y.data};
    const uint64_t stamps[5] = {0, weight_stamp, 0, 0, 0};
    int n = 3;
    if (ep.bias) ptrs[n++] = ep.bias->data;
    if (ep.residual) ptrs[n++] = ep.residual->data;
    e->execute(ptrs, stamps);
}

void conv_backward_data(const ConvGeom &g, const Operand &gy, const Operand &w, const Operand &gx) {
    auto e = bwd_data_entry(g, gy.dtype);
    void *ptrs[3] = {gy.data, w.data, gx.data};
    e->execute(ptrs);
}

void conv_backward_weights(const ConvGeom &g, const Operand &x, const Operand &gy, const Operand &gw,
                           const Operand *gb) {
    auto e = bwd_weights_entry(g, x.dtype, gb != nullptr);
    void *ptrs[4] = {x.data, gy.data, gw.data, gb ? gb->data : nullptr};
    e->execute(ptrs);
}

std::string conv_impl(const ConvGeom &g, DType dt, int which) {
    std::shared_ptr<Prim> e;
    if (which == 0) e = fwd_entry(g, dt, false, Activation::none, false);
    else if (which == 1) e = bwd_data_entry(g, dt);
    else e = bwd_weights_entry(g, dt, true);
    return e->impl() + (e->reorders() ? " (+" + std::to_string(e->reorders()) + " reorders)" : "");
}

void conv_set_layout_policy(int policy) {
    if (policy < 0 || policy > 2)
        throw std::invalid_argument("conv_set_layout_policy: policy must be 0, 1 or 2");
    g_policy.store(policy, std::memory_order_relaxed);
}

int conv_layout_policy() { return g_policy.load(std::memory_order_relaxed); }

void conv_set_prefer_jit_dw(bool on) { g_prefer_jit_dw.store(on, std::memory_order_relaxed); }

bool conv_prefer_jit_dw() { return g_prefer_jit_dw.load(std::memory_order_relaxed); }

}  // namespace nn
}  // namespace fw
