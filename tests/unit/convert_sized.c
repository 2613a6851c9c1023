/* convert_sized JOURNAL ARCHIVE_DIR small|large|auto - tr_writer_convert
 * with OTF2's small chunks forced ("small": every journal, however long),
 * never ("large"), or as the end of a run chooses ("auto"). For
 * test_archive_chunks.py, which compares the archives and reads the chunk
 * size each got from its anchor file. Prints "records R events E" or the
 * error; exit status 1 on an error. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "writer/writer.h"

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: convert_sized JOURNAL ARCHIVE_DIR small|large|auto\n");
        return 2;
    }
    uint64_t limit = !strcmp(argv[3], "small") ? UINT64_MAX : !strcmp(argv[3], "large") ? 0 : TR_WRITER_SMALL_RECORDS;
    tr_convert_report r;
    if (tr_writer_convert_sized(argv[1], argv[2], limit, &r)) {
        printf("error: %s\n", r.error);
        return 1;
    }
    printf("records %llu events %llu%s%s\n", (unsigned long long)r.records, (unsigned long long)r.events,
           r.warning[0] ? " warning: " : "", r.warning);
    return 0;
}
