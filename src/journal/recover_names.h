/* recover_names.h - `tracer recover` names the code addresses a run died
 * before naming.
 *
 * The consumer thread names each code address (symbols.h) in a SYMBOL frame
 * before the chunk that needs it; the chunks a crash handler saved, or that
 * recover took from the in-flight file, were never named, and their regions
 * would be plain "target" and "kernel". The journal's MODULES frames say
 * which files the process had loaded, where, and which files they were
 * (device, inode, size, mtime): each such address is named from the same
 * file, as the process would have named it, and a SYMBOL frame is appended
 * for it, so the archive names it as a normal run does. A file that changed
 * or went since names nothing (another build's lines would be wrong names);
 * the report says how many addresses stayed unnamed and why. The host
 * addresses of data operations get VARIABLE frames the same way (the
 * global that holds each, as symbols.h finds it). Addresses in
 * a range a library was unloaded from (UNLOAD frames) are left alone: which
 * library held them at a record's time is not known here. */
#ifndef TR_JOURNAL_RECOVER_NAMES_H
#define TR_JOURNAL_RECOVER_NAMES_H

#include <stdint.h>

typedef struct tr_names_report {
    uint64_t named;       /* code addresses named from the files */
    uint64_t named_variables; /* globals data operations touched, named from the files */
    uint64_t changed;     /* code addresses left unnamed: their file changed or is gone */
    uint64_t changed_data; /* data addresses in a module whose file changed: no variable named */
    uint64_t no_module;   /* left unnamed: in no file the journal lists */
    uint64_t no_symbol;   /* left unnamed: in a file, but no symbol of it holds them */
    int no_modules;       /* the journal lists no module (a tracer before MODULES frames) */
    char changed_file[256]; /* the first file that changed */
    char problem[256];    /* why nothing was done (tr_recover_names returned -1) */
} tr_names_report;

/* Names what @journal's records need and its SYMBOL frames lack, appending
 * SYMBOL frames to it. Fills @r. Returns 0, or -1 (the journal cannot be
 * read or appended to, or out of memory; r->problem says which). */
int tr_recover_names(const char *journal, tr_names_report *r);

#endif
