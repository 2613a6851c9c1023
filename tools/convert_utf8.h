/* convert_utf8.h - UTF-8 validation for tracer convert.
 *
 * Names and string attributes in an OTF2 archive are whatever bytes the
 * traced program or another writer put there; JSON and protobuf strings
 * must be valid UTF-8. The reader (convert_defs.c) repairs every string of
 * the definitions once, so the sinks receive valid UTF-8 without a
 * per-event cost; json_sink.c checks again because it cannot know its
 * caller. Header-only: small static inline helpers of both. */
#ifndef TR_TOOLS_CONVERT_UTF8_H
#define TR_TOOLS_CONVERT_UTF8_H

#include <stdlib.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at @p (RFC 3629: no overlong forms,
 * no surrogates, nothing above U+10FFFF), 1 for ASCII other than NUL, 0
 * for NUL or a byte that starts no valid sequence. A NUL is never a
 * continuation byte, so this never reads past the end of a string. */
static inline int tc_utf8_len(const unsigned char *p)
{
#define TC_CONT(c) (((c) & 0xC0) == 0x80)
    unsigned c = p[0];
    if (c >= 0x01 && c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        return TC_CONT(p[1]) ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        unsigned lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
        return p[1] >= lo && p[1] <= hi && TC_CONT(p[2]) ? 3 : 0;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        unsigned lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
        return p[1] >= lo && p[1] <= hi && TC_CONT(p[2]) && TC_CONT(p[3]) ? 4 : 0;
    }
    return 0;
#undef TC_CONT
}

/* A copy of @s in which every byte that is not part of valid UTF-8 is
 * U+FFFD; NULL when out of memory. */
static inline char *tc_utf8_dup(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = 0, bad = 0;
    while (p[n]) {
        int k = tc_utf8_len(p + n);
        bad += k == 0;
        n += k ? (size_t)k : 1;
    }
    char *out = malloc(n + 2 * bad + 1);
    if (!out)
        return NULL;
    if (!bad)
        return memcpy(out, s, n + 1);
    char *o = out;
    for (size_t i = 0; i < n;) {
        int k = tc_utf8_len(p + i);
        if (k) {
            memcpy(o, p + i, (size_t)k);
            o += k;
            i += (size_t)k;
        } else {
            memcpy(o, "\xEF\xBF\xBD", 3);
            o += 3;
            i++;
        }
    }
    *o = '\0';
    return out;
}

/* Cuts @s (in a buffer that snprintf may have cut) back to its last whole
 * character, so a truncated name stays valid UTF-8. */
static inline void tc_utf8_trim(char *s)
{
    size_t n = strlen(s), i = 0, last = 0;
    while (i < n) {
        int k = tc_utf8_len((const unsigned char *)s + i);
        if (!k || i + (size_t)k > n)
            break;
        i += (size_t)k;
        last = i;
    }
    s[last] = '\0';
}

#endif
