// Bindings of the kernel family: optimizer updates and fused elementwise chains in own C++.
// The Python side is fw/core/kernels/cpu_fused.py, which decides what runs here
// (dtypes, layouts, aliasing) and falls back to the NumPy kernels otherwise;
// these functions re-check what memory safety depends on and raise ValueError /
// TypeError naming the op otherwise.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "fused_common.hpp"
#include "fused_elementwise.hpp"
#include "fused_optim.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

using AnyIn = nb::ndarray<nb::ro, nb::device::cpu>;
using AnyOut = nb::ndarray<nb::device::cpu>;
using fw::fused::EwDT;
using fw::fused::ODT;

std::string shape_str(const int64_t *shape, size_t ndim) {
    std::string s = "[";
    for (size_t i = 0; i < ndim; ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

std::string dtype_str(const nb::dlpack::dtype &d) {
    using code = nb::dlpack::dtype_code;
    switch (code(d.code)) {
        case code::Float: return "float" + std::to_string(d.bits);
        case code::Int: return "int" + std::to_string(d.bits);
        case code::UInt: return d.bits == 16 ? "bfloat16 (as uint16 bits)" : "uint" + std::to_string(d.bits);
        case code::Bfloat: return "bfloat" + std::to_string(d.bits);
        case code::Bool: return "bool";
        default: return "dtype(code=" + std::to_string(d.code) + ")";
    }
}

template <class A>
std::string describe(const A &a) {
    return dtype_str(a.dtype()) + shape_str(a.shape_ptr(), a.ndim());
}

template <class A>
bool c_contiguous(const A &a) {
    if (a.size() == 0) return true;
    int64_t expected = 1;
    for (size_t i = a.ndim(); i-- > 0;) {
        const int64_t n = a.shape_ptr()[i];
        if (n != 1 && a.stride_ptr()[i] != expected) return false;
        expected *= n;
    }
    return true;
}

// float32 / float16 / bfloat16 (uint16 bits) / bool, or -1
int dtype_code(const nb::dlpack::dtype &d) {
    using code = nb::dlpack::dtype_code;
    if (d.lanes != 1) return -1;
    if (d.code == uint8_t(code::Float) && d.bits == 32) return 3;
    if (d.code == uint8_t(code::Float) && d.bits == 16) return 1;
    if ((d.code == uint8_t(code::UInt) || d.code == uint8_t(code::Bfloat)) && d.bits == 16) return 2;
    if (d.code == uint8_t(code::Bool) && d.bits == 8) return 0;
    return -1;
}

void require_cpu() {
    if (!fw::fused::cpu_supported())
        throw std::runtime_error("fw.core._C fused kernels need a CPU with AVX2, FMA and F16C");
}

// ------------------------------------------------------------------ optimizer updates
const char *kRuleNames[] = {"sgd", "momentum", "adam", "adamax", "adagrad", "adadelta", "rmsprop", "lamb", "asgd"};

ODT odt(const std::string &op, const char *what, const nb::dlpack::dtype &d, const std::string &desc) {
    switch (dtype_code(d)) {
        case 3: return ODT::f32;
        case 1: return ODT::f16;
        case 2: return ODT::bf16;
        default: break;
    }
    throw nb::type_error((op + ": " + what + " " + desc + " must be float32, float16 or bfloat16").c_str());
}

template <class A>
void check_vector(const std::string &op, const char *what, const A &a, int64_t n) {
    if (!c_contiguous(a))
        throw std::invalid_argument(op + ": " + what + " " + describe(a) + " must be C-contiguous");
    if (int64_t(a.size()) != n)
        throw std::invalid_argument(op + ": " + what + " " + describe(a) + " must have " + std::to_string(n) +
                                    " elements (the param's)");
}

// The byte range [begin, end) an array covers.
template <class A>
std::pair<uintptr_t, uintptr_t> byte_range(const A &a) {
    const uintptr_t b = reinterpret_cast<uintptr_t>(a.data());
    return {b, b + uintptr_t(a.nbytes())};
}

// Each output may be its own input (in place) but must not partially overlap
// any operand, nor share memory with another input or output: the kernels read
// element i of every input before writing element i of the outputs, which a
// shifted or shared buffer breaks (silently wrong updates). A few pointer
// comparisons, no pass over data.
void check_aliasing(const std::string &op, const AnyIn &param, const AnyIn &grad, const AnyOut &param_out,
                    const std::vector<AnyIn> &states, const std::vector<AnyOut> &state_outs) {
    struct R {
        std::pair<uintptr_t, uintptr_t> r;
        int pair;   // the output slot this operand belongs to: 0 param, i + 1 state i, -1 grad
        bool out;
    };
    R rs[3 + 2 * 3];  // states.size() <= 3 was checked by the caller
    int n = 0;
    rs[n++] = {byte_range(param), 0, false};
    rs[n++] = {byte_range(grad), -1, false};
    rs[n++] = {byte_range(param_out), 0, true};
    for (size_t i = 0; i < states.size(); ++i) {
        rs[n++] = {byte_range(states[i]), int(i) + 1, false};
        rs[n++] = {byte_range(state_outs[i]), int(i) + 1, true};
    }
    auto name = [](const R &x) -> std::string {
        if (x.pair < 0) return "grad";
        if (x.pair == 0) return x.out ? "param_out" : "param";
        return std::string(x.out ? "state output " : "state ") + std::to_string(x.pair - 1);
    };
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
            if (i == j || !rs[i].out || (rs[j].out && j < i)) continue;
            const R &o = rs[i], &a = rs[j];
            if (o.r.first == o.r.second || a.r.first == a.r.second) continue;  // empty
            if (o.r.first >= a.r.second || a.r.first >= o.r.second) continue;  // disjoint
            if (!a.out && a.pair == o.pair && a.r == o.r) continue;              // in place
            throw std::invalid_argument(op + ": " + name(o) + " overlaps " + name(a) +
                                        " (an output may only be its own input, in place)");
        }
}

void py_optim_update(int rule, const AnyIn &param, const AnyIn &grad, AnyOut param_out, const std::vector<AnyIn> &states,
                     std::vector<AnyOut> state_outs, const std::vector<double> &consts, const std::vector<bool> &flags,
                     std::optional<nb::ndarray<const int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>> segments) {
    require_cpu();
    if (rule < 0 || rule > int(fw::fused::Rule::asgd)) throw std::invalid_argument("optim_update: unknown rule");
    const std::string op = kRuleNames[rule];
    const int64_t n = int64_t(param.size());
    fw::fused::OptimArgs a;
    a.rule = fw::fused::Rule(rule);
    a.n = n;
    a.pdt = odt(op, "param", param.dtype(), describe(param));
    check_vector(op, "param", param, n);
    check_vector(op, "grad", grad, n);
    check_vector(op, "param_out", param_out, n);
    if (odt(op, "grad", grad.dtype(), describe(grad)) != a.pdt ||
        odt(op, "param_out", param_out.dtype(), describe(param_out)) != a.pdt)
        throw nb::type_error((op + ": param " + describe(param) + ", grad " + describe(grad) + " and param_out " +
                              describe(param_out) + " must share one dtype")
                                 .c_str());
    a.p = param.data();
    a.g = grad.data();
    a.po = param_out.data();
    if (states.size() != state_outs.size() || states.size() > 3)
        throw std::invalid_argument(op + ": states and state outputs must pair up (at most 3)");
    for (size_t i = 0; i < states.size(); ++i) {
        const ODT d = odt(op, "state", states[i].dtype(), describe(states[i]));
        if (i == 0) a.sdt = d;
        if (d != a.sdt || odt(op, "state output", state_outs[i].dtype(), describe(state_outs[i])) != a.sdt)
            throw nb::type_error((op + ": every state and state output must share one dtype").c_str());
        check_vector(op, "state", states[i], n);
        check_vector(op, "state output", state_outs[i], n);
        a.s[i] = states[i].data();
        a.so[i] = state_outs[i].data();
    }
    if (!fw::fused::optim_dtypes_supported(a.pdt, a.sdt))
        throw nb::type_error((op + ": no kernel for param " + describe(param) + " with state dtype " +
                              (states.empty() ? "?" : describe(states[0])))
                                 .c_str());
    static const int kStates[] = {0, 1, 2, 2, 1, 2, 2, 2, 2};  // required states per rule
    const size_t need = size_t(kStates[rule]) + ((a.rule == fw::fused::Rule::adam || a.rule == fw::fused::Rule::rmsprop) &&
                                                 !flags.empty() && flags[0]);
    if (states.size() != need)
        throw std::invalid_argument(op + ": expected " + std::to_string(need) + " states, got " +
                                    std::to_string(states.size()));
    if (consts.size() > 8 || flags.size() > 3) throw std::invalid_argument(op + ": too many constants");
    for (size_t i = 0; i < consts.size(); ++i) a.c[i] = float(consts[i]);
    for (size_t i = 0; i < flags.size(); ++i) a.flag[i] = flags[i];
    if (segments) {
        if (a.rule != fw::fused::Rule::lamb) throw std::invalid_argument(op + ": segments are for lamb only");
        const int64_t *s = segments->data();
        const int64_t k = int64_t(segments->shape(0));
        bool ok = k >= 1 && s[0] == 0;
        for (int64_t i = 1; ok && i < k; ++i) ok = s[i] >= s[i - 1] && s[i] <= n;
        if (!ok)
            throw std::invalid_argument(op + ": segments must start at 0 and be non-decreasing offsets <= " +
                                        std::to_string(n));
        a.seg = s;
        a.nseg = k;
    }
    check_aliasing(op, param, grad, param_out, states, state_outs);
    nb::gil_scoped_release nogil;
    fw::fused::optim_update(a);
}

// ------------------------------------------------------------------ fused_elementwise
using Code = std::vector<std::tuple<int, int, int, int, int, double>>;

std::vector<fw::fused::EwInstr> convert_code(const Code &code) {
    std::vector<fw::fused::EwInstr> c;
    c.reserve(code.size());
    for (const auto &[op, dt, a, b, cc, imm] : code) {
        if (op < 0 || op >= int(fw::fused::EwOp::count_) || dt < 0 || dt > 3)
            throw std::invalid_argument("fused_elementwise: bad opcode or dtype code");
        c.push_back({fw::fused::EwOp(op), EwDT(dt), a, b, cc, float(imm)});
    }
    return c;
}

std::string ew_shape_error(const char *what, int i, const AnyIn &a, const std::string &want) {
    return std::string("fused_elementwise: input ") + std::to_string(i) + " " + describe(a) + " " + what + " " + want;
}

void py_ew_run(const fw::fused::EwProgram &prog, const std::vector<AnyIn> &inputs, const std::vector<int> &kinds,
               int64_t row_len, AnyOut out) {
    require_cpu();
    const int nin = prog.n_inputs();
    if (int(inputs.size()) != nin || int(kinds.size()) != nin)
        throw std::invalid_argument("fused_elementwise: the program takes " + std::to_string(nin) + " inputs, got " +
                                    std::to_string(inputs.size()) + " (and " + std::to_string(kinds.size()) +
                                    " kinds)");
    if (!c_contiguous(out)) throw std::invalid_argument("fused_elementwise: out " + describe(out) + " must be C-contiguous");
    if (dtype_code(out.dtype()) != int(prog.out_dtype()))
        throw nb::type_error(("fused_elementwise: out " + describe(out) + " does not have the program's result dtype")
                                 .c_str());
    const int64_t n = int64_t(out.size());
    std::vector<fw::fused::EwInput> ins(static_cast<size_t>(nin));
    for (int i = 0; i < nin; ++i) {
        const AnyIn &a = inputs[size_t(i)];
        const int code = dtype_code(a.dtype());
        if (code < 0)
            throw nb::type_error(("fused_elementwise: input " + std::to_string(i) + " " + describe(a) +
                                  " must be float32, float16, bfloat16 (uint16 bits) or bool")
                                     .c_str());
        // range-checked before the uint8 cast (256 used to read as 0 = full, -255 as 1 = scalar)
        if (kinds[size_t(i)] < 0 || kinds[size_t(i)] > 2)
            throw std::invalid_argument("fused_elementwise: input " + std::to_string(i) + " has kind " +
                                        std::to_string(kinds[size_t(i)]) + "; kinds are 0 (full), 1 (scalar), 2 (row)");
        const auto kind = fw::fused::EwKind(kinds[size_t(i)]);
        switch (kind) {
            case fw::fused::EwKind::full:
                if (int64_t(a.size()) != n || !c_contiguous(a))
                    throw std::invalid_argument(ew_shape_error("must be C-contiguous with", i, a,
                                                               std::to_string(n) + " elements (the result's)"));
                break;
            case fw::fused::EwKind::scalar:
                if (a.size() != 1) throw std::invalid_argument(ew_shape_error("must have", i, a, "one element"));
                break;
            case fw::fused::EwKind::row:
                if (int64_t(a.size()) != row_len || row_len <= 0 || n % row_len != 0 || !c_contiguous(a))
                    throw std::invalid_argument(ew_shape_error("must be a C-contiguous row of", i, a,
                                                               std::to_string(row_len) + " elements"));
                break;
            default: throw std::invalid_argument("fused_elementwise: bad input kind");
        }
        ins[size_t(i)] = {a.data(), EwDT(code), kind};
    }
    nb::gil_scoped_release nogil;
    prog.run(ins.data(), n, row_len, out.data());
}

// One instruction over a whole array: the activation kernels' entry point. The
// single-instruction programs are built once (under the GIL) and kept.
void py_ew_unary(int op, const AnyIn &x, AnyOut out) {
    require_cpu();
    if (op < 0 || op >= int(fw::fused::EwOp::count_) || fw::fused::ew_op_arity(fw::fused::EwOp(op)) != 1 ||
        fw::fused::EwOp(op) == fw::fused::EwOp::pow || fw::fused::EwOp(op) == fw::fused::EwOp::cast)
        throw std::invalid_argument("ew_unary: not a one-operand opcode without immediates");
    const int code = dtype_code(x.dtype());
    if (code < 1 || dtype_code(out.dtype()) != code)
        throw nb::type_error(("ew_unary(" + std::string(fw::fused::ew_op_name(fw::fused::EwOp(op))) + "): x " +
                              describe(x) + " and out " + describe(out) +
                              " must share one dtype: float32, float16 or bfloat16 (uint16 bits)")
                                 .c_str());
    if (x.size() != out.size() || !c_contiguous(x) || !c_contiguous(out))
        throw std::invalid_argument("ew_unary: x " + describe(x) + " and out " + describe(out) +
                                    " must be C-contiguous with the same size");
    static std::unique_ptr<fw::fused::EwProgram> progs[size_t(fw::fused::EwOp::count_)][4];
    auto &prog = progs[op][code];
    if (!prog)
        prog = std::make_unique<fw::fused::EwProgram>(
            1, std::vector<fw::fused::EwInstr>{{fw::fused::EwOp(op), EwDT(code), 0, -1, -1, 0.0f}});
    const fw::fused::EwInput in{x.data(), EwDT(code), fw::fused::EwKind::full};
    nb::gil_scoped_release nogil;
    prog->run(&in, int64_t(x.size()), 0, out.data());
}

const char *kOptimDoc = R"(optim_update(rule, param, grad, param_out, states, state_outs, consts, flags, segments=None)

One optimizer update over C-contiguous arrays of n elements (any shape),
writing param_out and state_outs (each may be the matching input: in place).
rule: 0 sgd, 1 momentum, 2 adam/adamw, 3 adamax, 4 adagrad, 5 adadelta,
6 rmsprop, 7 lamb, 8 asgd. consts/flags: the rule's derived constants, in the
order listed in fw/core/kernels/cpu_fused.py. dtypes: param float32/float16/
bfloat16 (uint16 bits); states float32, or the param's low-precision dtype.
segments (lamb): int64 start offsets of the packed parameters.)";

