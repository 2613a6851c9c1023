/* Ground truth for test_user_api.py.
 * main: region "main" around starting and joining NT pthreads.
 * each pthread t (0-based):
 *   begin(outer)
 *   for i < R:
 *     begin(inner); mark(tick, t*1000000 + i); end(inner)
 *     if i is even: mark(tick, t*1000000 + 500000 + i)
 *   end(outer)
 * -> per worker location: 1 outer, R inner, R + R/2 ticks. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "tracer.h"

#define NT 2
#define R 100

static tracer_region_t outer, inner, tick;
static pthread_barrier_t barrier;
static int failures;

static void *worker(void *arg)
{
    uint64_t t = (uint64_t)(uintptr_t)arg;
    int bad = 0;
    /* both threads are alive before recording: distinct locations */
    pthread_barrier_wait(&barrier);
    bad |= tracer_region_begin(outer);
    for (uint64_t i = 0; i < R; i++) {
        bad |= tracer_region_begin(inner);
        bad |= tracer_mark(tick, t * 1000000 + i);
        bad |= tracer_region_end(inner);
        if (i % 2 == 0)
            bad |= tracer_mark(tick, t * 1000000 + 500000 + i);
    }
    bad |= tracer_region_end(outer);
    if (bad)
        __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
    return NULL;
}

int main(void)
{
    tracer_region_t mainr = tracer_region_register("main");
    outer = tracer_region_register("outer");
    inner = tracer_region_register("inner");
    tick = tracer_region_register("tick");
    if (!mainr || !outer || !inner || !tick) {
        printf("user_api: register failed\n");
        return 1;
    }
    printf("user_api: handles distinct=%d same-name-same-handle=%d null-refused=%d\n",
           mainr != outer && outer != inner && inner != tick && tick != mainr,
           tracer_region_register("inner") == inner, tracer_region_register(NULL) == 0);
    if (tracer_region_begin(mainr) != 0)
        failures++;
    pthread_t th[NT];
    pthread_barrier_init(&barrier, NULL, NT);
    for (uintptr_t t = 0; t < NT; t++)
        if (pthread_create(&th[t], NULL, worker, (void *)t) != 0) {
            printf("user_api: pthread_create failed\n");
            return 1;
        }
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
    pthread_barrier_destroy(&barrier);
    if (tracer_region_end(mainr) != 0)
        failures++;
    printf("user_api: %d threads x %d regions, failures=%d\n", NT, R, failures);
    return failures ? 2 : 0;
}
