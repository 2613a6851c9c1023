/* ompt_registration.h - what the runtime answered to each ompt_set_callback
 * (ompt_set_never .. ompt_set_always), kept for `tracer info` and the trace. */
#ifndef TR_OMPT_REGISTRATION_H
#define TR_OMPT_REGISTRATION_H

#define TR_OMPT_MAX_REGISTRATIONS 48

typedef struct tr_ompt_registration {
    const char *callback;
    int result; /* ompt_set_result_t */
} tr_ompt_registration;

const tr_ompt_registration *tr_ompt_registrations(int *count);

#endif
