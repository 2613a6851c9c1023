/* find_lib.c - where libtracer.so is, for `tracer info` and `tracer run`.
 *
 * The command is found through /proc/self/exe, so a build tree or an
 * installed tree that was moved still finds its own library first; the
 * paths meson knew at build time are the fallback. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "info.h"

#ifndef TRACER_BUILD_LIB
#define TRACER_BUILD_LIB ""
#endif
#ifndef TRACER_INSTALL_LIB
#define TRACER_INSTALL_LIB ""
#endif
#ifndef TRACER_LIBDIR
#define TRACER_LIBDIR "lib"
#endif

static void add_tried(char *tried, size_t triedlen, const char *path)
{
    size_t n = strlen(tried);
    if (n < triedlen)
        snprintf(tried + n, triedlen - n, "%s%s", n ? ", " : "", path);
}

/* An absolute path without resolving the library's own symlink, so that
 * LD_PRELOAD shows the name the user knows (libtracer.so, not .so.0.1.0). */
static int absolute(const char *path, char *out, size_t outlen)
{
    if (access(path, R_OK) != 0)
        return -1;
    char dir[PATH_MAX], resolved[PATH_MAX];
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    if (!realpath(dir, resolved))
        return -1;
    int n = snprintf(out, outlen, "%s%s%s", resolved, strcmp(resolved, "/") ? "/" : "", base);
    return n > 0 && (size_t)n < outlen ? 0 : -1;
}

static int try_path(const char *path, char *out, size_t outlen, char *tried, size_t triedlen)
{
    if (!path[0])
        return -1;
    if (absolute(path, out, outlen) == 0)
        return 0;
    add_tried(tried, triedlen, path);
    return -1;
}

int tr_find_libtracer(const char *override, char *out, size_t outlen, char *tried, size_t triedlen)
{
    tried[0] = 0;
    if (override)
        return try_path(override, out, outlen, tried, triedlen);

    char exe[PATH_MAX], cand[PATH_MAX + 64];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = 0;
            /* build tree: build/tools/tracer beside build/src/libtracer.so */
            snprintf(cand, sizeof cand, "%s/../src/libtracer.so", exe);
            if (try_path(cand, out, outlen, tried, triedlen) == 0)
                return 0;
            /* install tree: <prefix>/bin/tracer beside <prefix>/<libdir> */
            if (TRACER_LIBDIR[0] != '/') {
                snprintf(cand, sizeof cand, "%s/../%s/libtracer.so.0", exe, TRACER_LIBDIR);
                if (try_path(cand, out, outlen, tried, triedlen) == 0)
                    return 0;
            }
        }
    }
    if (try_path(TRACER_INSTALL_LIB, out, outlen, tried, triedlen) == 0)
        return 0;
    return try_path(TRACER_BUILD_LIB, out, outlen, tried, triedlen);
}
