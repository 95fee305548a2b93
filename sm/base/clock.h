/*
 * The monotonic clock and the loop's timers, for everyone: milliseconds
 * and microseconds since an arbitrary start (CLOCK_MONOTONIC), and a
 * libevent timer armed in milliseconds.
 */
#ifndef IBSMD_CLOCK_H
#define IBSMD_CLOCK_H

#include <stdint.h>

struct event;

uint64_t clock_ms(void);
uint64_t clock_us(void);
/*
 * Milliseconds to the nanosecond, as a double: the multicast runs'
 * coalescing compares deadlines a few ms apart with it.  With the clock
 * truncated to the microsecond instead, its test (test_mcast_emu,
 * runs_coalesced_and_capped) saw a run at nearly every change of a
 * stream; why is not understood yet (DEVELOPERS.md).
 */
double clock_ms_f(void);
/* Arms (or re-arms) the timer ev to fire in ms milliseconds. */
void timer_in_ms(struct event *ev, uint64_t ms);

#endif
