#ifndef IBSMD_CONTROL_H
#define IBSMD_CONTROL_H

/*
 * The control socket's server, on the daemon's event loop (protocol:
 * ctlproto.h; the commands: ctlcmds.c).  ibsmctl's client and text
 * rendering are ctlclient.h and ctlrender.h.
 */

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>
#include <jansson.h>

#include "sm/base/ctlproto.h"

#define CONTROL_MAX_CLIENTS	128	/* then a newcomer replaces one
					   (control.c, eviction_victim) */
#define CONTROL_IDLE_MS		10000	/* without a complete request, or
					   with replies that cannot be
					   written: the client is dropped */

struct control;

/*
 * Called on the event loop for each well-formed request; returns a new
 * reference to a JSON object: the result (the server adds "ok":true unless
 * it has "ok":false already), or NULL with *err set for a rejected command.
 * req is the request object ("cmd" and the command's typed fields,
 * sm/base/ctlproto.h), borrowed.  The handler must not call
 * control_close().  A handler that cannot answer at once (it waits for
 * the fabric) calls control_defer() and returns NULL: its return value
 * is then ignored, and the reply goes out with control_reply().
 */
typedef json_t *(*control_handler)(void *ctx, const char *cmd, json_t *req,
    char *err, size_t errlen);

/*
 * Creates the parent directory if missing (0755), replaces a stale socket
 * file (nothing listening), refuses when another daemon listens on path,
 * binds with mode 0660.  Sets SIGPIPE to SIG_IGN if it is SIG_DFL (a client
 * that goes away must not kill the daemon).  NULL with *err on failure.
 */
struct control *control_open(struct event_base *base, const char *path,
    control_handler h, void *ctx, char *err, size_t errlen);
/* Closes clients, unlinks the socket (if it is still ours). */
void control_close(struct control *c);
size_t control_client_count(const struct control *c);
/* accept() failures so far (each paused the listener for a second). */
uint64_t control_accept_errors(const struct control *c);
/* The idle timeout for clients that connect from now on (tests). */
void control_set_idle_ms(struct control *c, int ms);
/*
 * Gives the socket to group gid (control.group; chown, mode 0660 kept);
 * gid -1 leaves it as it is.  -1 with *err when it cannot.
 */
int control_set_group(struct control *c, long long gid, char *err,
    size_t errlen);

/*
 * Inside a handler: the reply to the request being handled is deferred.
 * Returns its id (never 0), or 0 outside a handler.  The client's further
 * requests wait (one reply per request, in order).
 */
uint64_t control_defer(struct control *c);
/*
 * Sends deferred reply id: the result res (a JSON object, reference
 * taken; "ok":true added as for a handler's), or with res NULL the error
 * err.  A client that left is simply not answered.
 */
void control_reply(struct control *c, uint64_t id, json_t *res,
    const char *err);

/* A GUID as the replies write it: "0x" and 16 hex digits. */
json_t *control_guid_json(uint64_t guid);
/* Wall-clock seconds as ISO 8601 in UTC ("2026-11-24T06:39:21Z"); null for 0. */
json_t *control_time_json(uint64_t t);

#endif
