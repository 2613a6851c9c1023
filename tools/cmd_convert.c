/* cmd_convert.c - tracer convert (being written). */
#include "commands.h"
#include "convert_sink.h"

void cmd_convert_usage(FILE *fp) { fputs("usage: tracer convert ARCHIVE -o FILE\n", fp); }
int cmd_convert(int argc, char **argv)
{
    (void)argc, (void)argv;
    return 2;
}
