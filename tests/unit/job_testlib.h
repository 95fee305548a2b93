/*
 * Helpers shared by the job routing's unit tests: XGFT(3;2,2,4;1,2,2)
 * (routing_testlib.h's xgft3) with its D-mod-K tables and the job tree
 * over them.  Static inline, as routing_testlib.h.
 */
#ifndef JOB_TESTLIB_H
#define JOB_TESTLIB_H

#include "routing_testlib.h"

#include "routing/jobs/jobroute.h"

extern const struct routing_engine dmodk_engine;

#define ONE JOB_LOAD_ONE

struct world {
	struct fabric f;
	struct lft_tables t;
	struct tb *b;
	struct job_tree *tr;
};

static inline void open_xgft(struct world *w)
{
	char err[256] = "";
	w->b = xgft3();
	tb_build(&w->f, w->b, NULL, 0);
	tb_route(&dmodk_engine, &w->f, &w->t);
	w->tr = job_tree_new(&w->f, &w->t, err, sizeof(err));
	ck_assert_msg(w->tr != NULL, "%s", err);
}

static inline void close_world(struct world *w)
{
	job_tree_free(w->tr);
	free_all(&w->f, &w->t, w->b);
}

#endif
