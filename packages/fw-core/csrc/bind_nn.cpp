// Bindings of the kernel family: convolution, pooling, normalization and softmax through oneDNN primitives.
#include <nanobind/nanobind.h>

namespace nb = nanobind;

void bind_nn(nb::module_ &m) {
    (void)m;  // kernels of this family are added here
}
