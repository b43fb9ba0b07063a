/*
 * test/unit/rseq_static.c - every restartable sequence's descriptor, read back from the binary: the
 * layout the kernel requires (version 0, flags 0, a non-empty section, the abort handler
 * outside it) and glibc's signature in the 4 bytes before the abort handler. It reads code,
 * never runs a sequence, so it covers the architecture built even where rseq is not registered
 * (valgrind, qemu-user: the aarch64 stage). The whole static library is linked in, so the
 * library's own sequences are among those checked, and so are the two that cache.h's inline path
 * compiles into this program (sweepfill/rseq_abi.h). And the abort handlers are out of the hot
 * text: no signature in the bytes that follow a sequence's commit (its common end, all asm).
 */
#include <string.h>

#include <sweepfill/cache.h>

#include "cache/front/seq.h"
#include "../common/tap.h"

#if defined(__x86_64__)
#define SIG_WORD 0x53053053u /* the .long after 0f b9 3d */
#elif defined(__aarch64__)
#define SIG_WORD 0xd428bc00u /* the .inst */
#endif

#ifdef SWF_RSEQ
/* Instances of each sequence in this program, besides the library's (linked statically). */
__attribute__((noinline)) static void use_sequences(void)
{
    uintptr_t slots[1] = {0};
    uint32_t one = 1;
    void *obj;
    if (!swfi_rseq_armed()) /* the sequences read their inputs from the thread's record */
        return;
    (void)swf_cache_pop_(slots, &one, &obj, NULL);
    (void)swf_cache_push_(slots, &one, NULL, 1, NULL);
    (void)swfi_rseq_swap(slots, 1, 2, 4);
    (void)swfi_rseq_find(slots, 1, &obj);
    (void)swfi_rseq_pop_many(slots, 1, &obj, 1);
    (void)swfi_rseq_push_many(slots, 1, &obj, 1, 1);
}

/* cache.h's inline path: its sequences are compiled into this program (called with NULL: the
 * library returns EINVAL, no sequence runs). */
__attribute__((noinline)) static void use_inline_path(struct swf_cache *c)
{
    (void)swf_cache_free_fast(c, swf_cache_alloc_fast(c));
}
#endif

int main(void)
{
#ifndef SWF_RSEQ
    skip("no per-CPU sequences in this build (architecture, TSan or no <sys/rseq.h>)");
    return tap_done();
#else
    use_sequences();
    use_inline_path(NULL);
    const struct swfi_rseq_cs *begin, *end;
    swfi_rseq_descriptors(&begin, &end);
    size_t n = (size_t)(end - begin);
    ok(begin != NULL && n > 8,
       "the descriptors' section holds this program's 8 and the library's (%zu)", n);
    /* Merged by the linker from one input section per object, and one more per section group
     * (a function's COMDAT group: rseq_abi.h), each 32-byte aligned and a multiple of 32 long. */
    ok(((uintptr_t)begin & 31) == 0 && ((uintptr_t)end - (uintptr_t)begin) % 32 == 0,
       "the section is an array of 32-byte-aligned descriptors");
    size_t bad_version = 0, bad_range = 0, bad_abort = 0, bad_sig = 0, inline_handler = 0;
    for (const struct swfi_rseq_cs *cs = begin; cs < end; cs++) {
        bad_version += cs->version != 0 || cs->flags != 0;
        bad_range += cs->post_commit_offset == 0 || cs->post_commit_offset > 4096;
        bad_abort +=
            cs->abort_ip >= cs->start_ip && cs->abort_ip < cs->start_ip + cs->post_commit_offset;
        uint32_t sig;
        memcpy(&sig, (const void *)(uintptr_t)(cs->abort_ip - 4), sizeof(sig));
        bad_sig += sig != SIG_WORD;
#if defined(__x86_64__)
        const unsigned char *op = (const unsigned char *)(uintptr_t)(cs->abort_ip - 7);
        bad_sig += op[0] != 0x0f || op[1] != 0xb9 || op[2] != 0x3d;
#endif
        /* The 16 bytes after the commit are the sequence's own (done, fail, the end that clears
         * rseq_cs): the signature there would be an abort handler inline. */
        const unsigned char *post =
            (const unsigned char *)(uintptr_t)(cs->start_ip + cs->post_commit_offset);
        for (size_t k = 0; k + sizeof(sig) <= 16; k++) {
            memcpy(&sig, post + k, sizeof(sig));
            inline_handler += sig == SIG_WORD;
        }
        inline_handler += cs->abort_ip >= cs->start_ip + cs->post_commit_offset &&
                          cs->abort_ip < cs->start_ip + cs->post_commit_offset + 16;
    }
    ok(bad_version == 0, "every descriptor has version 0 and flags 0 (%zu bad)", bad_version);
    ok(bad_range == 0, "every section is non-empty and short (%zu bad)", bad_range);
    ok(bad_abort == 0, "every abort handler is outside its section (%zu bad)", bad_abort);
    ok(bad_sig == 0, "every abort handler follows glibc's RSEQ_SIG (%zu bad)", bad_sig);
    ok(inline_handler == 0, "no abort handler follows its sequence in the hot text (%zu inline)",
       inline_handler);
    return tap_done();
#endif
}
