// Binding of the small-channel direct convolution's switches (nn_conv_small.hpp); the
// kernel itself runs inside `conv_forward`, which takes it for the shapes it applies to.
#include <nanobind/nanobind.h>

#include "nn_conv_small.hpp"

namespace nb = nanobind;
using namespace nb::literals;

void bind_conv_small(nb::module_ &m) {
    m.def("conv_small_set_enabled", &fw::nn::conv_small_set_enabled, "on"_a,
          "Whether conv_forward takes the direct kernel for float32 channel-last convs with "
          "at most 4 output channels and 27 taps (default True; False: oneDNN for all). For "
          "tests and benchmarks.");
    m.def("conv_small_enabled", &fw::nn::conv_small_enabled);
    m.def("conv_small_set_max_isa", &fw::nn::conv_small_set_max_isa, "isa"_a,
          "Caps the direct kernel's instruction set: 0 scalar, 1 AVX2+FMA, 2 AVX-512F (the "
          "default; the CPU's own limit applies too). For tests of every path.");
    m.def("conv_small_isa", &fw::nn::conv_small_isa, "The instruction set the direct kernel runs with now.");
    m.def("conv_small_calls", &fw::nn::conv_small_calls, "Calls the direct kernel has served (tests).");
}
