/* unload.c - see unload.h. */
#include "core/unload.h"

#include "core/lifecycle.h"

void (*tr_unload_hook)(void);

void tr_before_unload(void)
{
    void (*hook)(void) = __atomic_load_n(&tr_unload_hook, __ATOMIC_ACQUIRE);
    if (hook && tr_lifecycle_active())
        hook();
}
