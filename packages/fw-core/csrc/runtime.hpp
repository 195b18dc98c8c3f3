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

// Scratchpads. oneDNN's default (scratchpad_mode::library, built without
// DNNL_ENABLE_CONCURRENT_EXEC) sizes a thread_local buffer of the thread that
// CREATES a primitive but hands the primitive the buffer of the thread that
// EXECUTES it: a cached primitive created in one Python thread and run in
// another read and wrote past (or through a null) scratchpad, a segfault
// (grouped convolution on x64:gemm:jit, issue 10). Every primitive fw builds,
// reorders included, therefore takes user_attr() (scratchpad_mode::user) and
// is executed with DNNL_ARG_SCRATCHPAD pointing at thread_scratchpad(): a
// buffer owned by the executing thread, grown to the largest request and
// reused (one TLS read per call; freed when the thread exits). Primitives run
// one after another in a thread, so they can share it.
dnnl::primitive_attr user_attr();
void *thread_scratchpad(size_t bytes);

}  // namespace fw
