/* placeholder */
#include "writer/defs_codec.h"
