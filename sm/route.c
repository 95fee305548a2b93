#include "route.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "log.h"

static uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

int sm_route(const struct config *c, const char *override,
	     const struct fabric *f, struct lft_tables *t, const char **used,
	     uint64_t *ms)
{
	struct config tmp;
	const struct config *use = c;
	char err[256];
	if (override) {
		tmp = *c;
		if (config_set_engines(&tmp, override, err, sizeof(err)) < 0) {
			log_err("routing: %s", err);
			return -1;
		}
		use = &tmp;
	}
	struct route_opts o = { .n_roots = use->n_roots, .roots = use->roots };
	for (int i = 0; i < use->n_engines; i++) {
		const struct routing_engine *e = routing_engine_find(use->engines[i]);
		if (!e) {
			log_warn("routing: engine '%s' is not available (have: %s)%s",
				 use->engines[i], routing_engine_names(),
				 i + 1 < use->n_engines ? "; trying the next" : "");
			continue;
		}
		lft_tables_free(t);
		if (lft_tables_alloc(t, f) < 0) {
			log_err("routing: out of memory");
			return -1;
		}
		uint64_t t0 = now_us();
		err[0] = '\0';
		int rc = e->route(f, &o, t, err, sizeof(err));
		*ms = (now_us() - t0 + 500) / 1000;
		if (rc == 0) {
			*used = e->name;
			return 0;
		}
		log_warn("routing: %s failed: %s%s", e->name, err,
			 i + 1 < use->n_engines ? "; trying the next" : "");
	}
	log_err("routing: no engine could route the fabric");
	return -1;
}
