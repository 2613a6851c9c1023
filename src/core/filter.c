#include "core/filter.h"

#include <string.h>

tr_filter tr_flt = {.dev_all = 1, .ompt = ~0u};

void tr_filter_freeze(const tr_config *cfg)
{
    tr_filter f;
    memset(&f, 0, sizeof f);
    f.dev_all = cfg->devices.all;
    for (int d = 0; d < 256; d++)
        if (tr_ranges_contains(&cfg->devices, d))
            f.dev_mask[d >> 6] |= 1ull << (d & 63);
    f.min_bytes = cfg->min_bytes;
    f.hash_max = cfg->hash_max;
    f.ompt = cfg->ompt;
    tr_flt = f;
}

int tr_filter_device_slow(int device)
{
    if (device < 0)
        return 0;
    return tr_ranges_contains(&tr_cfg.devices, device);
}
