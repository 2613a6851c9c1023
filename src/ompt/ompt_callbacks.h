/* ompt_callbacks.h - the OMPT callbacks tracer registers. Each one turns its
 * arguments into one fixed-size record and nothing else. */
#ifndef TR_OMPT_CALLBACKS_H
#define TR_OMPT_CALLBACKS_H

#include <omp-tools.h>

void tr_ompt_device_initialize(int device_num, const char *type, ompt_device_t *device,
                               ompt_function_lookup_t lookup, const char *documentation);
void tr_ompt_device_finalize(int device_num);
void tr_ompt_device_load(int device_num, const char *filename, int64_t offset_in_file,
                         void *vma_in_file, size_t bytes, void *host_addr, void *device_addr,
                         uint64_t module_id);
void tr_ompt_device_unload(int device_num, uint64_t module_id);

void tr_ompt_target_emi(ompt_target_t kind, ompt_scope_endpoint_t endpoint, int device_num,
                        ompt_data_t *task_data, ompt_data_t *target_task_data,
                        ompt_data_t *target_data, const void *codeptr_ra);
void tr_ompt_target_data_op_emi(ompt_scope_endpoint_t endpoint, ompt_data_t *target_task_data,
                                ompt_data_t *target_data, ompt_id_t *host_op_id,
                                ompt_target_data_op_t optype, void *src_addr, int src_device_num,
                                void *dest_addr, int dest_device_num, size_t bytes,
                                const void *codeptr_ra);
void tr_ompt_target_submit_emi(ompt_scope_endpoint_t endpoint, ompt_data_t *target_data,
                               ompt_id_t *host_op_id, unsigned int requested_num_teams);
void tr_ompt_target_map_emi(ompt_data_t *target_data, unsigned int nitems, void **host_addr,
                            void **device_addr, size_t *bytes, unsigned int *mapping_flags,
                            const void *codeptr_ra);

/* OpenMP 5.0 (non-EMI) variants, used where the runtime refuses the EMI ones. */
void tr_ompt_target(ompt_target_t kind, ompt_scope_endpoint_t endpoint, int device_num,
                    ompt_data_t *task_data, ompt_id_t target_id, const void *codeptr_ra);
void tr_ompt_target_data_op(ompt_id_t target_id, ompt_id_t host_op_id, ompt_target_data_op_t optype,
                            void *src_addr, int src_device_num, void *dest_addr, int dest_device_num,
                            size_t bytes, const void *codeptr_ra);
void tr_ompt_target_submit(ompt_id_t target_id, ompt_id_t host_op_id, unsigned int requested_num_teams);
void tr_ompt_target_map(ompt_id_t target_id, unsigned int nitems, void **host_addr, void **device_addr,
                        size_t *bytes, unsigned int *mapping_flags, const void *codeptr_ra);

#endif
