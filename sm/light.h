/*
 * The light sweep: SwitchInfo of every switch and SMInfo of every other
 * SM, started by the sweeper (its light hook); a change asks for a heavy
 * sweep.
 */
#ifndef IBSMD_LIGHT_H
#define IBSMD_LIGHT_H

struct sm;

void light_start(struct sm *sm);
/* A light sweep's SMInfo answer (the election's hook): why a heavy sweep
 * is needed, or NULL. */
void light_answer(struct sm *sm, const char *why);

#endif
