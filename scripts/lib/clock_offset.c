// An LD_PRELOAD library that moves the wall clock of a process (and of every child that keeps
// LD_PRELOAD) by RICHPUSH_CLOCK_OFFSET seconds, positive or negative. The monotonic clocks are
// left alone, so timers, deadlines and NIO's scheduling behave as they do without it.
//
// Why not Debian's libfaketime: redis-server's jemalloc asks for the time while libfaketime is
// still initialising, and libfaketime aborts the process ("Cannot recover from unexpected
// recursive calls to clock_gettime()"). This library calls the kernel directly (no dlsym, no
// allocation), so it is safe from the first instruction.
//
// Built by scripts/test-clock-ahead.sh with the toolchain's clang.
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

// Read once: getenv is not safe against a setenv on another thread, and a clock that read a
// torn environment once would jump by a year for that one call.
static long offset_seconds(void) {
    static volatile long cached = 0;
    static volatile int known = 0;
    if (!known) {
        const char *value = getenv("RICHPUSH_CLOCK_OFFSET");
        cached = value ? strtol(value, NULL, 10) : 0;
        known = 1;
    }
    return cached;
}

static int is_wall_clock(clockid_t id) {
    return id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE || id == CLOCK_TAI;
}

int clock_gettime(clockid_t id, struct timespec *ts) {
    int status = (int)syscall(SYS_clock_gettime, id, ts);
    if (status == 0 && is_wall_clock(id)) ts->tv_sec += offset_seconds();
    return status;
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
    int status = (int)syscall(SYS_gettimeofday, tv, tz);
    if (status == 0) tv->tv_sec += offset_seconds();
    return status;
}

time_t time(time_t *out) {
    struct timespec now;
    if (clock_gettime(CLOCK_REALTIME, &now) != 0) return (time_t)-1;
    if (out != NULL) *out = now.tv_sec;
    return now.tv_sec;
}

int timespec_get(struct timespec *ts, int base) {
    if (base != TIME_UTC || clock_gettime(CLOCK_REALTIME, ts) != 0) return 0;
    return base;
}
