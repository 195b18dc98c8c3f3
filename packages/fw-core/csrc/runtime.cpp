#include "runtime.hpp"

#include <omp.h>
#include <pthread.h>

#include <algorithm>
#include <cstdlib>
#include <new>
#include <atomic>
#include <string>
#include <stdexcept>

namespace fw {
namespace {

// 0 means "not set yet": the OpenMP default of the first caller (which honours
// OMP_NUM_THREADS) is taken on first use.
std::atomic<int> g_num_threads{0};

}  // namespace

const dnnl::engine &cpu_engine() {
    // Intentionally leaked: oneDNN objects must not be destroyed after libdnnl
    // itself has been torn down at interpreter exit.
    static const dnnl::engine *engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
    return *engine;
}

dnnl::stream &cpu_stream() {
    static dnnl::stream *stream = new dnnl::stream(cpu_engine());
    return *stream;
}

void set_num_threads(int n) {
    if (n < 1) throw std::invalid_argument("set_num_threads: n must be >= 1, got " + std::to_string(n));
    // An absurd count would make GNU OpenMP try to start that many threads at the
    // next parallel region (and key every cached primitive on it).
    const int limit = std::max(1024, 8 * omp_get_num_procs());
    if (n > limit)
        throw std::invalid_argument("set_num_threads: n must be <= " + std::to_string(limit) +
                                    " (8x the processors, at least 1024), got " + std::to_string(n));
    g_num_threads.store(n, std::memory_order_relaxed);
    omp_set_num_threads(n);
}

int get_num_threads() {
    int n = g_num_threads.load(std::memory_order_relaxed);
    if (n > 0) return n;
    int expected = 0;
    n = omp_get_max_threads();
    g_num_threads.compare_exchange_strong(expected, n, std::memory_order_relaxed);
    return g_num_threads.load(std::memory_order_relaxed);
}

void install_fork_handler() {
    static const bool installed = [] {
        pthread_atfork(nullptr, nullptr, [] {
            g_num_threads.store(1, std::memory_order_relaxed);
            omp_set_num_threads(1);
        });
        return true;
    }();
    (void)installed;
}

dnnl::primitive_attr user_attr() {
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    return attr;
}

namespace {
struct ThreadScratch {
    void *data = nullptr;
    size_t size = 0;
    ~ThreadScratch() { std::free(data); }
};
thread_local ThreadScratch tl_scratch;
}  // namespace

void *thread_scratchpad(size_t bytes) {
    ThreadScratch &s = tl_scratch;
    if (bytes > s.size) {
        const size_t want = (std::max(bytes, s.size * 2) + 4095) / 4096 * 4096;
        void *p = std::aligned_alloc(4096, want);
        if (!p) throw std::bad_alloc();
        std::free(s.data);
        s.data = p;
        s.size = want;
    }
    return s.data;
}

int apply_num_threads(int cap) {
    const int n = std::min(get_num_threads(), cap);
    if (omp_get_max_threads() != n) omp_set_num_threads(n);
    return n;
}

}  // namespace fw
