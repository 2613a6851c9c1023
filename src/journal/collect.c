#include "journal/collect.h"

#include <stdlib.h>
#include <string.h>

void tr_collected_free(tr_collected *c)
{
    for (size_t i = 0; i < c->nstreams; i++)
        free(c->streams[i].rec);
    free(c->streams);
    memset(c, 0, sizeof *c);
}
