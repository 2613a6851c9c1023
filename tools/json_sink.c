/* json_sink.c - being written. */
#include "convert_sink.h"
tc_sink *tc_json_sink(FILE *out) { (void)out; return 0; }
