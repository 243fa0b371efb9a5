// Clang thread-safety annotations (https://clang.llvm.org/docs/ThreadSafetyAnalysis.html), as
// leveldb's port/thread_annotations.h: a member shared between threads names the lock that
// guards it (GUARDED_BY), a function the locks it needs (REQUIRES) or must not hold
// (EXCLUDES). The sanitizer build compiles with clang and -Wthread-safety -Werror
// (scripts/build asan), so a read or write without the lock fails to compile there; under
// gcc the macros expand to nothing.
//
// Locks that carry these annotations are base::Mutex and base::SharedMutex (base/mutex.h);
// std::mutex does not (libstdc++ is not annotated).
#pragma once

#if defined(__clang__)
#define HARVEST_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define HARVEST_THREAD_ANNOTATION(x)
#endif

// A type that is a lock ("mutex") or a role a thread holds.
#define CAPABILITY(x) HARVEST_THREAD_ANNOTATION(capability(x))
// An RAII type that holds a lock for its lifetime.
#define SCOPED_CAPABILITY HARVEST_THREAD_ANNOTATION(scoped_lockable)
// The member is read and written only with the lock held (written with it held exclusively).
#define GUARDED_BY(x) HARVEST_THREAD_ANNOTATION(guarded_by(x))
// The data a pointer member points to is guarded by the lock.
#define PT_GUARDED_BY(x) HARVEST_THREAD_ANNOTATION(pt_guarded_by(x))
// Lock order: this lock is taken after / before the named ones.
#define ACQUIRED_AFTER(...) HARVEST_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))
#define ACQUIRED_BEFORE(...) HARVEST_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
// The caller holds the lock (exclusively / at least shared).
#define REQUIRES(...) HARVEST_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define REQUIRES_SHARED(...) HARVEST_THREAD_ANNOTATION(requires_shared_capability(__VA_ARGS__))
// The function takes / releases the lock.
#define ACQUIRE(...) HARVEST_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define ACQUIRE_SHARED(...) HARVEST_THREAD_ANNOTATION(acquire_shared_capability(__VA_ARGS__))
#define RELEASE(...) HARVEST_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define RELEASE_SHARED(...) HARVEST_THREAD_ANNOTATION(release_shared_capability(__VA_ARGS__))
#define RELEASE_GENERIC(...) HARVEST_THREAD_ANNOTATION(release_generic_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) HARVEST_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
// The caller must not hold the lock (the function takes it).
#define EXCLUDES(...) HARVEST_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
// The function checks at run time that the lock is held (and tells the analysis so).
#define ASSERT_CAPABILITY(x) HARVEST_THREAD_ANNOTATION(assert_capability(x))
#define ASSERT_SHARED_CAPABILITY(x) HARVEST_THREAD_ANNOTATION(assert_shared_capability(x))
// The function returns a reference to the lock.
#define RETURN_CAPABILITY(x) HARVEST_THREAD_ANNOTATION(lock_returned(x))
// Turns the analysis off for one function (say why where it is used).
#define NO_THREAD_SAFETY_ANALYSIS HARVEST_THREAD_ANNOTATION(no_thread_safety_analysis)
