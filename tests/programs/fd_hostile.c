/* Ground truth for test_fd_hostile.py: a program that treats every descriptor
 * above stderr as its own, as daemons and code that spawns children do.
 *
 * usage: fd_hostile MODE      (MODE: closeall, dup2out, takeall)
 *
 * Phase 1: R target regions (kernel KERNEL:one) and, when the program runs
 * under tracer, R marks "phase1" (value i) through the public API, found with
 * dlsym so that the untraced run needs no libtracer; under tracer it then
 * waits until the journal ($TRACER_OUTPUT/tracer.journal) names phase 1's
 * kernel function, so that tracer holds its symbol files (set
 * TRACER_FLUSH_INTERVAL short).
 * Then, by MODE:
 *   closeall  closes every descriptor from 3 up, then opens userdata.txt
 *             and K extra files, which take the lowest numbers;
 *   dup2out   dup2s its stdout onto descriptors 3..9;
 *   takeall   opens userdata.txt and dup2s it onto every other descriptor
 *             above stderr that /proc/self/fd lists.
 * Phase 2: R target regions (kernel KERNEL:two), marks "phase2" (a name
 * registered only now) with value 1000 + i, and one line per region into
 * userdata.txt (closeall, takeall) or stdout (dup2out).
 *
 * stdout: "phase 1: R regions", the dup2out lines, "phase 2: R regions
 * (a[1] = ...)", then for closeall and takeall "userdata.txt: B bytes, as
 * written" (or "NOT as written") and "extra files: B bytes" (closeall's
 * extra files are never written: 0), and from a destructor that runs after
 * every exit handler (tracer's end of run among them) "descriptors at exit:
 * unchanged" (or "N of them changed"): each descriptor the program holds
 * still names its file.
 * Exit status 0, or 3 when the program's own files were not as it left them. */
#define _GNU_SOURCE 1
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define R 40
#define K 8
#define N 256

typedef uint64_t (*register_fn)(const char *);
typedef int (*mark_fn)(uint64_t, uint64_t);

static register_fn reg;
static mark_fn mark;
static double a[N];

/* Descriptors the program holds at exit and the file each must still be. */
static int taken[4096], ntaken;
static struct stat taken_st[4096];
static struct stat user_st;
static int status;

static void hold(int fd, const struct stat *st)
{
    if (ntaken < (int)(sizeof taken / sizeof *taken)) {
        taken[ntaken] = fd;
        taken_st[ntaken++] = *st;
    }
}

static void regions_one(void)
{
    for (int r = 0; r < R; r++) {
#pragma omp target map(tofrom : a[0:N]) /* KERNEL:one */
        for (int i = 0; i < N; i++)
            a[i] += 1;
    }
}

static void regions_two(void)
{
    for (int r = 0; r < R; r++) {
#pragma omp target map(tofrom : a[0:N]) /* KERNEL:two */
        for (int i = 0; i < N; i++)
            a[i] *= 1;
    }
}

static void marks(const char *name, uint64_t base)
{
    if (!reg || !mark)
        return;
    uint64_t id = reg(name);
    for (uint64_t i = 0; i < R; i++)
        mark(id, base + i);
}

/* Under tracer (TRACER_OUTPUT set), waits until its journal holds the
 * symbol of phase 1's kernel: by then tracer holds the files it reads
 * symbols from, which the program's phase 2 then takes. */
static void wait_for_symbols(void)
{
    const char *dir = getenv("TRACER_OUTPUT");
    if (!dir || !reg)
        return;
    char path[4200];
    snprintf(path, sizeof path, "%s/tracer.journal", dir);
    static char buf[1 << 22];
    for (int i = 0; i < 3000; i++) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf) : -1;
        if (fd >= 0)
            close(fd);
        if (n > 0 && memmem(buf, (size_t)n, "regions_one", 11))
            return;
        usleep(10000);
    }
    fprintf(stderr, "fd_hostile: tracer did not resolve phase 1's symbols within 30 s\n");
}

static void close_all(void)
{
    struct rlimit rl;
    long max = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ? (long)rl.rlim_cur : 65536;
    if (max > 1 << 20)
        max = 1 << 20;
    for (long fd = 3; fd < max; fd++)
        close((int)fd);
}

/* Every descriptor above stderr but @keep. */
static int others(int keep, int *out, int cap)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return 0;
    for (struct dirent *e; (e = readdir(d));) {
        int fd = atoi(e->d_name);
        if (e->d_name[0] != '.' && fd > 2 && fd != keep && fd != dirfd(d) && n < cap)
            out[n++] = fd;
    }
    closedir(d);
    return n;
}

