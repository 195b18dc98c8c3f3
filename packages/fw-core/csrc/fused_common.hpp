// Shared pieces of the fused kernel family: the CPU feature gate and the
// OpenMP range splitter. Compiled for the baseline target (no AVX2 here).
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>

#include "runtime.hpp"

namespace fw::fused {

// The family's kernels are written for AVX2 + FMA + F16C (x86-64-v3: every
// x86 server CPU since 2013/2015). Without them the bindings refuse to run
// and fw.core.kernels.cpu_fused registers nothing (NumPy kernels stay).
inline bool cpu_supported() {
#if defined(__x86_64__) || defined(__i386__)
    static const bool ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                           __builtin_cpu_supports("f16c");
    return ok;
#else
    return false;
#endif
}

// Calls f(begin, end, thread) on contiguous pieces of [0, n), one per thread,
// in parallel when each thread gets at least `min_per_thread` items (memory
// bound loops do not pay for waking a second core below some size). Pieces
// start at multiples of `align` items (cache-line separation of the writes).
// The thread index passed to f is below `max_threads` when that is given.
template <class F>
void parallel_ranges(int64_t n, int64_t min_per_thread, int64_t align, F &&f, int64_t max_threads = 0) {
    int64_t nt = fw::get_num_threads();
    if (max_threads > 0) nt = std::min(nt, max_threads);
    nt = std::min<int64_t>(nt, std::max<int64_t>(1, n / std::max<int64_t>(1, min_per_thread)));
    if (nt <= 1) {
        if (n > 0) f(int64_t(0), n, 0);
        return;
    }
#pragma omp parallel num_threads(int(nt))
    {
        const int64_t t = omp_get_thread_num(), T = omp_get_num_threads();
        int64_t chunk = (n + T - 1) / T;
        chunk = (chunk + align - 1) / align * align;
        const int64_t b = std::min(n, t * chunk), e = std::min(n, b + chunk);
        if (b < e) f(b, e, int(t));
    }
}

}  // namespace fw::fused
