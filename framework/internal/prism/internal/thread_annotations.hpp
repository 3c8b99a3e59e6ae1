#pragma once

// Names the lock that guards shared state, in annotations that clang's
// -Wthread-safety reads (LevelDB's port/thread_annotations.h). Other
// compilers see nothing; the annotation still tells the reader which lock
// to hold.
//
//   std::mutex mu_;
//   std::deque<job> jobs_ GUARDED_BY(mu_);
//   void pop() EXCLUSIVE_LOCKS_REQUIRED(mu_);
//
// Where two locks nest, both declarations say the order with
// ACQUIRED_AFTER / ACQUIRED_BEFORE, next to a comment saying why.

#if defined(__clang__)
#  define PRISM_THREAD_ANNOTATION(x) __attribute__((x))
#else
#  define PRISM_THREAD_ANNOTATION(x)
#endif

#ifndef GUARDED_BY
#  define GUARDED_BY(x) PRISM_THREAD_ANNOTATION(guarded_by(x))
#endif

#ifndef PT_GUARDED_BY
#  define PT_GUARDED_BY(x) PRISM_THREAD_ANNOTATION(pt_guarded_by(x))
#endif

#ifndef EXCLUSIVE_LOCKS_REQUIRED
#  define EXCLUSIVE_LOCKS_REQUIRED(...)                                        \
    PRISM_THREAD_ANNOTATION(exclusive_locks_required(__VA_ARGS__))
#endif

#ifndef LOCKS_EXCLUDED
#  define LOCKS_EXCLUDED(...)                                                  \
    PRISM_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#endif

#ifndef ACQUIRED_AFTER
#  define ACQUIRED_AFTER(...)                                                  \
    PRISM_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))
#endif

#ifndef ACQUIRED_BEFORE
#  define ACQUIRED_BEFORE(...)                                                 \
    PRISM_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
#endif
