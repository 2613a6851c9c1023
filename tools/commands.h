/* Commands of the `tracer` CLI. The counting behind `tracer summary` is
 * the summary library's (summary/summary.h), so that tests, future commands
 * and libtracer.so read the same numbers without parsing the text output.
 */
#ifndef TRACER_TOOLS_COMMANDS_H
#define TRACER_TOOLS_COMMANDS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* struct tr_summary and its functions: the summary library (src/summary/),
 * shared with libtracer.so's end-of-run report. */
#include "summary/summary.h"

/* Entry points of the commands: argv[0] is the command name. */
int cmd_summary(int argc, char **argv);
void cmd_summary_usage(FILE *fp);
int cmd_info(int argc, char **argv);
void cmd_info_usage(FILE *fp);
int cmd_run(int argc, char **argv);
void cmd_run_usage(FILE *fp);

/* tracer recover DIR (cmd_recover.c). */
int cmd_recover(int argc, char **argv);
void cmd_recover_usage(FILE *fp);

/* tracer convert ARCHIVE -o FILE (cmd_convert.c; convert_sink.h). */
int cmd_convert(int argc, char **argv);
void cmd_convert_usage(FILE *fp);

#endif
