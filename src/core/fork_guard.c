#define _GNU_SOURCE 1 /* MADV_WIPEONFORK */
#include "core/fork_guard.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define WORDS 16 /* one page holds them; word 0 is "here" */

static int *page;     /* zeroed in every child; NULL: none (no claim, or no MADV_WIPEONFORK) */
static int next_word = 1;
static int claimed;   /* copied into children: they know a claim was made */
static pid_t claimer; /* when there is no page */

int tr_fork_guard_claim(void)
{
    if (__atomic_load_n(&claimed, __ATOMIC_ACQUIRE))
        return __atomic_load_n(&page, __ATOMIC_ACQUIRE) ? 0 : -1;
    claimer = (pid_t)syscall(SYS_getpid);
    size_t size = (size_t)sysconf(_SC_PAGESIZE);
    int *p = mmap(0, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED && madvise(p, size, MADV_WIPEONFORK)) {
        munmap(p, size);
        p = MAP_FAILED;
    }
    if (p != MAP_FAILED) {
        __atomic_store_n(&p[0], 1, __ATOMIC_RELEASE);
        __atomic_store_n(&page, p, __ATOMIC_RELEASE);
    }
    __atomic_store_n(&claimed, 1, __ATOMIC_RELEASE);
    return p != MAP_FAILED ? 0 : -1;
}

int tr_fork_guard_here(void)
{
    if (!__atomic_load_n(&claimed, __ATOMIC_ACQUIRE))
        return 1;
    int *p = __atomic_load_n(&page, __ATOMIC_ACQUIRE);
    if (p)
        return __atomic_load_n(&p[0], __ATOMIC_ACQUIRE) != 0;
    return (pid_t)syscall(SYS_getpid) == claimer;
}

int *tr_fork_guard_word(void)
{
    int *p = __atomic_load_n(&page, __ATOMIC_ACQUIRE);
    if (!p)
        return 0;
    int i = __atomic_fetch_add(&next_word, 1, __ATOMIC_RELAXED);
    return i < WORDS ? &p[i] : 0;
}
