/* mpit_app_tool.c - an application that is itself an MPI_T event tool, for
 * test_mpit_coexist.py: tracer's MPI_T session must not disturb the
 * application's, and the application's MPI_T_finalize must not end tracer's.
 *
 * Run with LD_PRELOAD=<sanitizer runtimes>:libtracer.so:libmpit_double.so
 * (the TEST DOUBLE of mpit_double.h provides the events; MPICH 4.0.2 raises
 * none), and without libtracer.so for comparison. Sequence:
 *   MPI_T_init_thread (before MPI_Init, so before tracer's own MPI_T start
 *   in its MPI_Init wrapper), discover the event types with
 *   MPI_T_event_get_num / _get_info, find "ompi.mpi.communicator_created",
 *   allocate a handle and register a callback that counts deliveries;
 *   MPI_Init; 3 x (MPI_Comm_dup of MPI_COMM_WORLD, MPI_Comm_free);
 *   free the handle, MPI_T_finalize (BEFORE MPI_Finalize: MPI_T stays
 *   initialized only through tracer's own MPI_T_init_thread);
 *   1 x (MPI_Comm_dup, MPI_Comm_free): the application's callback no longer
 *   fires, tracer's registration must still get the event;
 *   MPI_Finalize.
 * Every MPI_T return code and the callback count go to stdout, which is the
 * same with and without tracer. Exit status 0 when every call returned
 * MPI_SUCCESS and the count is 3, 1 otherwise. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define TYPE_NAME "ompi.mpi.communicator_created"
#define DUPS 3

static int delivered;
static int wrong_size;
static int free_cb_calls;
static int world_size = -1;

static void created_cb(MPI_T_event_instance inst, MPI_T_event_registration reg, MPI_T_cb_safety safety, void *data)
{
    (void)reg, (void)safety, (void)data;
    /* element 0 is the new communicator's size: a dup of MPI_COMM_WORLD */
    int size = -1;
    if (MPI_T_event_read(inst, 0, &size) != MPI_SUCCESS || size != world_size)
        wrong_size++;
    delivered++;
}

static void free_cb(MPI_T_event_registration reg, MPI_T_cb_safety safety, void *data)
{
    (void)reg, (void)safety, (void)data;
    free_cb_calls++;
}

static void dup_free(void)
{
    MPI_Comm c = MPI_COMM_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_free(&c);
}

int main(int argc, char **argv)
{
    int bad = 0, provided = -1;
    int rc = MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    printf("mpit_app_tool: MPI_T_init_thread rc=%d\n", rc);
    bad |= rc != MPI_SUCCESS;

    int ntypes = -1, index = -1;
    rc = MPI_T_event_get_num(&ntypes);
    bad |= rc != MPI_SUCCESS;
    for (int i = 0; i < ntypes; i++) {
        char name[256];
        int name_len = sizeof name, verbosity = 0, nelem = 0, bind = -1;
        rc = MPI_T_event_get_info(i, name, &name_len, &verbosity, NULL, NULL, &nelem, NULL, NULL, NULL, NULL, &bind);
        if (rc != MPI_SUCCESS) {
            printf("mpit_app_tool: MPI_T_event_get_info(%d) rc=%d\n", i, rc);
            bad = 1;
        } else if (!strcmp(name, TYPE_NAME)) {
            index = i;
        }
    }
    printf("mpit_app_tool: MPI_T_event_get_num rc=%d types=%d %s found=%d\n", rc, ntypes, TYPE_NAME, index >= 0);
    if (index < 0)
        return 1;

    MPI_T_event_registration handle = NULL;
    rc = MPI_T_event_handle_alloc(index, NULL, MPI_INFO_NULL, &handle);
    printf("mpit_app_tool: MPI_T_event_handle_alloc rc=%d\n", rc);
    bad |= rc != MPI_SUCCESS;
    rc = MPI_T_event_register_callback(handle, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, NULL, created_cb);
    printf("mpit_app_tool: MPI_T_event_register_callback rc=%d\n", rc);
    bad |= rc != MPI_SUCCESS;

    rc = MPI_Init(&argc, &argv);
    bad |= rc != MPI_SUCCESS;
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    for (int i = 0; i < DUPS; i++)
        dup_free();
    printf("mpit_app_tool: after %d dups: callbacks=%d\n", DUPS, delivered);

    rc = MPI_T_event_handle_free(handle, NULL, free_cb);
    printf("mpit_app_tool: MPI_T_event_handle_free rc=%d free_cb=%d\n", rc, free_cb_calls);
    bad |= rc != MPI_SUCCESS;
    rc = MPI_T_finalize();
    printf("mpit_app_tool: MPI_T_finalize rc=%d\n", rc);
    bad |= rc != MPI_SUCCESS;

    dup_free(); /* after the application's MPI_T_finalize */

    rc = MPI_Finalize();
    bad |= rc != MPI_SUCCESS;
    printf("mpit_app_tool: callbacks=%d wrong_size=%d\n", delivered, wrong_size);
    return bad || delivered != DUPS || wrong_size ? 1 : 0;
}
