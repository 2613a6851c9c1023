/* symbols_files.h - the files libdwfl reads symbols from, kept as
 * core/fd_keep.h says.
 *
 * libdwfl keeps a descriptor of every ELF and debug file it reads until the
 * module is dropped, and then closes it: if the program has put a file of its
 * own at that number meanwhile (closing every descriptor and opening its
 * own, or dup2), libdwfl would close the program's file. So an ELF file is
 * read (mapped) and its descriptor closed before libdwfl gets the Elf, and a
 * debug file's descriptor, which libdwfl must hold, is moved high and
 * remembered; before libdwfl may close one, tr_symbols_files_safe() says
 * whether every remembered number is still libdwfl's. */
#ifndef TR_JOURNAL_SYMBOLS_FILES_H
#define TR_JOURNAL_SYMBOLS_FILES_H

#include <elfutils/libdwfl.h>

/* The callbacks for dwfl_begin. One Dwfl at a time uses them. */
const Dwfl_Callbacks *tr_symbols_callbacks(void);

/* A new Dwfl: nothing remembered. */
void tr_symbols_files_reset(void);

/* 1 when no descriptor libdwfl holds has been taken by the program, so that
 * dwfl_end and a new report (which drops modules) close only libdwfl's. */
int tr_symbols_files_safe(void);

#endif
