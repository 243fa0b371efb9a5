#!/usr/bin/env bash
# Shows that the lock annotations are checked (base/thread_annotations.h): guarded_read.cc
# must compile as written, and must fail to compile, with clang's "requires holding mutex"
# error, when it reads its guarded member without the lock.
# Usage: thread_safety_check.sh CLANGXX SRC_DIR
set -euo pipefail
cxx="$1" src="$2"
flags=(-std=c++20 -fsyntax-only -Wthread-safety -Werror -I "$src")
"$cxx" "${flags[@]}" "$src/base/testing/guarded_read.cc" \
  || { echo "FAIL: guarded_read.cc does not compile with the lock taken" >&2; exit 1; }
if out=$("$cxx" "${flags[@]}" -DHARVEST_READ_WITHOUT_LOCK "$src/base/testing/guarded_read.cc" 2>&1); then
  echo "FAIL: a read without the lock compiled" >&2
  exit 1
fi
echo "$out"
grep -q "requires holding mutex 'mu_'" <<<"$out" \
  || { echo "FAIL: the read without the lock failed for another reason" >&2; exit 1; }
echo "ok: a read of a GUARDED_BY member without its lock does not compile"
