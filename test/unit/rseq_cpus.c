/*
 * test/unit/rseq_cpus.c - the possible CPUs from the kernel's CPU list (lib/base/rseq.c): one
 * more than the highest CPU number in /sys/devices/system/cpu/possible, whose ranges ("0-63")
 * are read as ranges, never as a number followed by a negative one. Lists written to files, as
 * the kernel writes them (a final newline) and without, and malformed ones (0: the caller then
 * keeps sysconf's count).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/rseq.h"

#include "../common/tap.h"

/* The text with each newline written as \n, for the point's description. */
static const char *shown(const char *text, char *buf, size_t size)
{
    size_t j = 0;
    for (const char *p = text; *p != '\0' && j + 3 < size; p++) {
        if (*p == '\n')
            buf[j++] = '\\', buf[j++] = 'n';
        else
            buf[j++] = *p;
    }
    buf[j] = '\0';
    return buf;
}

/* The list written to a fresh file, read back through swfi_cpu_list_file_max. */
static uint32_t from_file(const char *text)
{
    char path[] = "/tmp/swf_rseq_cpus_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return UINT32_MAX;
    size_t len = strlen(text);
    bool written = write(fd, text, len) == (ssize_t)len;
    close(fd);
    uint32_t max = written ? swfi_cpu_list_file_max(path) : UINT32_MAX;
    unlink(path);
    return max;
}

static const struct {
    const char *text;
    uint32_t want;
} cases[] = {
    {"0-63\n", 64},   {"0-63", 64},        {"0\n", 1},
    {"0,2-5,7\n", 8}, {"0-3,8-11\n", 12},  {"5\n", 6},
    {"0-0\n", 1},     {"0-4095\n", 4096},  {"1,0\n", 2},
    {"", 0},          {"\n", 0},           {"-63\n", 0},
    {"0-\n", 0},      {"3-1\n", 0},        {"0,,1\n", 0},
    {"0-63x\n", 0},   {"x\n", 0},          {"0 1\n", 0},
    {"0-63\n\n", 0},  {"4294967295\n", 0}, {"0-99999999999\n", 0},
};

int main(void)
{
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char buf[64];
        uint32_t got = from_file(cases[i].text);
        ok(got == cases[i].want, "a file holding \"%s\": %u (want %u)",
           shown(cases[i].text, buf, sizeof(buf)), got, cases[i].want);
        ok(swfi_cpu_list_max(cases[i].text) == cases[i].want, "the same list as a string");
    }
    ok(swfi_cpu_list_file_max("/nonexistent/swf/possible") == 0, "a file that is missing: 0");

    /* This machine's list: at least one CPU, and the slots cover every CPU online now. */
    uint32_t possible = swfi_cpu_list_file_max("/sys/devices/system/cpu/possible");
    if (possible == 0) {
        skip("/sys/devices/system/cpu/possible is not readable here");
    } else {
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        ok(online <= (long)possible, "this machine: %u possible CPUs, %ld online", possible,
           online);
        ok(swfi_rseq_slots() >= possible, "the per-CPU arrays have a slot for each (%u)",
           swfi_rseq_slots());
    }
    return tap_done();
}
