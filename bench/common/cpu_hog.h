/*
 * bench/common/cpu_hog.h - CPU hogs: threads that spin at the default priority (nice 0) beside a
 * measurement, so that it runs on a machine whose cores are all busy - what a read-side section
 * or a grace-period wait meets in a loaded program. bench_section_bounds' --hog=N uses them.
 */
#ifndef SWF_BENCH_CPU_HOG_H
#define SWF_BENCH_CPU_HOG_H

/* Start n spinning threads (at most HOG_MAX); returns how many started. Not thread-safe: one
 * set of hogs at a time, started and stopped by the same thread. */
int hog_start(int n);

/* Stop and join the hogs hog_start started. */
void hog_stop(void);

#define HOG_MAX 64

#endif /* SWF_BENCH_CPU_HOG_H */
