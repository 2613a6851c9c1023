/* job_tree.c - see job_tree.h (being written). */
#include "job/job_tree.h"
