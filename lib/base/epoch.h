/*
 * lib/base/epoch.h - entering a ck_epoch section and queueing a ck_epoch callback, with the two
 * fences that Concurrency Kit 0.7.1 and 0.7.2 (Debian 12 ships 0.7.1) lack on weakly ordered
 * machines. Every ck_epoch_begin and ck_epoch_call the library makes goes through here, and this
 * is the one place that says why; other files, public headers and man pages refer to it.
 *
 *   1. ck_epoch_begin publishes the record's epoch with a full fence, but has no load fence
 *      between its read of the global epoch and the section's own loads. On ARM or POWER a
 *      section could read list memory older than the epoch it advertises, and a grace period
 *      could end under it. An acquire fence after ck_epoch_begin is that barrier; on x86 it
 *      compiles to nothing. (Fixed upstream in June 2026: "ck_epoch: add missing barrier for RMO
 *      architectures in begin".)
 *   2. ck_epoch_call snapshots the global epoch for its callback, and ck_epoch_poll of those
 *      versions dispatches the callback one epoch early when the caller's unpublication was not
 *      yet visible at the snapshot: an object a reader still holds could be freed. A full fence
 *      before ck_epoch_call makes the unpublication visible first, which restores the distance
 *      the poll assumes. (Fixed upstream in June 2026: "ck_epoch: make poll safer to use".)
 *
 * test/run's aarch64 stage builds these paths for ARM and runs them under qemu-user, which shows
 * that they compile and run there; docs/model/ is the argument that the fences suffice.
 */
#ifndef SWF_LIB_BASE_EPOCH_H
#define SWF_LIB_BASE_EPOCH_H

#include <ck_epoch.h>

#include "base/atomic.h"

/* ck_epoch_begin on rec, then fence 1. */
static inline void swfi_epoch_begin(ck_epoch_record_t *rec)
{
    ck_epoch_begin(rec, NULL);
    swfi_fence_acquire();
}

/* Fence 2, then ck_epoch_call: what the caller did before (the unpublication of what the
 * callback frees) is visible before the callback's epoch is read. */
static inline void swfi_epoch_call(ck_epoch_record_t *rec, ck_epoch_entry_t *entry,
                                   ck_epoch_cb_t *cb)
{
    swfi_fence_seq_cst();
    ck_epoch_call(rec, entry, cb);
}

#endif /* SWF_LIB_BASE_EPOCH_H */