const char *kEwDoc = R"(EwProgram(n_inputs, code)

A compiled fused_elementwise program. code: list of (opcode, dtype, a, b, c,
imm) with opcode an index into ew_opcode_names(), dtype 0 bool, 1 float16,
2 bfloat16, 3 float32, operands as value numbers (-1 unused) and imm the const
value or pow exponent (already rounded to the dtype).)";

}  // namespace

void bind_fused(nb::module_ &m) {
    m.def("fused_supported", &fw::fused::cpu_supported,
          "True when this CPU runs the fused kernel family (AVX2, FMA and F16C).");
    m.def("optim_update", &py_optim_update, "rule"_a, "param"_a, "grad"_a, "param_out"_a, "states"_a, "state_outs"_a,
          "consts"_a, "flags"_a, "segments"_a.none() = nb::none(), kOptimDoc);
    m.def(
        "ew_opcode_names",
        []() {
            std::vector<std::string> names;
            for (int i = 0; i < int(fw::fused::EwOp::count_); ++i) {
                const auto op = fw::fused::EwOp(i);
                names.push_back(op == fw::fused::EwOp::gelu_erf    ? "gelu_erf"
                                : op == fw::fused::EwOp::gelu_tanh ? "gelu_tanh"
                                                                   : fw::fused::ew_op_name(op));
            }
            return names;
        },
        "The opcode of each EwProgram instruction code, in code order ('gelu_erf'/'gelu_tanh' for the two gelu forms).");
    m.def("ew_unary", &py_ew_unary, "opcode"_a, "x"_a, "out"_a,
          "out = opcode(x) elementwise (an ew_opcode_names() index of a one-operand opcode other than pow and "
          "cast); x and out C-contiguous of one dtype, float32, float16 or bfloat16 (uint16 bits).");
    nb::class_<fw::fused::EwProgram>(m, "EwProgram", kEwDoc)
        .def("__init__",
             [](fw::fused::EwProgram *self, int n_inputs, const Code &code) {
                 new (self) fw::fused::EwProgram(n_inputs, convert_code(code));
             },
             "n_inputs"_a, "code"_a)
        .def_prop_ro("n_inputs", &fw::fused::EwProgram::n_inputs)
        .def_prop_ro("n_slots", &fw::fused::EwProgram::n_slots)
        .def_prop_ro("tile", &fw::fused::EwProgram::tile)
        .def("__repr__", &fw::fused::EwProgram::describe)
        .def("run", &py_ew_run, "inputs"_a, "kinds"_a, "row_len"_a, "out"_a,
             "Evaluates the program into out (C-contiguous, the result dtype). kinds: per input 0 (every "
             "element, C-contiguous), 1 (one element), 2 (a row of row_len elements repeated over out).");
}
