/*
 * The LFT writes of a change, in waves (reconfig/order.h): from what the
 * device cache says the switches hold to the tables wanted, so that no
 * state the switches pass through forwards a LID in a loop, and, where
 * the check can tell, none closes a channel-dependency cycle (else the
 * changed entries are drained first).  Every planner that writes LFT
 * blocks takes them from here, but a VM's writes: the same order on the
 * LIDs they change (reconfig/migorder.h), made a plan by
 * sm/write/migcount.c.
 */
#ifndef IBSMD_PLAN_LFT_H
#define IBSMD_PLAN_LFT_H

#include <stdint.h>

#include "reconfig/order.h"
#include "sm/base/fabric.h"
#include "sm/write/devcache.h"
#include "sm/write/plan.h"

/*
 * Plans the LFT blocks of every switch of f whose tables t change (rows
 * of t, blocks up to t->max_lid), from wave `first` on; t is set as the
 * plan's tables.  unordered: every block in wave `first`, the writer
 * before the order (the tests compare the two; st left zero).  0, or -1
 * on ENOMEM (or more waves than a plan has).
 */
int plan_lft_ordered(struct plan *p, int first, const struct fabric *f,
		     const struct devcache *c, const struct lft_tables *t,
		     int unordered, struct lft_order_stats *st);
/*
 * The same from tables the switches are known to hold (from: the same
 * rows and switches as to; entries past from->max_lid not known), into
 * p from wave first, to set as the plan's tables.  0, or -1.
 */
int plan_lft_change(struct plan *p, int first, const struct fabric *f,
		    const struct lft_tables *from, const struct lft_tables *to,
		    struct lft_order_stats *st);
struct json_t;
/* For ibsmctl status: {"waves", "blocks", "entries", "split", "drained_lids", "how", "reason", "plan_ms", ...}. */
struct json_t *lft_order_to_ctl(const struct lft_order_stats *st);
/* One line for the log: how the change was ordered, and why. */
void lft_order_describe(const struct lft_order_stats *st, char *buf, size_t len);

#endif
