/* fakecuda.c - TEST DOUBLE of the CUDA driver API (libcuda.so), for tests only.
 *
 * No GPU is lent to this project's machines, yet LLVM's libomptarget carries
 * a real CUDA plugin that finds the driver with dlopen("libcuda.so"). This
 * library stands in for that driver, so the real plugin runs an nvptx
 * program and the runtime reports (through OMPT and LIBOMPTARGET_INFO) what
 * a GPU run reports: device type sm_NN, an image loaded, device addresses
 * that differ from host addresses, operations completing later.
 *
 * What it does, so that a wrong address, size or device fails loudly:
 *   - device memory comes from one arena per device, at addresses no host
 *     pointer can have (non-canonical on x86_64: the host faults on them),
 *     and every copy is bounds-checked against a live allocation;
 *   - every stream has a worker thread: copies, launches and event records
 *     complete in stream order, FAKECUDA_LATENCY_US after they are issued;
 *   - a module's globals get device memory of the size the image's symbol
 *     table gives them, initialised from the image;
 *   - FAKECUDA_DEVICES devices (default 1), compute capability FAKECUDA_SM
 *     (default 80), FAKECUDA_MEMORY_MB of device memory each (default 256);
 *   - FAKECUDA_FAIL=kind=N[,kind=N]: the Nth call of that kind fails
 *     (alloc, launch, htod, dtoh, load), to see what a failed operation
 *     leaves in a trace.
 * What it cannot do: run kernels. A kernel launch is checked and queued,
 * and completes without touching memory, so programs compute wrong results;
 * tests assert on traces and on the runtime's own log, never on results.
 * Kernel durations and real overlap of copies and kernels are not modelled.
 * docs/fakecuda.md says more.
 *
 * Symbols: the union of what LLVM 19's and LLVM 22's plugins look up
 * (46 and 60), plus calls LLVM 20+ may try (launch-ex, VMM, memory info),
 * which answer "not supported" where they are not modelled.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct fc_ctx *CUcontext;
typedef struct fc_module *CUmodule;
typedef struct fc_function *CUfunction;
typedef struct fc_stream *CUstream;
typedef struct fc_event *CUevent;

#define FC_EXPORT __attribute__((visibility("default")))

enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_INVALID_VALUE = 1,
    CUDA_ERROR_OUT_OF_MEMORY = 2,
    CUDA_ERROR_NOT_INITIALIZED = 3,
    CUDA_ERROR_NO_DEVICE = 100,
    CUDA_ERROR_INVALID_DEVICE = 101,
    CUDA_ERROR_INVALID_IMAGE = 200,
    CUDA_ERROR_INVALID_CONTEXT = 201,
    CUDA_ERROR_INVALID_HANDLE = 400,
    CUDA_ERROR_NOT_FOUND = 500,
    CUDA_ERROR_NOT_READY = 600,
    CUDA_ERROR_ILLEGAL_ADDRESS = 700,
    CUDA_ERROR_LAUNCH_FAILED = 719,
    CUDA_ERROR_NOT_SUPPORTED = 801,
};

#define FC_MAX_DEVICES 8
/* Device d's memory starts at FC_DEV_BASE + (d << 40): bit 63 set makes it
 * non-canonical on x86_64 with 4- or 5-level paging, so a host access to a
 * device address faults at once instead of reading something plausible. */
#define FC_DEV_BASE 0xd000000000000000ULL
#define FC_ALIGN 256

