/*
 * test/unit/rseq_mode.c EXPECT - the per-CPU mode the process chose, against what its environment
 * asks: "off" (GLIBC_TUNABLES=glibc.pthread.rseq=0, or SWF_PERCPU=0), "cpu_id"
 * (SWF_PERCPU=cpu_id: the cpu_id index, wherever rseq is registered), or "auto": per-CPU
 * exactly when glibc registered rseq (and the build has the sequences), indexed by mm_cid
 * exactly when the kernel's rseq feature size covers it; "percpu": as "auto", and the per-CPU mode
 * must be on (a system known to register rseq: the aarch64_kernel stage's guest).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "base/rseq.h"
#include "../common/tap.h"

static const char *name(enum swfi_rseq_mode m)
{
    return m == SWFI_RSEQ_OFF ? "off" : m == SWFI_RSEQ_CPU_ID ? "cpu_id" : "mm_cid";
}

int main(int argc, char **argv)
{
    const char *expect = argc > 1 ? argv[1] : "auto";
    enum swfi_rseq_mode m = swfi_rseq_mode();
    diag("mode %s, %u slots", name(m), swfi_rseq_slots());
    ok(swfi_rseq_mode() == m, "the mode is decided once");
    ok(swfi_rseq_slots() >= 1, "at least one slot");
#ifdef SWF_RSEQ
    bool registered = __rseq_size > 0;
    bool cid = getauxval(27 /* AT_RSEQ_FEATURE_SIZE */) >= 28;
#else
    bool registered = false, cid = false;
#endif
    /* What the environment asks (SWF_PERCPU may also come from a test setup). */
    const char *env = getenv("SWF_PERCPU");
    bool env_off = env != NULL && strcmp(env, "0") == 0;
    bool env_cpu = env != NULL && strcmp(env, "cpu_id") == 0;
    enum swfi_rseq_mode want = !registered || env_off ? SWFI_RSEQ_OFF
                               : env_cpu || !cid      ? SWFI_RSEQ_CPU_ID
                                                      : SWFI_RSEQ_MM_CID;
    ok(m == want,
       "per-CPU exactly when rseq is registered and SWF_PERCPU is not 0, by mm_cid when "
       "the kernel has it and SWF_PERCPU is not cpu_id (%s, want %s)",
       name(m), name(want));
    if (strcmp(expect, "percpu") == 0)
        ok(m != SWFI_RSEQ_OFF, "the per-CPU mode: rseq is registered here (%s)", name(m));
    else if (strcmp(expect, "off") == 0)
        ok(m == SWFI_RSEQ_OFF, "the per-thread mode, as the environment asks (%s)", name(m));
    else if (strcmp(expect, "cpu_id") == 0 && env_cpu)
        ok(m == (registered ? SWFI_RSEQ_CPU_ID : SWFI_RSEQ_OFF),
           "the cpu_id index where rseq is registered (%s)", name(m));
    return tap_done();
}
