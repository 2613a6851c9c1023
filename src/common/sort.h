/* sort.h - qsort for arrays that are usually in order already.
 *
 * The writer sorts records and items that a thread recorded in time order,
 * so most arrays it sorts are sorted: glibc's qsort (a merge sort) still
 * spends n log n comparisons on them. One pass finds out first. The result
 * is the one qsort gives where qsort is stable (glibc's, with memory): an
 * array in order, equal elements included, stays as it is. */
#ifndef TR_COMMON_SORT_H
#define TR_COMMON_SORT_H

#include <stddef.h>

/* qsort(@base, @n, @size, @cmp), unless @base is already in @cmp's order. */
void tr_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

#endif
