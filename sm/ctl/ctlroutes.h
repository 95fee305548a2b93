/*
 * The control-socket commands about LIDs and routes (sm/ctl/ctlroutes.c),
 * called from the command table of sm/ctl/ctlcmds.c with its handler shape:
 * a JSON object, or NULL with the reason in err.
 *
 *   lids          every end port holding a LID (and vLID): GUIDs, LID, LMC
 *   routes SWITCH one switch's LFT as the SM computed and wrote it; the
 *                 switch by node GUID, LID or node description
 *   verify        reads every switch's LinearFDBTop and LFT back with SMPs
 *                 and runs the route verifier on what the switches hold;
 *                 the reply is deferred (control_defer) until the reads
 *                 are in.  What was read goes into the device cache, so
 *                 the next heavy sweep rewrites an entry that differs.
 */
#ifndef IBSMD_CTLROUTES_H
#define IBSMD_CTLROUTES_H

#include <stddef.h>

#include <jansson.h>

struct sm;

json_t *ctl_lids(struct sm *sm, const json_t *req, char *err, size_t errlen);
json_t *ctl_routes(struct sm *sm, const json_t *req, char *err, size_t errlen);
json_t *ctl_verify(struct sm *sm, const json_t *req, char *err, size_t errlen);

#endif
