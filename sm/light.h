/*
 * The light sweep: SwitchInfo of every switch and SMInfo of every other
 * SM, started by the sweeper (its light hook); a change asks for a heavy
 * sweep.
 */
#ifndef IBSMD_LIGHT_H
#define IBSMD_LIGHT_H

struct sm;

void light_start(struct sm *sm);
/* The scrub's figures into the status object o, as "scrub" (sm/write/scrub.h). */
struct json_t;
void scrub_to_ctl(const struct sm *sm, struct json_t *o);
/* A light sweep's SMInfo answer (the election's hook): why a heavy sweep
 * is needed, or NULL. */
void light_answer(struct sm *sm, const char *why);

#endif
