/* demangle.c - C++ linkage names as written in the source (demangle.h). */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "writer/demangle.h"

typedef char *(*cxa_demangle_fn)(const char *mangled, char *buf, size_t *len, int *status);

static cxa_demangle_fn demangler;
static pthread_once_t demangler_once = PTHREAD_ONCE_INIT;

static void find_demangler(void)
{
    void *f = dlsym(RTLD_DEFAULT, "__cxa_demangle");
    if (!f) {
        /* Kept open: the names of a whole trace go through it. */
        void *lib = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
        if (lib)
            f = dlsym(lib, "__cxa_demangle");
    }
    memcpy(&demangler, &f, sizeof demangler); /* object to function pointer, as POSIX allows */
}

static void copy_cut(char *out, size_t outlen, const char *s, size_t len)
{
    if (!outlen)
        return;
    if (len >= outlen)
        len = outlen - 1;
    memcpy(out, s, len);
    out[len] = '\0';
}

bool tr_demangle(const char *symbol, size_t len, char *out, size_t outlen)
{
    if (len > 2 && symbol[0] == '_' && symbol[1] == 'Z') {
        pthread_once(&demangler_once, find_demangler);
        char *raw = demangler ? strndup(symbol, len) : NULL;
        int status = -1;
        char *plain = raw ? demangler(raw, NULL, NULL, &status) : NULL;
        free(raw);
        if (plain && status == 0) {
            copy_cut(out, outlen, plain, strlen(plain));
            free(plain);
            return true;
        }
        free(plain);
    }
    copy_cut(out, outlen, symbol, len);
    return false;
}
