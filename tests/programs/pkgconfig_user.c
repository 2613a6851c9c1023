/* Ground truth for test_pkgconfig.py, which builds this program against an
 * installed tracer with nothing but
 *     cc pkgconfig_user.c $(pkg-config --cflags --libs tracer)
 * region "pc outer" once, around PC_N regions "pc inner", each holding one
 * mark "pc tick" of value i (0 .. PC_N-1). Prints the libtracer.so it
 * runs with (the rpath of tracer.pc must have found the installed one),
 * then "pkgconfig_user: ok". */
#define _GNU_SOURCE
#include <link.h>
#include <stdio.h>
#include <string.h>

#include <tracer.h>

#define PC_N 4

/* Prints the path of each loaded libtracer.so: the loader's own record. */
static int print_libtracer(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    if (info->dlpi_name && strstr(info->dlpi_name, "libtracer.so"))
        printf("libtracer: %s\n", info->dlpi_name);
    return 0;
}

int main(void)
{
    tracer_region_t outer = tracer_region_register("pc outer");
    tracer_region_t inner = tracer_region_register("pc inner");
    tracer_region_t tick = tracer_region_register("pc tick");
    if (!outer || !inner || !tick) {
        printf("pkgconfig_user: register failed\n");
        return 1;
    }
    int bad = tracer_region_begin(outer);
    for (int i = 0; i < PC_N; i++) {
        bad |= tracer_region_begin(inner);
        bad |= tracer_mark(tick, (uint64_t)i);
        bad |= tracer_region_end(inner);
    }
    bad |= tracer_region_end(outer);
    dl_iterate_phdr(print_libtracer, NULL);
    printf("pkgconfig_user: %s\n", bad ? "a call failed" : "ok");
    return bad != 0;
}