static int open_user(void)
{
    int fd = open("userdata.txt", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || fstat(fd, &user_st)) {
        perror("userdata.txt");
        exit(2);
    }
    return fd;
}

static size_t write_user(int fd)
{
    size_t total = 0;
    char line[64];
    for (int r = 0; r < R; r++) {
        int n = snprintf(line, sizeof line, "userdata line %d\n", r);
        if (write(fd, line, (size_t)n) != n) {
            perror("write userdata.txt");
            exit(2);
        }
        total += (size_t)n;
    }
    return total;
}

/* The file holds exactly the lines written, nothing else. */
static void check_user(size_t bytes)
{
    char want[R * 64], got[R * 64 + 1];
    size_t n = 0;
    for (int r = 0; r < R; r++)
        n += (size_t)snprintf(want + n, sizeof want - n, "userdata line %d\n", r);
    FILE *f = fopen("userdata.txt", "rb");
    size_t m = f ? fread(got, 1, sizeof got, f) : 0;
    if (f)
        fclose(f);
    int same = m == n && n == bytes && !memcmp(want, got, n);
    printf("userdata.txt: %zu bytes, %s\n", m, same ? "as written" : "NOT as written");
    size_t extra = 0;
    for (int k = 0; k < K; k++) {
        char name[32];
        struct stat st;
        snprintf(name, sizeof name, "extra%d.txt", k);
        if (!stat(name, &st))
            extra += (size_t)st.st_size;
    }
    printf("extra files: %zu bytes\n", extra);
    if (!same || extra)
        status = 3;
}

__attribute__((destructor)) static void taken_still_ours(void)
{
    if (!ntaken)
        return;
    int changed = 0;
    for (int i = 0; i < ntaken; i++) {
        struct stat st;
        if (fstat(taken[i], &st) || st.st_dev != taken_st[i].st_dev || st.st_ino != taken_st[i].st_ino) {
            char proc[64], link[512] = "(closed)";
            snprintf(proc, sizeof proc, "/proc/self/fd/%d", taken[i]);
            ssize_t n = readlink(proc, link, sizeof link - 1);
            if (n > 0)
                link[n] = 0;
            fprintf(stderr, "fd_hostile: descriptor %d is now %s\n", taken[i], link);
            changed++;
        }
    }
    if (changed)
        printf("descriptors at exit: %d of them changed\n", changed);
    else
        printf("descriptors at exit: unchanged\n");
    if (changed) {
        fflush(stdout);
        _exit(3);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: fd_hostile closeall|dup2out|takeall\n");
        return 2;
    }
    const char *mode = argv[1];
    reg = (register_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "tracer_region_register");
    mark = (mark_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "tracer_mark");

    regions_one();
    marks("phase1", 0);
    wait_for_symbols();
    printf("phase 1: %d regions\n", R);
    fflush(stdout);

    int user = -1;
    if (!strcmp(mode, "closeall")) {
        close_all();
        user = open_user();
        hold(user, &user_st);
        for (int k = 0; k < K; k++) {
            char name[32];
            snprintf(name, sizeof name, "extra%d.txt", k);
            int fd = open(name, O_RDWR | O_CREAT | O_TRUNC, 0644);
            struct stat st;
            if (fd < 0 || fstat(fd, &st))
                return 2;
            hold(fd, &st);
        }
    } else if (!strcmp(mode, "dup2out")) {
        for (int fd = 3; fd <= 9; fd++)
            if (dup2(STDOUT_FILENO, fd) != fd)
                return 2;
    } else if (!strcmp(mode, "takeall")) {
        user = open_user();
        int fds[4096];
        int n = others(user, fds, (int)(sizeof fds / sizeof *fds));
        for (int i = 0; i < n; i++) {
            if (dup2(user, fds[i]) != fds[i])
                return 2;
            hold(fds[i], &user_st);
        }
        hold(user, &user_st);
        fprintf(stderr, "fd_hostile: took %d descriptors\n", n);
    } else {
        fprintf(stderr, "fd_hostile: unknown mode %s\n", mode);
        return 2;
    }

    regions_two();
    marks("phase2", 1000);
    size_t bytes = 0;
    if (user >= 0) {
        bytes = write_user(user);
    } else {
        for (int r = 0; r < R; r++)
            printf("stdout line %d\n", r);
    }
    printf("phase 2: %d regions (a[1] = %.0f)\n", R, a[1]);
    if (user >= 0)
        check_user(bytes);
    fflush(stdout);
    return status;
}
