/* convert_read.c - being written. */
#include "convert_sink.h"
