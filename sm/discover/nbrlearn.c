#include "sm/discover/nbrlearn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/dispatch.h"
#include "mad/sa.h"
#include "traps/host/saclient.h"

#define LINK_REC_SIZE 8	/* LinkRecord (IBA vol. 1 15.2.5.13) */

struct nbr_learn {
	struct mad_transport t;		/* the SM's, its SM LID the master's */
	struct saclient *c;
	struct nbr_map *m;
	struct nbr_lid *lids;
	size_t n_lids;
	nbr_learn_done_fn done;
	void *arg;
	int finished;
};

static void finish(struct nbr_learn *l, int rc, int links, const char *why)
{
	l->finished = 1;
	l->done(l->arg, rc, links, why);
}

/* A GetTable's end: 1 if it brought records; else done was told (or cancelled). */
static int answered(struct nbr_learn *l, const char *what, int status)
{
	char why[96];
	if (!status)
		return 1;
	if (status == -ECANCELED)
		return 0;
	if (status == -ETIMEDOUT)
		snprintf(why, sizeof(why), "no answer to the %s GetTable", what);
	else
		snprintf(why, sizeof(why), "the %s GetTable failed (status %d)", what, status);
	finish(l, -1, 0, why);
	return 0;
}

static void on_links(void *arg, int status, const uint8_t *recs, size_t n, size_t stride,
		     const uint8_t *hdr)
{
	struct nbr_learn *l = arg;
	if (!answered(l, "LinkRecord", status))
		return;
	int c = nbr_from_link_records(l->m, l->lids, l->n_lids, recs, n, stride);
	if (c < 0)
		finish(l, -1, 0, "out of memory");
	else
		finish(l, 0, c, NULL);
}

static void on_nodes(void *arg, int status, const uint8_t *recs, size_t n, size_t stride,
		     const uint8_t *hdr)
{
	struct nbr_learn *l = arg;
	if (!answered(l, "NodeRecord", status))
		return;
	if (n && !(l->lids = malloc(n * sizeof(*l->lids)))) {
		finish(l, -1, 0, "out of memory");
		return;
	}
	l->n_lids = nbr_lids_from_records(recs, n, stride, l->lids);
	static const uint8_t any[LINK_REC_SIZE];	/* component mask 0: every record */
	if (saclient_query(l->c, SA_METHOD_GET_TABLE, SA_ATTR_LINK_REC, 0, 0, any, sizeof(any),
			   on_links, l) < 0)
		finish(l, -1, 0, "cannot send the LinkRecord GetTable");
}

struct nbr_learn *nbr_learn_start(struct event_base *base, const struct mad_transport *t,
				  uint32_t master_lid, uint64_t sa_key, struct nbr_map *m,
				  nbr_learn_done_fn done, void *arg)
{
	struct nbr_learn *l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->t = *t;
	l->t.sm_lid = master_lid;
	l->m = m;
	l->done = done;
	l->arg = arg;
	struct saclient_params p = { .retries = SACLIENT_DEFAULT_RETRIES, .sa_key = sa_key };
	static const uint8_t any[SA_SIZE_NODE_REC];
	if (!(l->c = saclient_new(base, &l->t, &p)) ||
	    saclient_query(l->c, SA_METHOD_GET_TABLE, SA_ATTR_NODE_REC, 0, 0, any, sizeof(any),
			   on_nodes, l) < 0) {
		nbr_learn_free(l);
		return NULL;
	}
	return l;
}

int nbr_learn_input(struct nbr_learn *l, const uint8_t *mad, size_t len,
		    const struct mad_addr *from, int status)
{
	if (!l || l->finished || len < MAD_HDR_SIZE || mad[1] != SA_CLASS ||
	    !(mad_method(mad) & MAD_METHOD_RESPONSE))
		return 0;
	saclient_recv(l->c, mad, len, from, status);
	return 1;
}

void nbr_learn_free(struct nbr_learn *l)
{
	if (!l)
		return;
	l->finished = 1;	/* the queries cancelled call nothing */
	saclient_free(l->c);
	free(l->lids);
	free(l);
}
