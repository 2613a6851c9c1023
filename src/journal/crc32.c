/* crc32.c - CRC-32 (IEEE), table-driven, 8 bytes a step ("slicing by 8":
 * the consumer seals every chunk and the reader checks it, and one table
 * lookup per byte was 3% of a journal's conversion); pure, so
 * async-signal-safe. */
#include <string.h>

#include "journal/journal_format.h"

static uint32_t table[8][256];
/* 0: not built, 1: being built, 2: ready. Built once: the constructor
 * below may run after another of libtracer.so's constructors started the
 * session, whose journal thread already uses the table (TSan: build_table
 * rewrote it under that thread's reads). */
static int table_state;

static void build_table(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
        table[0][i] = c;
    }
    /* table[k][i]: the CRC of byte i followed by k zero bytes */
    for (uint32_t i = 0; i < 256; i++)
        for (int k = 1; k < 8; k++)
            table[k][i] = table[0][table[k - 1][i] & 0xff] ^ (table[k - 1][i] >> 8);
}

static void ensure_table(void)
{
    if (__atomic_load_n(&table_state, __ATOMIC_ACQUIRE) == 2)
        return;
    int none = 0;
    if (__atomic_compare_exchange_n(&table_state, &none, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        build_table();
        __atomic_store_n(&table_state, 2, __ATOMIC_RELEASE);
        return;
    }
    while (__atomic_load_n(&table_state, __ATOMIC_ACQUIRE) != 2)
        ; /* another thread builds it: microseconds, once, at load */
}

/* The table is built at library load, before any signal can need it. */
__attribute__((constructor)) static void crc_init(void) { ensure_table(); }

uint32_t tr_crc32(uint32_t crc, const void *data, uint64_t len)
{
    ensure_table();
    const unsigned char *p = data;
    crc = ~crc;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (; len >= 8; len -= 8, p += 8) {
        uint32_t lo, hi;
        memcpy(&lo, p, 4);
        memcpy(&hi, p + 4, 4);
        lo ^= crc;
        crc = table[7][lo & 0xff] ^ table[6][(lo >> 8) & 0xff] ^ table[5][(lo >> 16) & 0xff] ^ table[4][lo >> 24] ^
              table[3][hi & 0xff] ^ table[2][(hi >> 8) & 0xff] ^ table[1][(hi >> 16) & 0xff] ^ table[0][hi >> 24];
    }
#endif
    while (len--)
        crc = table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return ~crc;
}

void tr_frame_seal(tr_frame_header *h, uint16_t type, const void *payload, uint64_t payload_bytes)
{
    h->magic = TR_FRAME_MAGIC;
    h->version = TR_FRAME_VERSION;
    h->type = type;
    h->payload_bytes = payload_bytes;
    h->payload_crc = tr_crc32(0, payload, payload_bytes);
    h->header_crc = 0;
    h->header_crc = tr_crc32(0, h, sizeof *h);
}
