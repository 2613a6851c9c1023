/* demangle.h - the names users wrote for the symbols a trace shows.
 *
 * Without -g, a C++ function is known only by its linkage name
 * (_ZN9OMPStreamIdE3addEv); regions and kernels are named after the
 * demangled form (OMPStream<double>::add()), and the raw symbol stays in
 * the region's description for tools that match it. The demangler is
 * libstdc++'s __cxa_demangle (its C ABI), the one GCC and Clang's own
 * tools use: already loaded in a C++ program, opened only once a mangled
 * name needs it otherwise. Without libstdc++ names stay as they are. */
#ifndef TR_WRITER_DEMANGLE_H
#define TR_WRITER_DEMANGLE_H

#include <stdbool.h>
#include <stddef.h>

/* The first @len bytes of @symbol as the user wrote them, into @out
 * (@outlen bytes, cut at that): demangled when it is an Itanium C++
 * linkage name ("_Z..."), else as it is. Returns whether it was demangled.
 * Thread-safe. */
bool tr_demangle(const char *symbol, size_t len, char *out, size_t outlen);

#endif
