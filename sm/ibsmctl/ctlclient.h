/*
 * ibsmctl's client for the control socket (protocol: ctlproto.h).
 * Blocking, no event loop; for ibsmctl and tests.  The daemon's server is
 * control.h.
 */
#ifndef IBSMD_CTLCLIENT_H
#define IBSMD_CTLCLIENT_H

#include <stddef.h>

#include <jansson.h>

#include "sm/base/ctlproto.h"

/*
 * Sends one request (an object: "cmd" and its fields, ctlproto.h) and
 * waits up to timeout_ms for the reply line.
 * Returns the reply object ("ok" true or false), or NULL with *err set
 * when the daemon could not be reached or did not answer properly.
 */
json_t *control_call(const char *path, const json_t *request, int timeout_ms,
    char *err, size_t errlen);

#endif
