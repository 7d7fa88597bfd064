// The recorder behind scripts/dev/measure-path.sh: linked into a debug build whose Swift code is
// compiled with -sanitize-coverage=func,trace-pc-guard, so every function calls
// __sanitizer_cov_trace_pc_guard on entry. Armed, it records each function the first time it
// runs (its address and the monotonic time, comparable across processes), so a trace lists the
// functions in the order they first ran, each once. Controlled through files, not signals (the
// processes have their own signal handlers): with RICHPUSH_PATH_TRACE=P set, a thread polls for
// P.arm (re-arms every function, clears the record, answers with P.armed) and P.dump (stops
// recording, writes P.trace as "nanoseconds offset" lines, answers with P.done).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_RANGES 64
#define CAPACITY (1u << 22)

struct event {
    uintptr_t pc;
    uint64_t nanoseconds;
};

static struct {
    uint32_t *start, *stop;
} ranges[MAX_RANGES];
static int range_count;
static atomic_int armed;
static atomic_size_t recorded;
static struct event *events;
static char prefix[4096];

void __sanitizer_cov_trace_pc_guard_init(uint32_t *start, uint32_t *stop) {
    if (start == stop || *start) return;
    for (uint32_t *guard = start; guard < stop; guard++) *guard = 1;
    if (range_count < MAX_RANGES) {
        ranges[range_count].start = start;
        ranges[range_count].stop = stop;
        range_count++;
    }
}

void __sanitizer_cov_trace_pc_guard(uint32_t *guard) {
    if (!atomic_load_explicit(&armed, memory_order_relaxed)) return;
    if (!__atomic_exchange_n(guard, 0, __ATOMIC_RELAXED)) return;
    size_t index = atomic_fetch_add_explicit(&recorded, 1, memory_order_relaxed);
    if (index >= CAPACITY) return;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    events[index].pc = (uintptr_t)__builtin_return_address(0);
    events[index].nanoseconds = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

static int take(const char *suffix) {
    char path[4200];
    snprintf(path, sizeof path, "%s%s", prefix, suffix);
    return unlink(path) == 0;
}

static void answer(const char *suffix) {
    char path[4200];
    snprintf(path, sizeof path, "%s%s", prefix, suffix);
    FILE *file = fopen(path, "w");
    if (file) fclose(file);
}

static void dump(void) {
    char path[4200];
    snprintf(path, sizeof path, "%s.trace", prefix);
    FILE *file = fopen(path, "w");
    if (!file) return;
    size_t count = atomic_load(&recorded);
    if (count > CAPACITY) count = CAPACITY;
    for (size_t i = 0; i < count; i++) {
        if (!events[i].pc) continue;
        Dl_info info;
        uintptr_t base = dladdr((void *)events[i].pc, &info) ? (uintptr_t)info.dli_fbase : 0;
        fprintf(file, "%llu 0x%llx\n", (unsigned long long)events[i].nanoseconds, (unsigned long long)(events[i].pc - base));
    }
    fclose(file);
}

static void *control(void *unused) {
    (void)unused;
    for (;;) {
        if (take(".arm")) {
            atomic_store(&armed, 0);
            memset(events, 0, sizeof(struct event) * CAPACITY);
            atomic_store(&recorded, 0);
            for (int r = 0; r < range_count; r++)
                for (uint32_t *guard = ranges[r].start; guard < ranges[r].stop; guard++) __atomic_store_n(guard, 1, __ATOMIC_RELAXED);
            atomic_store(&armed, 1);
            answer(".armed");
        }
        if (take(".dump")) {
            atomic_store(&armed, 0);
            usleep(50000);
            dump();
            answer(".done");
        }
        usleep(20000);
    }
    return NULL;
}

__attribute__((constructor)) static void start_control(void) {
    const char *value = getenv("RICHPUSH_PATH_TRACE");
    if (!value || !*value) return;
    snprintf(prefix, sizeof prefix, "%s", value);
    events = calloc(CAPACITY, sizeof(struct event));
    if (!events) return;
    pthread_t thread;
    pthread_create(&thread, NULL, control, NULL);
    pthread_detach(thread);
}
