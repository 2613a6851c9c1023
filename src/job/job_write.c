/* placeholder */
#include "job/job_tree.h"
