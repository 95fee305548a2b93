#include "sm/subnet.h"

#include <stdio.h>
#include <string.h>

#include "sm/model/state.h"

int subnet_init(struct subnet *s, const char *state_dir, char *err,
		size_t errlen)
{
	memset(s, 0, sizeof(*s));
	linkwatch_init(&s->links);
	s->cache = devcache_new();
	if (!s->cache) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return state_load_guid2lid(state_dir, &s->guid2lid, err, errlen);
}

void subnet_free(struct subnet *s)
{
	discovery_free(s->model);
	lft_tables_free(&s->lft);
	devcache_free(s->cache);
	guid_map_free(&s->guid2lid);
	linkwatch_free(&s->links);
	lanes_free(&s->lanes);
	memset(s, 0, sizeof(*s));
}

struct discovery *subnet_take(struct subnet *s, struct discovery *d)
{
	struct discovery *old = s->model;
	s->model = d;
	return old;
}

void subnet_forget_devices(struct subnet *s)
{
	devcache_clear(s->cache);
	lft_tables_free(&s->lft);
}
