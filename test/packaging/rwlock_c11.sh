#!/usr/bin/env bash
# test/packaging/rwlock_c11.sh INCLUDEDIR CC... - list_sysqueue.h under strict -std=c11, where
# <pthread.h> has no read-write locks unless _POSIX_C_SOURCE (or _GNU_SOURCE) asks for them: a TAILQ
# sweep with swf_guard_mutex compiles as it is; with swf_guard_rwlock it compiles given
# -D_POSIX_C_SOURCE=200112L, and without it stops with sweep.h's static assertion, which names the
# macro, as its only error. TAP.
set -u
inc=$1
shift
n=0 failed=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ck_flags=$(pkg-config --cflags ck 2>/dev/null)
flags=(-std=c11 -pedantic -Wall -Wextra -Werror -fsyntax-only -I"$inc")

# program GUARD: a sweep over a <sys/queue.h> TAILQ, its read side taken by GUARD.
program() {
  cat <<C
#include <sweepfill/list_sysqueue.h>
#include <stdlib.h>

struct task { TAILQ_ENTRY(task) link; void *shadow; struct swf_pin pin; };
TAILQ_HEAD(task_q, task);
SWF_LIST_SYS_TAILQ_AUTO(tasks, task_q, task, link, shadow, pin)

int sweep_tasks(struct task_q *q, struct swf_cache *cache, void *lock)
{
    struct swf_sweep_config cfg = {0};
    struct swf_sweep_stats st;
    cfg.list = tasks_list(q);
    cfg.cache = cache;
    $1(&cfg.guard, lock);
    return swf_sweep(&cfg, &st);
}
C
}
compile() { # NAME GUARD EXTRA-FLAGS...
  local name=$1 guard=$2
  shift 2
  program "$guard" >"$tmp/$name.c"
  # shellcheck disable=SC2086
  "${cc[@]}" "${flags[@]}" "$@" $ck_flags "$tmp/$name.c" >"$tmp/$name.log" 2>&1
}
show() { sed 's/^/# /' "$1" | head -n 20; }

cc=("$@")
compile mutex swf_guard_mutex
r=$?
ok $r "list_sysqueue.h with swf_guard_mutex: ${cc[*]} ${flags[*]}"
[ $r = 0 ] || show "$tmp/mutex.log"
compile rwlock swf_guard_rwlock -D_POSIX_C_SOURCE=200112L
r=$?
ok $r "... with swf_guard_rwlock and -D_POSIX_C_SOURCE=200112L"
[ $r = 0 ] || show "$tmp/rwlock.log"
compile strict swf_guard_rwlock
r=$?
errors=$(grep -c 'error:' "$tmp/strict.log")
[ $r != 0 ] && [ "$errors" = 1 ] && grep -q 'static.assert.*_POSIX_C_SOURCE' "$tmp/strict.log"
ok $? "... with swf_guard_rwlock and no feature macro: one error, the static assertion naming _POSIX_C_SOURCE ($errors errors)"
show "$tmp/strict.log"
echo "1..$n"
exit $failed
