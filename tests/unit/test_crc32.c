/* tr_crc32 (src/journal/crc32.c, 8 bytes a step) against the check value of
 * CRC-32/IEEE ("123456789" -> 0xCBF43926) and against a byte-at-a-time
 * reference written here, on every length 0..300 at every alignment 0..7 of
 * random data, on 1 MiB at once, and chained (crc of a, then of b, equals
 * crc of a+b) at every split of 100 bytes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "journal/journal_format.h"

static uint32_t reference(uint32_t crc, const unsigned char *p, size_t len)
{
    crc = ~crc;
    while (len--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++)
            crc = crc & 1 ? 0xedb88320u ^ (crc >> 1) : crc >> 1;
    }
    return ~crc;
}

int main(void)
{
    int fail = 0;
    uint32_t check = tr_crc32(0, "123456789", 9);
    if (check != 0xcbf43926u) {
        printf("FAIL: crc of \"123456789\" is %08x, want cbf43926\n", check);
        fail = 1;
    }
    size_t big = 1 << 20;
    unsigned char *buf = malloc(big + 8);
    if (!buf)
        return 1;
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < big + 8; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        buf[i] = (unsigned char)x;
    }
    unsigned cases = 0;
    for (size_t align = 0; align < 8; align++)
        for (size_t len = 0; len <= 300; len++, cases++)
            if (tr_crc32(0, buf + align, len) != reference(0, buf + align, len)) {
                printf("FAIL: length %zu at alignment %zu: %08x, want %08x\n", len, align,
                       tr_crc32(0, buf + align, len), reference(0, buf + align, len));
                fail = 1;
            }
    if (tr_crc32(0, buf + 3, big) != reference(0, buf + 3, big)) {
        printf("FAIL: 1 MiB differs from the reference\n");
        fail = 1;
    }
    uint32_t whole = reference(0, buf, 100);
    for (size_t split = 0; split <= 100; split++, cases++)
        if (tr_crc32(tr_crc32(0, buf, split), buf + split, 100 - split) != whole) {
            printf("FAIL: chained at %zu differs\n", split);
            fail = 1;
        }
    free(buf);
    if (!fail)
        printf("crc32: %u cases and 1 MiB agree with the reference\n", cases + 1);
    return fail;
}
