/* protobuf_writer.c - being written. */
#include "convert_sink.h"
