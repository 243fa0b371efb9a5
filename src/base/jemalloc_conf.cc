// jemalloc's options for the executables that allocate through it (the harvest executable and
// state_scale_bench: src/base/CMakeLists.txt, harvest_jemalloc). jemalloc reads this symbol
// when it starts (jemalloc(3), "malloc_conf"); the MALLOC_CONF environment variable, read
// after it, still overrides each option.
//
// thp:always — the memory jemalloc maps is advised for transparent huge pages
// (madvise(MADV_HUGEPAGE); effective where /sys/kernel/mm/transparent_hugepage/enabled is
// "madvise" or "always"). The crawl state's point lookups probe index and filter partitions
// and block-cache entries spread over hundreds of MiB of heap: with 4 KiB pages nearly every
// probe missed the TLB as well as the CPU caches, a cost that grows with the state. At 100 M
// URLs the lookups cost 13% less, at 1 M the same, for 5–15% more resident memory
// (docs/benchmarks.md, "Huge pages for the state's lookups").
extern "C" {
extern const char* malloc_conf;
const char* malloc_conf = "thp:always";
}
