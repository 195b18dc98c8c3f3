#include "activation.hpp"

#include <stdexcept>

namespace fw {

Activation parse_activation(const char *name, size_t len) {
    const std::string s(name, len);
    if (s.empty()) return Activation::none;
#define FW_ACT_PARSE(n, value, alg, alpha, beta) \
    if (s == #n) return Activation::n;
    FW_EPILOGUE_ACTIVATIONS(FW_ACT_PARSE)
#undef FW_ACT_PARSE
#define FW_ACT_ALIAS(alias, n) \
    if (s == #alias) return Activation::n;
    FW_EPILOGUE_ALIASES(FW_ACT_ALIAS)
#undef FW_ACT_ALIAS
    std::string expected;
    for (const auto &[n, v] : activation_table()) expected += (expected.empty() ? "" : ", ") + n;
    for (const auto &[alias, n] : activation_aliases()) expected += ", " + alias + " (= " + n + ")";
    throw std::invalid_argument("unknown activation '" + s + "'; expected one of " + expected);
}

const char *activation_name(Activation a) {
    switch (a) {
#define FW_ACT_NAME(n, value, alg, alpha, beta) \
    case Activation::n: return #n;
        FW_EPILOGUE_ACTIVATIONS(FW_ACT_NAME)
#undef FW_ACT_NAME
    }
    return "?";
}

void append_activation(dnnl::post_ops &po, Activation a) {
    if (a == Activation::none) return;
    switch (a) {
#define FW_ACT_POST_OP(n, value, alg, alpha, beta) \
    case Activation::n: po.append_eltwise(dnnl::algorithm::alg, alpha, beta); return;
        FW_EPILOGUE_ACTIVATIONS(FW_ACT_POST_OP)
#undef FW_ACT_POST_OP
    }
    throw std::logic_error("append_activation: not an activation of the table");
}

std::vector<std::pair<std::string, int>> activation_table() {
    return {
#define FW_ACT_ROW(n, value, alg, alpha, beta) {#n, value},
        FW_EPILOGUE_ACTIVATIONS(FW_ACT_ROW)
#undef FW_ACT_ROW
    };
}

std::vector<std::pair<std::string, std::string>> activation_aliases() {
    return {
#define FW_ACT_ALIAS_ROW(alias, n) {#alias, #n},
        FW_EPILOGUE_ALIASES(FW_ACT_ALIAS_ROW)
#undef FW_ACT_ALIAS_ROW
    };
}

}  // namespace fw
