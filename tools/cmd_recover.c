/* cmd_recover.c - `tracer recover DIR`: the journal of a run that did not end
 * normally (crash, kill, _exit) becomes an OTF2 archive, through the same
 * code that writes a normal run's archive (src/writer/writer.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "journal/journal_format.h"
#include "writer/writer.h"

void cmd_recover_usage(FILE *fp)
{
    fputs("usage: tracer recover [--force] DIR\n"
          "\n"
          "Writes DIR/traces.otf2 from DIR/" TR_JOURNAL_NAME ", the journal a traced run keeps\n"
          "while it runs. Use it when the run crashed, was killed, or ended in _exit:\n"
          "every event that reached the journal is recovered, regions left open are\n"
          "closed at the last event and marked incomplete, and damaged parts of the\n"
          "journal are skipped (one line says how much).\n"
          "\n"
          "  --force   replace a trace DIR already holds (the journal stays)\n"
          "\n"
          "exit status: 0 written, 1 failed, 2 usage error\n",
          fp);
}

/* A crashed run leaves its claim: an empty traces.otf2. A real one is kept
 * unless --force. */
static int holds_trace(const char *dir)
{
    char p[4200];
    struct stat st;
    snprintf(p, sizeof p, "%s/traces.otf2", dir);
    return lstat(p, &st) == 0 && st.st_size > 0;
}

int cmd_recover(int argc, char **argv)
{
    int force = 0;
    const char *dir = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            cmd_recover_usage(stdout);
            return 0;
        }
        if (!strcmp(argv[i], "--force")) {
            force = 1;
        } else if (argv[i][0] == '-' && strcmp(argv[i], "--")) {
            fprintf(stderr, "tracer: recover: unknown option '%s'; see 'tracer recover --help'\n", argv[i]);
            return 2;
        } else if (strcmp(argv[i], "--")) {
            if (dir) {
                fprintf(stderr, "tracer: recover: one directory only; see 'tracer recover --help'\n");
                return 2;
            }
            dir = argv[i];
        }
    }
    if (!dir) {
        fprintf(stderr, "tracer: recover: no directory given; see 'tracer recover --help'\n");
        return 2;
    }
    char journal[4200];
    snprintf(journal, sizeof journal, "%s/%s", dir, TR_JOURNAL_NAME);
    if (access(journal, R_OK)) {
        fprintf(stderr, "tracer: recover: cannot read %s: %s\n", journal, strerror(errno));
        return 1;
    }
    if (holds_trace(dir) && !force) {
        fprintf(stderr, "tracer: recover: %s already holds a trace; --force replaces it\n", dir);
        return 1;
    }
    tr_convert_report r;
    if (tr_writer_convert(journal, dir, &r)) {
        fprintf(stderr, "tracer: recover: %s\n", r.error);
        return 1;
    }
    if (r.warning[0])
        fprintf(stderr, "tracer: recover: %s\n", r.warning);
    else if (r.skipped_bytes || r.truncated)
        fprintf(stderr, "tracer: recover: skipped %llu damaged bytes (%llu damaged places%s); every intact frame "
                        "was used\n",
                (unsigned long long)r.skipped_bytes, (unsigned long long)r.bad_frames,
                r.truncated ? ", the journal ends inside a frame" : "");
    const char *how = r.ended ? "the run ended normally" : r.crashed ? "the run died of a signal"
                                                                   : "the run did not end normally";
    printf("recovered %s/traces.otf2: %llu events of %llu host threads and %llu devices (%s", dir,
           (unsigned long long)r.events, (unsigned long long)r.locations, (unsigned long long)r.devices, how);
    if (r.crashed)
        printf(", signal %d", r.crash_signal);
    printf(")\n");
    return 0;
}
