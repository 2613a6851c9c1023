/* symbols_reload_lib.c - a library test_symbols_reload loads, unloads and
 * loads again under another name: one call site whose return address is
 * described. */
#define LINE_OF_CALL 11
__attribute__((noinline)) void *reload_where(void) { return __builtin_return_address(0); }

__attribute__((noinline)) void *reload_site(void)
{
    void *ra;
    __asm__ volatile("" ::: "memory");
    ra = reload_where(); /* LINE_OF_CALL */
    __asm__ volatile("" ::: "memory");
    return ra;
}

int reload_line_of_call(void) { return LINE_OF_CALL; }