static void fc_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fc_say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("fakecuda: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* ---- configuration ---- */

enum fc_fail_kind { FAIL_ALLOC, FAIL_LAUNCH, FAIL_HTOD, FAIL_DTOH, FAIL_LOAD, FAIL_KINDS };
static const char *const fail_names[FAIL_KINDS] = {"alloc", "launch", "htod", "dtoh", "load"};

static struct {
    int devices;
    int sm;
    long latency_us;
    size_t memory;
    long fail_at[FAIL_KINDS];   /* 0: never */
    atomic_long calls[FAIL_KINDS];
} cfg;

static int parse_long(const char *name, const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        fc_say("%s=%s: want a whole number from %ld to %ld", name, s, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_fail(const char *s)
{
    char buf[256];
    if (strlen(s) >= sizeof buf) {
        fc_say("FAKECUDA_FAIL is too long");
        return -1;
    }
    strcpy(buf, s);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        int k = FAIL_KINDS;
        if (eq) {
            *eq = '\0';
            for (k = 0; k < FAIL_KINDS && strcmp(tok, fail_names[k]); k++)
                ;
        }
        if (k == FAIL_KINDS) {
            fc_say("FAKECUDA_FAIL: '%s' is not kind=N (kinds: alloc, launch, htod, dtoh, load)", tok);
            return -1;
        }
        if (parse_long("FAKECUDA_FAIL", eq + 1, 1, 1L << 40, &cfg.fail_at[k]))
            return -1;
    }
    return 0;
}

static int read_config(void)
{
    long v;
    const char *s;
    cfg.devices = 1;
    cfg.sm = 80;
    cfg.latency_us = 100;
    cfg.memory = 256u << 20;
    if ((s = getenv("FAKECUDA_DEVICES"))) {
        if (parse_long("FAKECUDA_DEVICES", s, 0, FC_MAX_DEVICES, &v))
            return -1;
        cfg.devices = (int)v;
    }
    if ((s = getenv("FAKECUDA_SM"))) {
        if (parse_long("FAKECUDA_SM", s, 35, 120, &v))
            return -1;
        cfg.sm = (int)v;
    }
    if ((s = getenv("FAKECUDA_LATENCY_US"))) {
        if (parse_long("FAKECUDA_LATENCY_US", s, 0, 10000000, &v))
            return -1;
        cfg.latency_us = v;
    }
    if ((s = getenv("FAKECUDA_MEMORY_MB"))) {
        if (parse_long("FAKECUDA_MEMORY_MB", s, 1, 1 << 20, &v))
            return -1;
        cfg.memory = (size_t)v << 20;
    }
    if ((s = getenv("FAKECUDA_FAIL")) && *s && parse_fail(s))
        return -1;
    return 0;
}

/* True when this is the injected failure of its kind. */
static int inject(enum fc_fail_kind k)
{
    long n = atomic_fetch_add(&cfg.calls[k], 1) + 1;
    if (cfg.fail_at[k] && n == cfg.fail_at[k]) {
        fc_say("injected failure: %s call %ld fails (FAKECUDA_FAIL)", fail_names[k], n);
        return 1;
    }
    return 0;
}

/* ---- global state: one lock for everything (a test double, not a driver) ---- */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static CUresult init_result = CUDA_ERROR_NOT_INITIALIZED;
static int initialised;

struct fc_block {               /* an allocation or a free range of an arena */
    size_t off, size;
    int live;
    struct fc_block *next;      /* by offset */
};

struct fc_ctx {
    int device;
    int retained;
    unsigned flags;
    size_t limits[3];
};

static struct fc_device {
    unsigned char *arena;       /* host backing of [FC_DEV_BASE + (d << 40), +memory) */
    struct fc_block *blocks;
    struct fc_ctx ctx;
} devs[FC_MAX_DEVICES];

static __thread struct fc_ctx *current_ctx;

static CUdeviceptr dev_base(int d)
{
    return FC_DEV_BASE + ((CUdeviceptr)d << 40);
}

static void init(void)
{
    if (read_config())
        return;
    for (int d = 0; d < cfg.devices; d++) {
        void *p = mmap(NULL, cfg.memory, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        struct fc_block *b = calloc(1, sizeof *b);
        if (p == MAP_FAILED || !b) {
            fc_say("cannot reserve %zu bytes of device memory", cfg.memory);
            free(b);
            return;
        }
        b->size = cfg.memory;
        devs[d].arena = p;
        devs[d].blocks = b;
        devs[d].ctx.device = d;
        devs[d].ctx.limits[0] = 1024;       /* stack */
        devs[d].ctx.limits[1] = 1 << 20;    /* printf fifo */
        devs[d].ctx.limits[2] = 8 << 20;    /* malloc heap */
    }
    initialised = 1;
    init_result = CUDA_SUCCESS;
}

#define NEED_INIT()                                                    \
    do {                                                               \
        if (!initialised)                                              \
            return CUDA_ERROR_NOT_INITIALIZED;                         \
    } while (0)

static int valid_device(CUdevice d)
{
    return d >= 0 && d < cfg.devices;
}

/* ---- device memory ---- */

/* Called with lock held. First fit; 0 when the arena is full. */
static CUdeviceptr arena_alloc(int d, size_t size)
{
    size_t want = (size ? size + FC_ALIGN - 1 : FC_ALIGN) / FC_ALIGN * FC_ALIGN;
    for (struct fc_block *b = devs[d].blocks; b; b = b->next) {
        if (b->live || b->size < want)
            continue;
        if (b->size > want) {
            struct fc_block *rest = calloc(1, sizeof *rest);
            if (!rest)
                return 0;
            rest->off = b->off + want;
            rest->size = b->size - want;
            rest->next = b->next;
            b->next = rest;
            b->size = want;
        }
        b->live = 1;
        return dev_base(d) + b->off;
    }
    return 0;
}

static int device_of(CUdeviceptr p)
{
    if (p < FC_DEV_BASE)
        return -1;
    CUdeviceptr d = (p - FC_DEV_BASE) >> 40;
    return d < (CUdeviceptr)cfg.devices ? (int)d : -1;
}

/* Called with lock held. */
static CUresult arena_free(CUdeviceptr p)
{
    int d = device_of(p);
    struct fc_block *prev = NULL;
    if (d >= 0)
        for (struct fc_block *b = devs[d].blocks; b; prev = b, b = b->next) {
            if (dev_base(d) + b->off != p)
                continue;
            if (!b->live)
                break;
            b->live = 0;
            if (b->next && !b->next->live) {
                struct fc_block *n = b->next;
                b->size += n->size;
                b->next = n->next;
                free(n);
            }
            if (prev && !prev->live) {
                prev->size += b->size;
                prev->next = b->next;
                free(b);
            }
            return CUDA_SUCCESS;
        }
    fc_say("free of 0x%llx: not the start of a live device allocation", p);
    return CUDA_ERROR_INVALID_VALUE;
}

/* Called with lock held: the host backing of [p, p + size), which must lie
 * in one live allocation; NULL (and a line on stderr) otherwise. */
static unsigned char *device_bytes(CUdeviceptr p, size_t size, const char *what)
{
    int d = device_of(p);
    if (d >= 0) {
        size_t off = p - dev_base(d);
        for (struct fc_block *b = devs[d].blocks; b; b = b->next)
            if (b->live && off >= b->off && off - b->off <= b->size && size <= b->size - (off - b->off))
                return devs[d].arena + off;
    }
    fc_say("%s: [0x%llx, +%zu) is not inside one live device allocation", what, p, size);
    return NULL;
}

/* ---- streams, events and the work they complete later ---- */

enum op_kind { OP_COPY_IN, OP_COPY_OUT, OP_COPY_DEV, OP_SET, OP_KERNEL, OP_RECORD, OP_WAIT, OP_HOSTFN };

struct fc_op {
    enum op_kind kind;
    unsigned char *dst;         /* resolved at issue time */
    const unsigned char *src;
    unsigned char *staged;      /* OP_COPY_IN: host bytes copied at issue, as CUDA stages pageable memory */
    size_t size;
    int value;
    struct fc_event *event;
    unsigned long generation;
    void (*hostfn)(void *);
    void *hostarg;
    struct timespec ready;
    struct fc_op *next;
};

struct fc_stream {
    int device;
    int stopping;
    int busy;                   /* the worker holds an op outside the lock */
    struct fc_op *head, *tail;
    pthread_t worker;
};

struct fc_event {
    unsigned long recorded;     /* records issued */
    unsigned long completed;    /* records the stream has reached */
};

static struct timespec ready_time(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    t.tv_nsec += (cfg.latency_us % 1000000) * 1000;
    t.tv_sec += cfg.latency_us / 1000000 + t.tv_nsec / 1000000000;
    t.tv_nsec %= 1000000000;
    return t;
}

static void run_op(struct fc_op *op)
{
    switch (op->kind) {
    case OP_COPY_IN:
        memcpy(op->dst, op->staged, op->size);
        break;
    case OP_COPY_OUT:
    case OP_COPY_DEV:
        memmove(op->dst, op->src, op->size);
        break;
    case OP_SET:
        memset(op->dst, op->value, op->size);
        break;
    case OP_HOSTFN:
        op->hostfn(op->hostarg);
        break;
    case OP_KERNEL:
    case OP_RECORD:
    case OP_WAIT:
        break;
    }
}

static void *stream_worker(void *arg)
{
    struct fc_stream *s = arg;
    pthread_mutex_lock(&lock);
    for (;;) {
        struct fc_op *op = s->head;
        if (!op) {
            if (s->stopping)
                break;
            pthread_cond_wait(&changed, &lock);
            continue;
        }
        if (op->kind == OP_WAIT && op->event->completed < op->generation) {
            pthread_cond_wait(&changed, &lock);
            continue;
        }
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec < op->ready.tv_sec ||
            (now.tv_sec == op->ready.tv_sec && now.tv_nsec < op->ready.tv_nsec)) {
            pthread_mutex_unlock(&lock);
            clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &op->ready, NULL);
            pthread_mutex_lock(&lock);
            continue;
        }
        s->busy = 1;
        pthread_mutex_unlock(&lock);
        run_op(op);
        pthread_mutex_lock(&lock);
        s->busy = 0;
        if (op->kind == OP_RECORD && op->event->completed < op->generation)
            op->event->completed = op->generation;
        s->head = op->next;
        if (!s->head)
            s->tail = NULL;
        free(op->staged);
        free(op);
        pthread_cond_broadcast(&changed);
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

/* Called with lock held; takes op. */
static CUresult enqueue(struct fc_stream *s, struct fc_op *op)
{
    op->ready = ready_time();
    op->next = NULL;
    if (s->tail)
        s->tail->next = op;
    else
        s->head = op;
    s->tail = op;
    pthread_cond_broadcast(&changed);
    return CUDA_SUCCESS;
}

static struct fc_op *new_op(enum op_kind kind)
{
    struct fc_op *op = calloc(1, sizeof *op);
    if (op)
        op->kind = kind;
    return op;
}

/* Called with lock held. */
static void wait_idle(struct fc_stream *s)
{
    while (s->head || s->busy)
        pthread_cond_wait(&changed, &lock);
}

/* ---- the API: init and devices ---- */

FC_EXPORT CUresult cuInit(unsigned flags)
{
    (void)flags;
    pthread_once(&init_once, init);
    return init_result;
}

FC_EXPORT CUresult cuDriverGetVersion(int *v)
{
    *v = 12040;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult cuGetErrorString(CUresult e, const char **s)
{
    switch (e) {
    case CUDA_SUCCESS: *s = "no error"; break;
    case CUDA_ERROR_INVALID_VALUE: *s = "invalid argument"; break;
    case CUDA_ERROR_OUT_OF_MEMORY: *s = "out of memory"; break;
    case CUDA_ERROR_NOT_INITIALIZED: *s = "initialization error"; break;
    case CUDA_ERROR_NO_DEVICE: *s = "no CUDA-capable device is detected"; break;
    case CUDA_ERROR_INVALID_DEVICE: *s = "invalid device ordinal"; break;
    case CUDA_ERROR_INVALID_IMAGE: *s = "device kernel image is invalid"; break;
    case CUDA_ERROR_INVALID_HANDLE: *s = "invalid resource handle"; break;
    case CUDA_ERROR_NOT_FOUND: *s = "named symbol not found"; break;
    case CUDA_ERROR_NOT_READY: *s = "device not ready"; break;
    case CUDA_ERROR_ILLEGAL_ADDRESS: *s = "an illegal memory access was encountered"; break;
    case CUDA_ERROR_LAUNCH_FAILED: *s = "unspecified launch failure"; break;
    case CUDA_ERROR_NOT_SUPPORTED: *s = "operation not supported"; break;
    default: *s = "unknown error"; return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult cuDeviceGetCount(int *n)
{
    NEED_INIT();
    *n = cfg.devices;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
    NEED_INIT();
    if (!valid_device(ordinal))
        return CUDA_ERROR_INVALID_DEVICE;
    *d = ordinal;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
    NEED_INIT();
    if (!valid_device(d) || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    snprintf(name, (size_t)len, "fakecuda device %d (sm_%d)", d, cfg.sm);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult cuDeviceGetUuid(unsigned char uuid[16], CUdevice d)
{
    NEED_INIT();
    if (!valid_device(d))
        return CUDA_ERROR_INVALID_DEVICE;
    memset(uuid, 0, 16);
    memcpy(uuid, "fakecuda", 8);
    uuid[15] = (unsigned char)d;
    return CUDA_SUCCESS;
}
FC_EXPORT CUresult cuDeviceGetUuid_v2(unsigned char uuid[16], CUdevice d)
{
    return cuDeviceGetUuid(uuid, d);
}

FC_EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice d)
{
    NEED_INIT();
    if (!valid_device(d))
        return CUDA_ERROR_INVALID_DEVICE;
    *bytes = cfg.memory;
    return CUDA_SUCCESS;
}
FC_EXPORT CUresult cuDeviceTotalMem(size_t *bytes, CUdevice d)
{
    return cuDeviceTotalMem_v2(bytes, d);
}

FC_EXPORT CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice d)
{
    NEED_INIT();
    if (!valid_device(d))
        return CUDA_ERROR_INVALID_DEVICE;
    switch (attr) {
    case 1: *v = 1024; break;           /* max threads per block */
    case 2: *v = 1024; break;           /* max block dim x */
    case 3: case 4: *v = 1024; break;   /* block dim y, z */
    case 5: *v = 2147483647; break;     /* max grid dim x */
    case 6: case 7: *v = 65535; break;
    case 8: *v = 49152; break;          /* shared memory per block */
    case 10: *v = 32; break;            /* warp size */
    case 13: *v = 1410000; break;       /* clock rate, kHz */
    case 16: *v = 108; break;           /* multiprocessors */
    case 39: *v = 2048; break;          /* max threads per multiprocessor */
    case 41: *v = 1; break;             /* unified addressing */
    case 75: *v = cfg.sm / 10; break;   /* compute capability */
    case 76: *v = cfg.sm % 10; break;
    case 83: *v = 0; break;             /* managed memory: kernels never run */
    default: *v = 0; break;
    }
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult cuDeviceCanAccessPeer(int *can, CUdevice d, CUdevice peer)
{
    NEED_INIT();
    if (!valid_device(d) || !valid_device(peer))
        return CUDA_ERROR_INVALID_DEVICE;
    *can = d != peer;
    return CUDA_SUCCESS;
}

/* ---- contexts ---- */

FC_EXPORT CUresult cuDevicePrimaryCtxGetState(CUdevice d, unsigned *flags, int *active)
{
    NEED_INIT();
    if (!valid_device(d))
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&lock);
    *flags = devs[d].ctx.flags;
    *active = devs[d].ctx.retained > 0;
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult cuDevicePrimaryCtxSetFlags(CUdevice d, unsigned flags)
{
    NEED_INIT();
    if (!valid_device(d))
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&lock);
    devs[d].ctx.flags = flags;
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}
FC_EXPORT CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice d, unsigned flags)
{
    return cuDevicePrimaryCtxSetFlags(d, flags);
}

FC_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
    NEED_INIT();
    if (!valid_device(d))
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&lock);
    devs[d].ctx.retained++;
    pthread_mutex_unlock(&lock);
    *c = &devs[d].ctx;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice d)
{
    NEED_INIT();
    if (!valid_device(d))
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&lock);
    if (devs[d].ctx.retained > 0)
        devs[d].ctx.retained--;
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}
FC_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d)
{
    return cuDevicePrimaryCtxRelease(d);
}

static int valid_ctx(CUcontext c)
{
    for (int d = 0; d < cfg.devices; d++)
        if (c == &devs[d].ctx)
            return 1;
    return 0;
}

FC_EXPORT CUresult cuCtxSetCurrent(CUcontext c)
{
    NEED_INIT();
    if (c && !valid_ctx(c))
        return CUDA_ERROR_INVALID_CONTEXT;
    current_ctx = c;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult cuCtxGetCurrent(CUcontext *c)
{
    NEED_INIT();
    *c = current_ctx;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult cuCtxGetDevice(CUdevice *d)
{
    NEED_INIT();
    if (!current_ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    *d = current_ctx->device;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult cuCtxGetLimit(size_t *v, int limit)
{
    NEED_INIT();
    if (!current_ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (limit < 0 || limit > 2)
        return CUDA_ERROR_NOT_SUPPORTED;
    pthread_mutex_lock(&lock);
    *v = current_ctx->limits[limit];
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult cuCtxSetLimit(int limit, size_t v)
{
    NEED_INIT();
    if (!current_ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (limit < 0 || limit > 2)
        return CUDA_ERROR_NOT_SUPPORTED;
    pthread_mutex_lock(&lock);
    current_ctx->limits[limit] = v;
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult cuCtxEnablePeerAccess(CUcontext peer, unsigned flags)
{
    NEED_INIT();
    (void)flags;
    if (!current_ctx || !valid_ctx(peer))
        return CUDA_ERROR_INVALID_CONTEXT;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult cuCtxSynchronize(void)
{
    NEED_INIT();
    return CUDA_SUCCESS;
}

/* ---- modules: the image's own symbol table gives globals and kernels ---- */

struct fc_symbol {
    char *name;
    int is_function;
    size_t size;
    CUdeviceptr addr;           /* globals */
};

struct fc_module {
    int device;
    size_t nsyms;
    struct fc_symbol *syms;
};

struct fc_function {
    struct fc_module *module;
    const char *name;
};

/* The extent of an ELF image in memory (cuModuleLoadDataEx is given no size). */
static size_t elf_extent(const Elf64_Ehdr *eh)
{
    size_t end = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
    const Elf64_Shdr *sh = (const void *)((const char *)eh + eh->e_shoff);
    for (unsigned i = 0; i < eh->e_shnum; i++)
        if (sh[i].sh_type != SHT_NOBITS && sh[i].sh_offset + sh[i].sh_size > end)
            end = sh[i].sh_offset + sh[i].sh_size;
    return end;
}

static void free_module(struct fc_module *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->nsyms; i++) {
        if (m->syms[i].addr)
            arena_free(m->syms[i].addr);
        free(m->syms[i].name);
    }
    free(m->syms);
    free(m);
}

/* Called with lock held. */
static CUresult load_module(struct fc_module *m, const unsigned char *img)
{
    const Elf64_Ehdr *eh = (const void *)img;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_machine != EM_CUDA || eh->e_shentsize != sizeof(Elf64_Shdr) || !eh->e_shoff) {
        fc_say("module image is not a 64-bit CUDA ELF (EM_CUDA)");
        return CUDA_ERROR_INVALID_IMAGE;
    }
    size_t extent = elf_extent(eh);
    const Elf64_Shdr *sh = (const void *)(img + eh->e_shoff);
    for (unsigned i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_SYMTAB)
            continue;
        if (sh[i].sh_link >= eh->e_shnum || sh[i].sh_entsize != sizeof(Elf64_Sym))
            return CUDA_ERROR_INVALID_IMAGE;
        const Elf64_Shdr *strs = &sh[sh[i].sh_link];
        const Elf64_Sym *sym = (const void *)(img + sh[i].sh_offset);
        size_t n = sh[i].sh_size / sizeof(Elf64_Sym);
        m->syms = calloc(n, sizeof *m->syms);
        if (!m->syms)
            return CUDA_ERROR_OUT_OF_MEMORY;
        for (size_t k = 0; k < n; k++) {
            int type = ELF64_ST_TYPE(sym[k].st_info);
            if ((type != STT_OBJECT && type != STT_FUNC) || sym[k].st_name >= strs->sh_size ||
                sym[k].st_shndx == SHN_UNDEF || sym[k].st_shndx >= eh->e_shnum)
                continue;
            struct fc_symbol *s = &m->syms[m->nsyms];
            s->name = strdup((const char *)img + strs->sh_offset + sym[k].st_name);
            if (!s->name)
                return CUDA_ERROR_OUT_OF_MEMORY;
            m->nsyms++;
            s->is_function = type == STT_FUNC;
            s->size = sym[k].st_size;
            if (s->is_function)
                continue;
            s->addr = arena_alloc(m->device, s->size);
            if (!s->addr)
                return CUDA_ERROR_OUT_OF_MEMORY;
            unsigned char *dst = devs[m->device].arena + (s->addr - dev_base(m->device));
            const Elf64_Shdr *sec = &sh[sym[k].st_shndx];
            size_t at = sec->sh_offset + (sym[k].st_value - sec->sh_addr);
            if (sec->sh_type == SHT_PROGBITS && at + s->size <= extent)
                memcpy(dst, img + at, s->size);
            else
                memset(dst, 0, s->size);
        }
        return CUDA_SUCCESS;
    }
    fc_say("module image has no symbol table");
    return CUDA_ERROR_INVALID_IMAGE;
}

FC_EXPORT CUresult cuModuleLoadDataEx(CUmodule *out, const void *image, unsigned nopts, int *opts,
                                      void **vals)
{
    (void)nopts, (void)opts, (void)vals;
    NEED_INIT();
    if (!current_ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (inject(FAIL_LOAD))
        return CUDA_ERROR_INVALID_IMAGE;
    struct fc_module *m = calloc(1, sizeof *m);
    if (!m)
        return CUDA_ERROR_OUT_OF_MEMORY;
    m->device = current_ctx->device;
    pthread_mutex_lock(&lock);
    CUresult r = load_module(m, image);
    if (r != CUDA_SUCCESS)
        free_module(m);
    pthread_mutex_unlock(&lock);
    if (r == CUDA_SUCCESS)
        *out = m;
    return r;
}

FC_EXPORT CUresult cuModuleLoadData(CUmodule *out, const void *image)
{
    return cuModuleLoadDataEx(out, image, 0, NULL, NULL);
}

FC_EXPORT CUresult cuModuleUnload(CUmodule m)
{
    NEED_INIT();
    pthread_mutex_lock(&lock);
    free_module(m);
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

static struct fc_symbol *find_symbol(CUmodule m, const char *name, int function)
{
    for (size_t i = 0; m && i < m->nsyms; i++)
        if (m->syms[i].is_function == function && !strcmp(m->syms[i].name, name))
            return &m->syms[i];
    return NULL;
}

FC_EXPORT CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
    NEED_INIT();
    struct fc_symbol *s = find_symbol(m, name, 1);
    if (!s)
        return CUDA_ERROR_NOT_FOUND;
    struct fc_function *fn = calloc(1, sizeof *fn);
    if (!fn)
        return CUDA_ERROR_OUT_OF_MEMORY;
    fn->module = m;
    fn->name = s->name;
    *f = fn;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult cuModuleGetGlobal_v2(CUdeviceptr *p, size_t *size, CUmodule m, const char *name)
{
    NEED_INIT();
    struct fc_symbol *s = find_symbol(m, name, 0);
    if (!s)
        return CUDA_ERROR_NOT_FOUND;
    if (p)
        *p = s->addr;
    if (size)
        *size = s->size;
    return CUDA_SUCCESS;
}
FC_EXPORT CUresult cuModuleGetGlobal(CUdeviceptr *p, size_t *size, CUmodule m, const char *name)
{
    return cuModuleGetGlobal_v2(p, size, m, name);
}

FC_EXPORT CUresult cuFuncGetAttribute(int *v, int attr, CUfunction f)
{
    NEED_INIT();
    if (!f)
        return CUDA_ERROR_INVALID_HANDLE;
    *v = attr == 0 ? 1024 : 0;      /* max threads per block; sizes and registers 0 */
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult cuFuncSetAttribute(CUfunction f, int attr, int v)
{
    (void)attr, (void)v;
    NEED_INIT();
    return f ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

FC_EXPORT CUresult cuFuncGetParamInfo(CUfunction f, size_t index, size_t *offset, size_t *size)
{
    (void)f, (void)index, (void)offset, (void)size;
    return CUDA_ERROR_NOT_SUPPORTED;
}

FC_EXPORT CUresult cuOccupancyMaxPotentialBlockSize(int *min_grid, int *block, CUfunction f,
                                                    size_t (*smem)(int), size_t dyn, int limit)
{
    (void)smem, (void)dyn;
    NEED_INIT();
    if (!f)
        return CUDA_ERROR_INVALID_HANDLE;
    *block = limit > 0 && limit < 1024 ? limit : 1024;
    *min_grid = 216;
    return CUDA_SUCCESS;
}

/* ---- streams and events ---- */

FC_EXPORT CUresult cuStreamCreate(CUstream *out, unsigned flags)
{
    (void)flags;
    NEED_INIT();
    if (!current_ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    struct fc_stream *s = calloc(1, sizeof *s);
    if (!s)
        return CUDA_ERROR_OUT_OF_MEMORY;
    s->device = current_ctx->device;
    if (pthread_create(&s->worker, NULL, stream_worker, s)) {
        free(s);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *out = s;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult cuStreamDestroy_v2(CUstream s)
{
    NEED_INIT();
    if (!s)
        return CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&lock);
    s->stopping = 1;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
    pthread_join(s->worker, NULL);
    free(s);
    return CUDA_SUCCESS;
}
FC_EXPORT CUresult cuStreamDestroy(CUstream s)
{
    return cuStreamDestroy_v2(s);
}

FC_EXPORT CUresult cuStreamSynchronize(CUstream s)
{
    NEED_INIT();
    if (!s)
        return CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&lock);
    wait_idle(s);
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult cuStreamQuery(CUstream s)
{
    NEED_INIT();
    if (!s)
        return CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&lock);
    int pending = s->head || s->busy;
    pthread_mutex_unlock(&lock);
    return pending ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
}

FC_EXPORT CUresult cuEventCreate(CUevent *out, unsigned flags)
{
    (void)flags;
    NEED_INIT();
    struct fc_event *e = calloc(1, sizeof *e);
    if (!e)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *out = e;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult cuEventDestroy_v2(CUevent e)
{
    NEED_INIT();
    /* CUDA lets a pending event be destroyed; its record completes unseen. */
    pthread_mutex_lock(&lock);
    int pending = e && e->completed < e->recorded;
    pthread_mutex_unlock(&lock);
    if (!pending)
        free(e);
    return CUDA_SUCCESS;
}
FC_EXPORT CUresult cuEventDestroy(CUevent e)
{
    return cuEventDestroy_v2(e);
}

FC_EXPORT CUresult cuEventRecord(CUevent e, CUstream s)
{
    NEED_INIT();
    if (!e || !s)
        return CUDA_ERROR_INVALID_HANDLE;
    struct fc_op *op = new_op(OP_RECORD);
    if (!op)
        return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&lock);
    op->event = e;
    op->generation = ++e->recorded;
    enqueue(s, op);
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult cuEventSynchronize(CUevent e)
{
    NEED_INIT();
    if (!e)
        return CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&lock);
    while (e->completed < e->recorded)
        pthread_cond_wait(&changed, &lock);
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult cuEventQuery(CUevent e)
{
    NEED_INIT();
    if (!e)
        return CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&lock);
    int pending = e->completed < e->recorded;
    pthread_mutex_unlock(&lock);
    return pending ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
}

FC_EXPORT CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned flags)
{
    (void)flags;
    NEED_INIT();
    if (!e || !s)
        return CUDA_ERROR_INVALID_HANDLE;
    struct fc_op *op = new_op(OP_WAIT);
    if (!op)
        return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&lock);
    op->event = e;
    op->generation = e->recorded;
    enqueue(s, op);
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult cuLaunchHostFunc(CUstream s, void (*fn)(void *), void *arg)
{
    NEED_INIT();
    if (!s || !fn)
        return CUDA_ERROR_INVALID_HANDLE;
    struct fc_op *op = new_op(OP_HOSTFN);
    if (!op)
        return CUDA_ERROR_OUT_OF_MEMORY;
    op->hostfn = fn;
    op->hostarg = arg;
    pthread_mutex_lock(&lock);
    enqueue(s, op);
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

struct stream_callback {
    void (*fn)(CUstream, CUresult, void *);
    CUstream stream;
    void *arg;
};

static void call_stream_callback(void *p)
{
    struct stream_callback *cb = p;
    cb->fn(cb->stream, CUDA_SUCCESS, cb->arg);
    free(cb);
}

FC_EXPORT CUresult cuStreamAddCallback(CUstream s, void (*fn)(CUstream, CUresult, void *), void *arg,
                                       unsigned flags)
{
    (void)flags;
    struct stream_callback *cb = malloc(sizeof *cb);
    if (!cb)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *cb = (struct stream_callback){fn, s, arg};
    CUresult r = cuLaunchHostFunc(s, call_stream_callback, cb);
    if (r != CUDA_SUCCESS)
        free(cb);
    return r;
}

/* ---- kernels ---- */

FC_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                  unsigned by, unsigned bz, unsigned shmem, CUstream s, void **params,
                                  void **extra)
{
    (void)shmem, (void)params, (void)extra;
    NEED_INIT();
    if (!f || !s)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!gx || !gy || !gz || !bx || !by || !bz || (unsigned long)bx * by * bz > 1024) {
        fc_say("launch of %s: bad grid %ux%ux%u or block %ux%ux%u", f->name, gx, gy, gz, bx, by, bz);
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (f->module->device != s->device) {
        fc_say("launch of %s: its module is on device %d, the stream on device %d", f->name,
               f->module->device, s->device);
        return CUDA_ERROR_INVALID_HANDLE;
    }
    if (inject(FAIL_LAUNCH))
        return CUDA_ERROR_LAUNCH_FAILED;
    struct fc_op *op = new_op(OP_KERNEL);
    if (!op)
        return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&lock);
    enqueue(s, op);
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult cuLaunchKernelEx(const void *config, CUfunction f, void **params, void **extra)
{
    (void)config, (void)f, (void)params, (void)extra;
    return CUDA_ERROR_NOT_SUPPORTED;
}

/* ---- memory ---- */

FC_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t size)
{
    NEED_INIT();
    if (!current_ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (inject(FAIL_ALLOC))
        return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&lock);
    *p = arena_alloc(current_ctx->device, size);
    pthread_mutex_unlock(&lock);
    return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
FC_EXPORT CUresult cuMemAlloc(CUdeviceptr *p, size_t size)
{
    return cuMemAlloc_v2(p, size);
}

FC_EXPORT CUresult cuMemAllocAsync(CUdeviceptr *p, size_t size, CUstream s)
{
    if (!s)
        return CUDA_ERROR_INVALID_HANDLE;
    return cuMemAlloc_v2(p, size);
}

FC_EXPORT CUresult cuMemFree_v2(CUdeviceptr p)
{
    NEED_INIT();
    pthread_mutex_lock(&lock);
    CUresult r = arena_free(p);
    pthread_mutex_unlock(&lock);
    return r;
}
FC_EXPORT CUresult cuMemFree(CUdeviceptr p)
{
    return cuMemFree_v2(p);
}

FC_EXPORT CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s)
{
    if (!s)
        return CUDA_ERROR_INVALID_HANDLE;
    /* In stream order: what is queued before the free may still use it. */
    pthread_mutex_lock(&lock);
    wait_idle(s);
    pthread_mutex_unlock(&lock);
    return cuMemFree_v2(p);
}

/* Host (pinned) and managed memory are host memory: the host may touch them. */
FC_EXPORT CUresult cuMemAllocHost_v2(void **p, size_t size)
{
    NEED_INIT();
    if (inject(FAIL_ALLOC))
        return CUDA_ERROR_OUT_OF_MEMORY;
    return posix_memalign(p, FC_ALIGN, size ? size : 1) ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_SUCCESS;
}
FC_EXPORT CUresult cuMemAllocHost(void **p, size_t size)
{
    return cuMemAllocHost_v2(p, size);
}

FC_EXPORT CUresult cuMemFreeHost(void *p)
{
    NEED_INIT();
    free(p);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult cuMemAllocManaged(CUdeviceptr *p, size_t size, unsigned flags)
{
    (void)flags;
    void *h;
    CUresult r = cuMemAllocHost_v2(&h, size);
    if (r == CUDA_SUCCESS)
        *p = (CUdeviceptr)(uintptr_t)h;
    return r;
}

FC_EXPORT CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total)
{
    NEED_INIT();
    if (!current_ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    size_t avail = 0;
    pthread_mutex_lock(&lock);
    for (struct fc_block *b = devs[current_ctx->device].blocks; b; b = b->next)
        if (!b->live)
            avail += b->size;
    pthread_mutex_unlock(&lock);
    *free_bytes = avail;
    *total = cfg.memory;
    return CUDA_SUCCESS;
}
FC_EXPORT CUresult cuMemGetInfo(size_t *free_bytes, size_t *total)
{
    return cuMemGetInfo_v2(free_bytes, total);
}

/* Queues a copy or set on s; with s NULL it runs now (the synchronous calls). */
static CUresult issue(CUstream s, struct fc_op *op, enum fc_fail_kind fail, const char *what,
                      CUdeviceptr dptr, CUdeviceptr dsrc, void *host_dst, const void *host_src)
{
    CUresult r = CUDA_SUCCESS;
    if (!op)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (fail < FAIL_KINDS && inject(fail)) {
        free(op);
        return CUDA_ERROR_ILLEGAL_ADDRESS;
    }
    if (op->kind == OP_COPY_IN && op->size) {
        /* CUDA stages pageable host memory when the copy is issued. */
        op->staged = malloc(op->size);
        if (!op->staged) {
            free(op);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        memcpy(op->staged, host_src, op->size);
    }
    pthread_mutex_lock(&lock);
    op->dst = host_dst;
    op->src = host_src;
    if (dptr && !(op->dst = device_bytes(dptr, op->size, what)))
        r = CUDA_ERROR_ILLEGAL_ADDRESS;
    if (r == CUDA_SUCCESS && dsrc && !(op->src = device_bytes(dsrc, op->size, what)))
        r = CUDA_ERROR_ILLEGAL_ADDRESS;
    if (r == CUDA_SUCCESS && s)
        r = enqueue(s, op), op = NULL;
    pthread_mutex_unlock(&lock);
    if (op) {
        if (r == CUDA_SUCCESS)
            run_op(op);
        free(op->staged);
        free(op);
    }
    return r;
}

static struct fc_op *copy_op(enum op_kind kind, size_t size)
{
    struct fc_op *op = new_op(kind);
    if (op)
        op->size = size;
    return op;
}

/* A pointer from cuMemAllocHost/Managed is host memory on the device side of a copy. */
static int is_host(CUdeviceptr p)
{
    return device_of(p) < 0;
}

FC_EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
    NEED_INIT();
    if (is_host(dst))
        return issue(NULL, copy_op(OP_COPY_DEV, n), FAIL_HTOD, "copy to device", 0, 0,
                     (void *)(uintptr_t)dst, src);
    return issue(NULL, copy_op(OP_COPY_IN, n), FAIL_HTOD, "copy to device", dst, 0, NULL, src);
}
FC_EXPORT CUresult cuMemcpyHtoD(CUdeviceptr dst, const void *src, size_t n)
{
    return cuMemcpyHtoD_v2(dst, src, n);
}

FC_EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
    NEED_INIT();
    if (!s)
        return CUDA_ERROR_INVALID_HANDLE;
    if (is_host(dst))
        return issue(s, copy_op(OP_COPY_DEV, n), FAIL_HTOD, "copy to device", 0, 0,
                     (void *)(uintptr_t)dst, src);
    return issue(s, copy_op(OP_COPY_IN, n), FAIL_HTOD, "copy to device", dst, 0, NULL, src);
}
FC_EXPORT CUresult cuMemcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
    return cuMemcpyHtoDAsync_v2(dst, src, n, s);
}

FC_EXPORT CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
    NEED_INIT();
    if (is_host(src))
        return issue(NULL, copy_op(OP_COPY_DEV, n), FAIL_DTOH, "copy from device", 0, 0, dst,
                     (const void *)(uintptr_t)src);
    return issue(NULL, copy_op(OP_COPY_OUT, n), FAIL_DTOH, "copy from device", 0, src, dst, NULL);
}
FC_EXPORT CUresult cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t n)
{
    return cuMemcpyDtoH_v2(dst, src, n);
}

FC_EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s)
{
    NEED_INIT();
    if (!s)
        return CUDA_ERROR_INVALID_HANDLE;
    if (is_host(src))
        return issue(s, copy_op(OP_COPY_DEV, n), FAIL_DTOH, "copy from device", 0, 0, dst,
                     (const void *)(uintptr_t)src);
    return issue(s, copy_op(OP_COPY_OUT, n), FAIL_DTOH, "copy from device", 0, src, dst, NULL);
}
FC_EXPORT CUresult cuMemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t n, CUstream s)
{
    return cuMemcpyDtoHAsync_v2(dst, src, n, s);
}

FC_EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    NEED_INIT();
    if (!s)
        return CUDA_ERROR_INVALID_HANDLE;
    return issue(s, copy_op(OP_COPY_DEV, n), FAIL_KINDS, "copy on device", dst, src, NULL, NULL);
}
FC_EXPORT CUresult cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    return cuMemcpyDtoDAsync_v2(dst, src, n, s);
}

FC_EXPORT CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx,
                                     size_t n, CUstream s)
{
    NEED_INIT();
    if (!s || !valid_ctx(dctx) || !valid_ctx(sctx))
        return CUDA_ERROR_INVALID_HANDLE;
    if (device_of(dst) != dctx->device || device_of(src) != sctx->device) {
        fc_say("peer copy 0x%llx (device %d) <- 0x%llx (device %d): addresses of other devices",
               dst, dctx->device, src, sctx->device);
        return CUDA_ERROR_INVALID_VALUE;
    }
    return issue(s, copy_op(OP_COPY_DEV, n), FAIL_KINDS, "copy between devices", dst, src, NULL, NULL);
}

static CUresult memset_async(CUdeviceptr dst, int value, size_t n, size_t width, CUstream s)
{
    NEED_INIT();
    if (!s)
        return CUDA_ERROR_INVALID_HANDLE;
    struct fc_op *op = copy_op(OP_SET, n * width);
    if (op)
        op->value = value;
    return issue(s, op, FAIL_KINDS, "memset", dst, 0, NULL, NULL);
}

/* Wider patterns are filled with their low byte: no test reads device memory
 * set this way, and a kernel that would is never run. */
FC_EXPORT CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char v, size_t n, CUstream s)
{
    return memset_async(dst, v, n, 1, s);
}
FC_EXPORT CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short v, size_t n, CUstream s)
{
    return memset_async(dst, v & 0xff, n, 2, s);
}
FC_EXPORT CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned v, size_t n, CUstream s)
{
    return memset_async(dst, v & 0xff, n, 4, s);
}
FC_EXPORT CUresult cuMemsetD2D8Async(CUdeviceptr dst, size_t pitch, unsigned char v, size_t w, size_t h,
                                     CUstream s)
{
    (void)pitch;
    return memset_async(dst, v, w * h, 1, s);
}
FC_EXPORT CUresult cuMemsetD2D16Async(CUdeviceptr dst, size_t pitch, unsigned short v, size_t w,
                                      size_t h, CUstream s)
{
    (void)pitch;
    return memset_async(dst, v & 0xff, w * h, 2, s);
}
FC_EXPORT CUresult cuMemsetD2D32Async(CUdeviceptr dst, size_t pitch, unsigned v, size_t w, size_t h,
                                      CUstream s)
{
    (void)pitch;
    return memset_async(dst, v & 0xff, w * h, 4, s);
}

