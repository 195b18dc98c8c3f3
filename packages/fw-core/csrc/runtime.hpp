// Process-wide oneDNN state: one CPU engine, one stream, the thread count.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

namespace fw {

// The CPU engine and stream every primitive is created on / executed in.
// A CPU stream is stateless (execution is synchronous in the calling thread),
// so sharing it between Python threads is safe.
const dnnl::engine &cpu_engine();
dnnl::stream &cpu_stream();

// Threads oneDNN (GNU OpenMP) uses. omp_set_num_threads only changes the
// calling thread's ICV, so the wanted count is kept here and applied lazily by
// apply_num_threads() in whichever thread runs a kernel.
void set_num_threads(int n);
int get_num_threads();

// Registers (once) a pthread_atfork child handler that drops the child to one
// thread: GNU OpenMP cannot restart its worker pool after fork, so a parallel
// region in a forked child of a process that already used the pool hangs.
// Data-loader workers and multiprocessing "fork" children are such children.
void install_fork_handler();

// Makes the calling thread's OpenMP team size min(get_num_threads(), cap) and
// returns it. Cheap (one omp_get_max_threads() call) when nothing changed.
int apply_num_threads(int cap = 1 << 30);

}  // namespace fw
