/* ompt_host.h - the OMPT host callbacks of TRACER_OMPT's host_states class:
 * what each OpenMP thread of the host does (threads, parallel regions,
 * implicit tasks, work constructs, barriers and other sync regions, mutexes,
 * reductions, explicit tasks). Each one writes one TR_REC_OMP record
 * (record.h says which fields) and nothing else; ompt_start.c registers them
 * only when host_states is selected, so without it they cost nothing. */
#ifndef TR_OMPT_HOST_H
#define TR_OMPT_HOST_H

#include <omp-tools.h>

/* Remembers where the OpenMP runtime's code lies, from @inside, an address
 * in it (its lookup function): a parallel region begun from there is the
 * runtime's own team, not the program's. Call before registering. */
void tr_ompt_host_set_runtime(const void *inside);

void tr_ompt_host_thread_begin(ompt_thread_t thread_type, ompt_data_t *thread_data);
void tr_ompt_host_thread_end(ompt_data_t *thread_data);
void tr_ompt_host_parallel_begin(ompt_data_t *encountering_task_data, const ompt_frame_t *encountering_task_frame,
                                 ompt_data_t *parallel_data, unsigned int requested_parallelism, int flags,
                                 const void *codeptr_ra);
void tr_ompt_host_parallel_end(ompt_data_t *parallel_data, ompt_data_t *encountering_task_data, int flags,
                               const void *codeptr_ra);
void tr_ompt_host_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t *parallel_data,
                                ompt_data_t *task_data, unsigned int actual_parallelism, unsigned int index,
                                int flags);
void tr_ompt_host_work(ompt_work_t work_type, ompt_scope_endpoint_t endpoint, ompt_data_t *parallel_data,
                       ompt_data_t *task_data, uint64_t count, const void *codeptr_ra);
void tr_ompt_host_masked(ompt_scope_endpoint_t endpoint, ompt_data_t *parallel_data, ompt_data_t *task_data,
                         const void *codeptr_ra);
void tr_ompt_host_sync_region(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint,
                              ompt_data_t *parallel_data, ompt_data_t *task_data, const void *codeptr_ra);
void tr_ompt_host_sync_region_wait(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint,
                                   ompt_data_t *parallel_data, ompt_data_t *task_data, const void *codeptr_ra);
void tr_ompt_host_reduction(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint, ompt_data_t *parallel_data,
                            ompt_data_t *task_data, const void *codeptr_ra);
void tr_ompt_host_mutex_acquire(ompt_mutex_t kind, unsigned int hint, unsigned int impl, ompt_wait_id_t wait_id,
                                const void *codeptr_ra);
void tr_ompt_host_mutex_acquired(ompt_mutex_t kind, ompt_wait_id_t wait_id, const void *codeptr_ra);
void tr_ompt_host_mutex_released(ompt_mutex_t kind, ompt_wait_id_t wait_id, const void *codeptr_ra);
void tr_ompt_host_nest_lock(ompt_scope_endpoint_t endpoint, ompt_wait_id_t wait_id, const void *codeptr_ra);
void tr_ompt_host_task_create(ompt_data_t *encountering_task_data, const ompt_frame_t *encountering_task_frame,
                              ompt_data_t *new_task_data, int flags, int has_dependences, const void *codeptr_ra);
void tr_ompt_host_task_schedule(ompt_data_t *prior_task_data, ompt_task_status_t prior_task_status,
                                ompt_data_t *next_task_data);

#endif
