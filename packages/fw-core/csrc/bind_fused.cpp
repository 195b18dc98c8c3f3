// Bindings of the kernel family: optimizer updates and fused elementwise chains in own C++.
#include <nanobind/nanobind.h>

namespace nb = nanobind;

void bind_fused(nb::module_ &m) {
    (void)m;  // kernels of this family are added here
}
