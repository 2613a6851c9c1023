/* Ground truth for test_loader_lock.py: an offload library whose constructor
 * and destructor run target regions, that is, inside dlopen and dlclose,
 * while the loader holds its lock. With a pool of 2 chunks
 * (TRACER_MAX_MEMORY=128k) and TRACER_ON_FULL=block, the thread recording
 * them waits for the journal's consumer, and the consumer names these
 * kernels meanwhile: code the loader just mapped, found by reading the
 * loader's module list. A consumer that needed the lock held here would
 * never free a chunk: the program would hang. */
#include <stdio.h>

enum { N_CTOR = 3000, N_DTOR = 3000 };

static int table[16];

static int run_regions(int n, int base)
{
    int sum = 0;
    for (int i = 0; i < n; i++) {
        int v = base + i;
#pragma omp target map(tofrom: v) map(tofrom: table[0:16]) /* KERNEL:ctor_dtor */
        {
            v = v * 2 + 1;
            table[i % 16] += 1;
        }
        sum += v & 1;
    }
    return sum;
}

__attribute__((constructor)) static void lib_ctor(void)
{
    printf("loader_lock: constructor ran %d regions\n", run_regions(N_CTOR, 0));
    fflush(stdout);
}

__attribute__((destructor)) static void lib_dtor(void)
{
    printf("loader_lock: destructor ran %d regions\n", run_regions(N_DTOR, 7));
    fflush(stdout);
}

int lib_regions(void) { return N_CTOR + N_DTOR; }