/* Virtual memory management (LLVM 20+ may try it for its memory pools):
 * not modelled; the plugins fall back when these fail. */
/* Virtual memory management (LLVM 20+ may try it for its memory pools):
 * not modelled; the plugins fall back when these fail. */
FC_EXPORT CUresult cuMemAddressReserve(CUdeviceptr *p, size_t s, size_t a, CUdeviceptr addr,
                                       unsigned long long f)
{
    (void)p, (void)s, (void)a, (void)addr, (void)f;
    return CUDA_ERROR_NOT_SUPPORTED;
}
FC_EXPORT CUresult cuMemAddressFree(CUdeviceptr p, size_t s)
{
    (void)p, (void)s;
    return CUDA_ERROR_NOT_SUPPORTED;
}
FC_EXPORT CUresult cuMemCreate(unsigned long long *h, size_t s, const void *prop, unsigned long long f)
{
    (void)h, (void)s, (void)prop, (void)f;
    return CUDA_ERROR_NOT_SUPPORTED;
}
FC_EXPORT CUresult cuMemMap(CUdeviceptr p, size_t s, size_t o, unsigned long long h, unsigned long long f)
{
    (void)p, (void)s, (void)o, (void)h, (void)f;
    return CUDA_ERROR_NOT_SUPPORTED;
}
FC_EXPORT CUresult cuMemUnmap(CUdeviceptr p, size_t s)
{
    (void)p, (void)s;
    return CUDA_ERROR_NOT_SUPPORTED;
}
FC_EXPORT CUresult cuMemRelease(unsigned long long h)
{
    (void)h;
    return CUDA_ERROR_NOT_SUPPORTED;
}
FC_EXPORT CUresult cuMemSetAccess(CUdeviceptr p, size_t s, const void *desc, size_t n)
{
    (void)p, (void)s, (void)desc, (void)n;
    return CUDA_ERROR_NOT_SUPPORTED;
}
FC_EXPORT CUresult cuMemGetAllocationGranularity(size_t *g, const void *prop, int o)
{
    (void)g, (void)prop, (void)o;
    return CUDA_ERROR_NOT_SUPPORTED;
}
