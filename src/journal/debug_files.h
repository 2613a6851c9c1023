/* debug_files.h - a module's separate debug file, found on this machine only.
 *
 * libdwfl's standard lookup (dwfl_standard_find_debuginfo) ends, in
 * elfutils 0.188+, with the debuginfod client: a dlopen of libdebuginfod
 * and libcurl (a few ms on every run, and a dlopen from the writer thread
 * could wait for the loader's lock) and, when DEBUGINFOD_URLS is set, a
 * download behind the user's back. This lookup does what gdb and elfutils
 * do locally and nothing else:
 *   1. by build id: /usr/lib/debug/.build-id/<2 hex>/<rest>.debug, taken
 *      only when its own build id note is the same;
 *   2. by .gnu_debuglink: <dir>/<link>, <dir>/.debug/<link>,
 *      /usr/lib/debug/<dir>/<link> (<dir>: the file's directory), taken only
 *      when its build id is the module's (when the module has one) and the
 *      link's CRC (when not 0) matches, never the file itself;
 *   3. a .dwz alternate file (libdwfl asks for it the same way, with the
 *      .gnu_debugaltlink name and CRC 0): by its build id as in 1, else the
 *      name itself when absolute, else <dir>/<name> and
 *      /usr/lib/debug/.dwz/<basename>; taken only when its build id is the
 *      one the link names. */
#ifndef TR_JOURNAL_DEBUG_FILES_H
#define TR_JOURNAL_DEBUG_FILES_H

#include <elfutils/libdwfl.h>

/* A find_debuginfo callback's work (libdwfl.h): returns a descriptor opened
 * O_RDONLY|O_CLOEXEC and sets *@debuginfo_file_name (malloc'ed, libdwfl
 * frees it) to the path opened, or returns -1 (nothing found). */
int tr_debug_file_find(Dwfl_Module *mod, const char *file_name, const char *debuglink_file,
                       GElf_Word debuglink_crc, char **debuginfo_file_name);

#endif
