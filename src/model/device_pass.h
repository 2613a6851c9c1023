/* device_pass.h - the pass that finds what happened on the devices: the
 * host threads' streams that hold device records, read again through their
 * cursors and merged in time order (ties: lower stream first), each record
 * given to a tr_device_stream (device_stream.h).
 *
 * Memory: one cursor per such stream and what the device stream holds
 * open; nothing per record. Model layer: no OTF2. */
#ifndef TR_MODEL_DEVICE_PASS_H
#define TR_MODEL_DEVICE_PASS_H

#include "core/record.h"
#include "model/device_stream.h"
#include "model/model.h"

/* Whether the pass reads records like @r (the model's scan marks the
 * streams that hold one). */
int tr_device_pass_reads(const tr_record *r);

/* Runs the pass over m's journal (after the scan and the devices are
 * settled), items and metric points to @sink; sets each device's lane
 * count. Returns 0, or -1 (out of memory, the journal unreadable, the sink
 * stopped it). */
int tr_device_pass(tr_model *m, const tr_model_labels *labels, tr_dev_sink sink);

#endif
