//===- Allocator.cc - 2 MiB pages for the heap of the command -------------===//
//
// Compiled into the command and the benchmarks, which link mimalloc (CMake's
// ONNX_REWRITE_ALLOCATOR). A run touches most of its heap once, so first-touch page faults
// are a large part of it: 1,600 on a 12-layer BERT, 69,000 on a 10^5-node model. Backing the
// heap with 2 MiB pages where the kernel allows them (transparent huge pages in "madvise" or
// "always" mode) makes them 4 to 10x fewer and the run 10 to 15 % faster, for about 5 MiB
// more peak memory on a small model (docs/benchmarks.md).
//
// mimalloc reads its options when the first library initializer allocates, before main()
// and before any constructor of ours, and advises its first segment then. So the option is
// set from the executable's preinit array, which the dynamic loader runs before every
// library initializer. A MIMALLOC_LARGE_OS_PAGES in the environment still decides.
//
//===----------------------------------------------------------------------===//

#if ONNX_REWRITE_WITH_MIMALLOC
#include <mimalloc.h>

#include <cstring>

namespace {

// Reads envp, not getenv(): the C library has not run its own initializers yet.
void preferLargePages(int, char**, char** envp) {
  static constexpr char kVariable[] = "MIMALLOC_LARGE_OS_PAGES=";
  for (char** entry = envp; entry != nullptr && *entry != nullptr; ++entry)
    if (std::strncmp(*entry, kVariable, sizeof kVariable - 1) == 0) return;
  mi_option_enable(mi_option_large_os_pages);  // sets a value: allocates nothing
}

using PreinitFunction = void (*)(int, char**, char**);
__attribute__((section(".preinit_array"), used)) const PreinitFunction kPreferLargePages =
    &preferLargePages;

}  // namespace
#endif
