/* otf2_mpi.c - see otf2_mpi.h (being written). */
#include "job/otf2_mpi.h"
