/* symbols_reload_other.c - library C of test_symbols_reload: loaded when A
 * is unloaded, laid out unlike A (other names, more text), so that
 * whatever now lies where A's file was mapped says something else. */
#define LINE_OF_CALL 15
static volatile int sink;
__attribute__((noinline)) void *other_where(int i) { sink = i; return __builtin_return_address(0); }

__attribute__((noinline, used)) void *other_padding_so_that_this_library_differs_from_a_in_size(int i)
{
    return other_where(i * 3 + 1);
}

__attribute__((noinline)) void *other_site(void)
{
    return other_where(7); /* LINE_OF_CALL */
}

int other_line_of_call(void) { return LINE_OF_CALL; }
const char other_text[8192] = "a larger read-only section than A's, so the file's layout differs";
