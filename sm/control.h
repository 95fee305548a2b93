#ifndef IBSMD_CONTROL_H
#define IBSMD_CONTROL_H

/*
 * The control socket: newline-delimited JSON over a UNIX stream socket.
 *
 *   request  {"cmd":"sweep","args":["--heavy"]}\n      ("args" optional)
 *   reply    {"ok":true, ...result fields...}\n
 *            {"ok":false,"error":"reason"}\n
 *
 * One reply per request, in order; the connection stays open for more.
 */

#include <stddef.h>
#include <stdio.h>

#include <event2/event.h>
#include <jansson.h>

#define CONTROL_DEFAULT_SOCKET	"/run/ibsmd/ibsmd.sock"
#define CONTROL_MAX_LINE	65536	/* longest request line, without '\n' */
#define CONTROL_MAX_CLIENTS	128

struct control;

/*
 * Called on the event loop for each well-formed request; returns a new
 * reference to a JSON object: the result (the server adds "ok":true unless
 * it has "ok":false already), or NULL with *err set for a rejected command.
 * "args" is an array of strings, borrowed.  The handler must not call
 * control_close().
 */
typedef json_t *(*control_handler)(void *ctx, const char *cmd, json_t *args,
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

/*
 * Client side (blocking; for ibsmctl and tests).  Sends one request and
 * waits up to timeout_ms for the reply line.  Returns the reply object
 * ("ok" true or false), or NULL with *err set when the daemon could not be
 * reached or did not answer properly.
 */
json_t *control_call(const char *path, const char *cmd,
    const char *const *args, size_t nargs, int timeout_ms,
    char *err, size_t errlen);

/*
 * Human-readable rendering of a successful reply: a top-level "text"
 * string is printed verbatim and alone; otherwise every key but "ok" as
 * "key: value" lines in insertion order, nested objects indented two
 * spaces, arrays of objects as blocks separated by blank lines, arrays of
 * scalars joined with ", ".
 */
void control_print_text(FILE *fp, const json_t *reply);

#endif
