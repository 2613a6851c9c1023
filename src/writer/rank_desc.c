/* placeholder */
#include "writer/rank_desc.h"
