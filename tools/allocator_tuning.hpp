#pragma once
// Sweeps run thousands of step simulations per second, each building and freeing task graphs
// of up to a few MiB. glibc's default trims the heap top and maps large blocks afresh, so every
// simulation paid page faults for memory it had just returned (~8 % of a sweep's time, perf).
// Keeping freed memory in the process removes that; peak memory is unchanged. The executables
// link jemalloc where it is installed (tools/CMakeLists.txt), which these settings do not touch;
// they serve the Python module and builds without it.
#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace clustersim::tools {

inline void keep_freed_memory_for_reuse() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
}

}  // namespace clustersim::tools
